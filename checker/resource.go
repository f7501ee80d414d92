package checker

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// The resource model: each key's value is a counter, initially 0, and
// each section one operation over [invoke, completion]: an ok read r and
// wrote r+1 (legal only in state r); a fail wrote nothing (legal in any
// state); an info or unfinished one (Return math.MaxInt64) may have
// written: the state stays or becomes state+1. An info's Return is its
// Time: the store is in-process, so nothing lands after the client gave up.
//
// That nondeterministic model's power set is always an interval [lo, hi],
// so it is written directly as a deterministic one; the tests check it
// against the textbook form (resourceNondeterministic).

// sectionInput is one section as the model sees it.
type sectionInput struct {
	kind  sectionKind
	read  int64
	fence int64
}

// counterRange is the set of values the counter may hold: [lo, hi].
type counterRange struct {
	lo, hi int64
}

func resourceStep(state, input, _ any) (bool, any) {
	st, in := state.(counterRange), input.(sectionInput)
	switch in.kind {
	case sectionOK:
		if in.read < st.lo || in.read > st.hi {
			return false, st
		}
		return true, counterRange{in.read + 1, in.read + 1}
	case sectionFail:
		return true, st
	default:
		return true, counterRange{st.lo, st.hi + 1}
	}
}

func describeSection(input any) string {
	in := input.(sectionInput)
	var s string
	switch in.kind {
	case sectionOK:
		s = fmt.Sprintf("read %d, wrote %d", in.read, in.read+1)
	case sectionFail:
		s = "wrote nothing (fail)"
	default:
		s = "unknown: wrote or not"
	}
	if in.fence != 0 {
		s += fmt.Sprintf(" [fence %d]", in.fence)
	}
	return s
}

// resourceModel returns the resource model starting from the value init.
func resourceModel(init int64) porcupine.Model {
	return porcupine.Model{
		Init:  func() any { return counterRange{init, init} },
		Step:  resourceStep,
		Equal: func(a, b any) bool { return a.(counterRange) == b.(counterRange) },
		Hash: func(s any) uint64 {
			r := s.(counterRange)
			return uint64(r.lo)*0x9e3779b97f4a7c15 ^ uint64(r.hi)
		},
		DescribeOperation: func(input, _ any) string { return describeSection(input) },
		DescribeState: func(state any) string {
			r := state.(counterRange)
			if r.lo == r.hi {
				return fmt.Sprintf("%d", r.lo)
			}
			return fmt.Sprintf("%d..%d (unknown writes)", r.lo, r.hi)
		},
	}
}

// resourceOps turns a key's sections into porcupine operations.
func resourceOps(secs []section) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(secs))
	for i, s := range secs {
		ops[i] = porcupine.Operation{
			ClientId: s.process,
			Input:    sectionInput{kind: s.kind, read: s.read, fence: s.fence},
			Call:     s.call,
			Return:   s.ret,
		}
	}
	return ops
}

// resourceChunk is a range [lo, hi) of a key's sections to be checked as
// one partition starting from the value init.
type resourceChunk struct {
	lo, hi int
	init   int64
}

// resourceChunks cuts a key's sections (sorted by call) into chunks of at
// least size sections, exactly: only at a gap (the next section is
// invoked strictly after every earlier one returned) at which the value
// is pinned whatever the linearization. If the sections since the
// previous gap have no unknown outcome and some ok, their oks read s, …,
// s+m-1 and the value is their largest read + 1; if all failed, it is
// the value at the previous gap; after an unknown outcome it is not
// known. An unfinished section leaves no gap after it.
func resourceChunks(secs []section, size int) []resourceChunk {
	if len(secs) == 0 {
		return nil
	}
	var chunks []resourceChunk
	lo, init := 0, int64(0)
	known, value := true, int64(0) // the value at the last gap
	var maxRet int64
	segUnknown, segOK, segMaxRead := false, false, int64(0)
	for i, s := range secs {
		if i > 0 && s.call > maxRet {
			// A gap before i: the segment since the previous gap ended.
			switch {
			case segUnknown:
				known = false
			case segOK:
				known, value = true, segMaxRead+1
			}
			if known && i-lo >= size {
				chunks = append(chunks, resourceChunk{lo: lo, hi: i, init: init})
				lo, init = i, value
			}
			segUnknown, segOK, segMaxRead = false, false, 0
		}
		maxRet = max(maxRet, s.ret)
		switch s.kind {
		case sectionUnknown:
			segUnknown = true
		case sectionOK:
			if !segOK || s.read > segMaxRead {
				segMaxRead = s.read
			}
			segOK = true
		}
	}
	return append(chunks, resourceChunk{lo: lo, hi: len(secs), init: init})
}

// checkResource runs the resource model on every key with sections.
func checkResource(d *scanned, keys []string, timeout time.Duration) map[string]porcupine.CheckResult {
	var jobs []job
	for _, k := range keys {
		jobs = append(jobs, resourceParts(k, d.keys[k].sections, d.last)...)
	}
	return runJobs(jobs, timeout)
}

// firstLostUpdate returns the completion of the second of the first two
// ok sections of secs that read the same value. The counter only grows,
// so no valid history has such a pair; a lost update in the harness's
// store always makes one.
func firstLostUpdate(secs []section) (int64, bool) {
	lu, ok := lostUpdate("", secs)
	return lu.At, ok
}
