package checker

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The lease model: each hold is two instantaneous operations, "lock" at
// its Start and "unlock" at its End. The state is the holder: lock is
// legal only when the key is free, unlock only by the hold that holds it.
//
// Porcupine orders calls before returns at equal times, so two point
// operations at one instant may be linearized either way: touching holds
// (A ends at t, B starts at t) linearize as unlock-A, lock-B, while B
// starting strictly before A ends is illegal, exactly as the sweep says.

// leaseInput is one lock or unlock of the key's hold number hold (so an
// unlock releases only its own hold, not another of its process).
type leaseInput struct {
	unlock bool
	hold   int
}

// leaseState is the holder: -1 when free, else the index of the hold.
type leaseState struct {
	hold int
}

var leaseFree = leaseState{hold: -1}

func leaseStep(state, input, _ any) (bool, any) {
	st, in := state.(leaseState), input.(leaseInput)
	if in.unlock {
		if st.hold != in.hold {
			return false, st
		}
		return true, leaseFree
	}
	if st.hold != -1 {
		return false, st
	}
	return true, leaseState{hold: in.hold}
}

// leaseModel returns the lease model; holds (may be nil) only describe
// operations and states.
func leaseModel(holds []Hold) porcupine.Model {
	describeHold := func(i int) string {
		if i < 0 || i >= len(holds) {
			return fmt.Sprintf("hold #%d", i)
		}
		h := holds[i]
		s := fmt.Sprintf("P%d token %s", h.Process, h.Token)
		if h.Fence != 0 {
			s += fmt.Sprintf(" fence %d", h.Fence)
		}
		return s
	}
	return porcupine.Model{
		Init:  func() any { return leaseFree },
		Step:  leaseStep,
		Equal: func(a, b any) bool { return a.(leaseState) == b.(leaseState) },
		Hash:  func(s any) uint64 { return uint64(s.(leaseState).hold + 1) },
		DescribeOperation: func(input, _ any) string {
			in := input.(leaseInput)
			if in.unlock {
				return "unlock " + describeHold(in.hold)
			}
			return "lock " + describeHold(in.hold)
		},
		// porcupine's visualization (v1.3.1) sets a tooltip's innerHTML
		// to the states (and textContent to an operation): a state quotes
		// a token, escaped so that none becomes markup (a token
		// `"><img src=x onerror=…>` ran its script).
		DescribeState: func(state any) string {
			st := state.(leaseState)
			if st.hold == -1 {
				return "free"
			}
			return html.EscapeString("held by " + describeHold(st.hold))
		},
	}
}

// leaseOps turns holds[lo:hi] into lock/unlock point operations.
func leaseOps(holds []Hold, lo, hi int) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, 2*(hi-lo))
	for i := lo; i < hi; i++ {
		h := holds[i]
		ops = append(ops,
			porcupine.Operation{ClientId: h.Process, Input: leaseInput{hold: i}, Call: h.Start, Return: h.Start},
			porcupine.Operation{ClientId: h.Process, Input: leaseInput{unlock: true, hold: i}, Call: h.End, Return: h.End},
		)
	}
	return ops
}

// chunkSize is the number of holds or sections after which a key is cut
// into another porcupine partition, where that is exact: porcupine's
// memory grows with the square of a partition's size (every cache entry
// clones a bitset of all its operations).
const chunkSize = 512

// leaseChunks cuts holds (sorted by Start) into ranges [lo, hi) of at
// least size holds, only where the next hold starts strictly after every
// earlier one ended: each chunk then precedes the next and ends with the
// key free, so the key is linearizable if and only if every chunk is.
func leaseChunks(holds []Hold, size int) [][2]int {
	var chunks [][2]int
	lo := 0
	var maxEnd int64
	for i, h := range holds {
		if i-lo >= size && h.Start > maxEnd {
			chunks = append(chunks, [2]int{lo, i})
			lo = i
		}
		if i == lo || h.End > maxEnd {
			maxEnd = h.End
		}
	}
	if lo < len(holds) {
		chunks = append(chunks, [2]int{lo, len(holds)})
	}
	return chunks
}

// checkLease runs the lease model on every key with holds.
func checkLease(d *scanned, keys []string, timeout time.Duration) map[string]porcupine.CheckResult {
	var jobs []job
	for _, k := range keys {
		jobs = append(jobs, leaseParts(k, d.keys[k].holds)...)
	}
	return runJobs(jobs, timeout)
}

// Overlap is two holds of Key that overlap: B started inside A, the hold
// with the latest End among those that started before B. Start and End
// bound the time both were held.
type Overlap struct {
	Key   string `json:"key"`
	A     Hold   `json:"a"`
	B     Hold   `json:"b"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
}

// sweep finds overlapping holds of one key, independently of porcupine,
// in O(n). With holds sorted by Start then End (so that an instantaneous
// hold is not flagged against one that merely starts with it), hold b
// overlaps an earlier one if and only if b.Start < the largest End so
// far; it gives one Overlap, against that hold.
func sweep(holds []Hold) []Overlap {
	var out []Overlap
	top := -1 // index of the hold with the largest End so far
	for i, h := range holds {
		if top >= 0 && h.Start < holds[top].End {
			a := holds[top]
			out = append(out, Overlap{Key: h.Key, A: a, B: h, Start: h.Start, End: min(a.End, h.End)})
		}
		if top < 0 || h.End > holds[top].End {
			top = i
		}
	}
	return out
}

// leaseOutcome is the lease verdict of porcupine and the sweep.
type leaseOutcome struct {
	verdict      Verdict
	failed       []string
	unknown      []string
	disagreement string
}

// compareLease combines porcupine's per-key lease results (a key absent
// is Ok) with the sweep's overlaps. Where porcupine finished, the two
// must agree; a disagreement, a checker bug, makes the verdict Unknown
// whatever else was found. Otherwise Invalid if porcupine rejected some
// key, Unknown if it ran out of time on some, else Valid.
func compareLease(keys []string, porc map[string]porcupine.CheckResult, overlaps map[string][]Overlap) leaseOutcome {
	var o leaseOutcome
	var disagreements []string
	for _, k := range keys {
		ov := overlaps[k]
		switch porc[k] {
		case porcupine.Illegal:
			o.failed = append(o.failed, k)
			if len(ov) == 0 {
				disagreements = append(disagreements, fmt.Sprintf("key %q: porcupine says Illegal but the sweep found no overlap", k))
			}
		case porcupine.Unknown:
			o.unknown = append(o.unknown, k)
		default:
			if len(ov) > 0 {
				disagreements = append(disagreements, fmt.Sprintf(
					"key %q: porcupine says Ok but the sweep found %d overlap(s), first P%d token %s [%d, %d] and P%d token %s [%d, %d]",
					k, len(ov), ov[0].A.Process, ov[0].A.Token, ov[0].A.Start, ov[0].A.End, ov[0].B.Process, ov[0].B.Token, ov[0].B.Start, ov[0].B.End))
			}
		}
	}
	switch {
	case len(disagreements) > 0:
		o.verdict = Unknown
		o.disagreement = "checker bug: lease sweep and porcupine disagree: " + strings.Join(disagreements, "; ")
	case len(o.failed) > 0:
		o.verdict = Invalid
	case len(o.unknown) > 0:
		o.verdict = Unknown
	default:
		o.verdict = Valid
	}
	return o
}

// String describes the overlap on one line.
func (o Overlap) String() string {
	return fmt.Sprintf("key %q: P%d token %s [%d, %d] and P%d token %s [%d, %d] both held it over [%d, %d]",
		o.Key, o.A.Process, o.A.Token, o.A.Start, o.A.End, o.B.Process, o.B.Token, o.B.Start, o.B.End, o.Start, o.End)
}
