package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Liveness is the liveness verdict: whether every key that a fault, a
// crashed holder or the lock itself made unacquirable became acquirable
// again within a bound.
type Liveness string

const (
	// LivenessOK: no key stayed free yet unacquired, while acquires on it
	// were being attempted, for longer than the bound, counting only the
	// time under no fault.
	LivenessOK Liveness = "ok"
	// LivenessStuck: some key did (see Result.Stuck).
	LivenessStuck Liveness = "stuck"
	// LivenessUnknown: there is nothing to judge (no acquire, no bound,
	// a history shorter than the bound); Result.LivenessReason says why.
	LivenessUnknown Liveness = "unknown"
)

// DefaultLivenessFactor times the longest validity an acquire was
// granted in the history (about the TTL) is the liveness bound when
// Options.LivenessBound is zero.
const DefaultLivenessFactor = 3

// Stuck is the longest stretch in which a key was stuck: free (no hold,
// as the history shows it) yet not acquired although acquires on it were
// in progress, counting only the time under no fault (a fault may keep a
// key unacquirable; the lock must recover once it healed).
type Stuck struct {
	// Key is the lock key.
	Key string `json:"key"`
	// Start is when the key became free and unacquired; From is when the
	// stretch began to count (Start, or the end of the faults active at
	// Start); End is the last definite refusal of an acquire in it (a
	// stretch counts only while attempts got an answer: timeouts say
	// nothing about the key). Quiet is the time of [Start, End] under no
	// fault and in which no acquire of unknown outcome may hold the key
	// (unknownHolds): what is judged against the bound.
	Start int64         `json:"start"`
	From  int64         `json:"from"`
	End   int64         `json:"end"`
	Quiet time.Duration `json:"quiet_ns"`
	// UntilEnd is set when no acquire of the key succeeded after Start.
	UntilEnd bool `json:"until_end,omitempty"`
	// LastHolder is the hold of the key that ended last before Start: the
	// holder that left the key blocked (a crashed one never released);
	// nil when the key was never held before.
	LastHolder *Hold `json:"last_holder,omitempty"`
}

// String describes the stretch on one line.
func (s Stuck) String() string {
	until := "to its last refusal before an acquire succeeded"
	if s.UntilEnd {
		until = "to its last refusal (no acquire succeeded again)"
	}
	holder := "never held before"
	if h := s.LastHolder; h != nil {
		holder = fmt.Sprintf("last held by P%d token %s [%d, %d]", h.Process, h.Token, h.Start, h.End)
	}
	return fmt.Sprintf("key %q free yet unacquired over [%d, %d], %s of it under no fault and with no acquire of unknown outcome that may hold it, %s; %s",
		s.Key, s.Start, s.End, s.Quiet, until, holder)
}

// liveness judges the gaps of every key against bound (0: the default,
// DefaultLivenessFactor × the longest validity granted); keys are sorted.
func (d *scanned) liveness(keys []string, bound time.Duration) (Liveness, string, *Stuck, time.Duration) {
	if bound <= 0 {
		bound = timesSat(DefaultLivenessFactor, d.maxValidity)
	}
	attempts := 0
	for _, k := range keys {
		attempts += len(d.keys[k].attempts)
	}
	switch {
	case attempts == 0:
		return LivenessUnknown, "nothing to judge: the history has no acquire", nil, 0
	case bound <= 0:
		return LivenessUnknown, "nothing to judge: no acquire succeeded and no liveness bound was given", nil, 0
	}
	var worst *Stuck
	for _, k := range keys {
		kd := d.keys[k]
		// Time under a fault, or in which an acquire whose outcome its
		// client never learned may hold the key, is not judged.
		merged := mergeWindows(sortedWindows(append(unknownHolds(kd.attempts, d.maxValidity, d.last), d.windows...)))
		for _, g := range keyGaps(k, kd, d.last) {
			// Judged only up to the last refusal in the gap: timeouts
			// say nothing about the key (docs/correctness.md).
			end, ok := lastRefusal(kd.attempts, g.Start, g.Start+int64(g.Duration))
			if !ok {
				continue
			}
			from := g.Start
			if i := windowAt(merged, g.Start); i >= 0 {
				from = merged[i].End
			}
			quiet := quietTime(merged, g.Start, end)
			if quiet <= int64(bound) || (worst != nil && quiet <= worst.Quiet.Nanoseconds()) {
				continue
			}
			worst = &Stuck{Key: k, Start: g.Start, From: from, End: end, Quiet: time.Duration(quiet), UntilEnd: g.UntilEnd, LastHolder: lastHolder(kd.holds, g.Start)}
		}
	}
	if worst != nil {
		return LivenessStuck, fmt.Sprintf("stuck longer than the bound of %s: %s", bound, worst), worst, bound
	}
	if span := time.Duration(d.last - d.first); span < bound {
		return LivenessUnknown, fmt.Sprintf("nothing to judge: the history lasts %s, less than the liveness bound of %s", span, bound), nil, bound
	}
	return LivenessOK, "", nil, bound
}

// unknownHolds are the stretches in which an acquire whose outcome its
// client never learned may hold the key: from its invoke to a validity
// after it returned (end for one that never did). docs/correctness.md
// says why they are not judged.
func unknownHolds(attempts []attempt, validity, end int64) []Window {
	var out []Window
	for _, a := range attempts {
		if a.ok || a.definite {
			continue
		}
		to := end // it never returned
		if a.ret != math.MaxInt64 {
			to = min(a.ret+validity, end)
		}
		out = append(out, Window{Start: a.call, End: max(to, a.call)})
	}
	return out
}

// sortedWindows sorts ws by start, as mergeWindows needs them.
func sortedWindows(ws []Window) []Window {
	slices.SortFunc(ws, func(x, y Window) int { return cmp.Compare(x.Start, y.Start) })
	return ws
}

// lastRefusal returns the latest return in [from, to] of an acquire
// that failed with a definite answer, and whether there is one.
func lastRefusal(attempts []attempt, from, to int64) (int64, bool) {
	last, ok := int64(0), false
	for _, a := range attempts {
		if a.definite && !a.ok && a.ret >= from && a.ret <= to && (!ok || a.ret > last) {
			last, ok = a.ret, true
		}
	}
	return last, ok
}

// timesSat is f × d (f > 0), or the longest duration when that overflows
// (three of a self-renewing lock's century wrapped to a negative bound).
func timesSat(f, d int64) time.Duration {
	if d > math.MaxInt64/f {
		return math.MaxInt64
	}
	return time.Duration(f * d)
}

// quietTime is how much of [from, to] no merged fault window covers.
func quietTime(merged []Window, from, to int64) int64 {
	q := to - from
	for _, w := range merged {
		if w.Start >= to {
			break
		}
		q -= max(min(w.End, to)-max(w.Start, from), 0)
	}
	return max(q, 0)
}

// windowAt returns the index of the merged window that contains t, or -1.
func windowAt(merged []Window, t int64) int {
	for i, w := range merged {
		if w.Start <= t && t <= w.End {
			return i
		}
		if w.Start > t {
			break
		}
	}
	return -1
}

// lastHolder returns a copy of the hold (holds sorted by Start) with the
// latest End not after t, or nil.
func lastHolder(holds []Hold, t int64) *Hold {
	var last *Hold
	for i := range holds {
		h := holds[i]
		if h.Start > t {
			break
		}
		if h.End <= t && (last == nil || h.End >= last.End) {
			last = &h
		}
	}
	return last
}
