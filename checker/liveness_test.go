package checker

import (
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

// TestLiveness: a key free yet unacquired for longer than the bound after
// the faults healed is stuck, reported with its interval and last holder;
// the time under a fault does not count; an explicit bound overrides the
// default (3 × the longest validity).
func TestLiveness(t *testing.T) {
	const k = "k"
	fault := func(h *hist, start, stop int64) *hist {
		return h.Add(
			history.Event{Type: history.Info, F: history.FaultStart, Process: -1, Time: start, Value: "f"},
			history.Event{Type: history.Info, F: history.FaultStop, Process: -1, Time: stop, Value: "f"})
	}
	fails := func(h *hist, p int, from, to, step int64) *hist {
		for t := from; t < to; t += step {
			h.AcquireEnds(p, k, history.Fail, t, t+1)
		}
		return h
	}
	for _, tc := range []struct {
		name  string
		h     *hist
		bound time.Duration
		want  Liveness
		from  int64
	}{
		{"stuck after the holder vanished", fails(new(hist).Acquire(0, k, "a", 0, 10, 100), 1, 50, 1000, 10), 0, LivenessStuck, 100},
		{"under a fault it does not count", fails(fault(new(hist).Acquire(0, k, "a", 0, 10, 100), 90, 800), 1, 50, 1000, 10), 0, LivenessOK, 0},
		{"counted from the heal", fails(fault(new(hist).Acquire(0, k, "a", 0, 10, 100), 90, 500), 1, 50, 1000, 10), 0, LivenessStuck, 500},
		{"a later fault excuses its time", fails(fault(fault(new(hist).Acquire(0, k, "a", 0, 10, 100), 90, 500), 600, 1000), 1, 50, 1000, 10), 0, LivenessOK, 0},
		{"a larger bound", fails(new(hist).Acquire(0, k, "a", 0, 10, 100), 1, 50, 1000, 10), 2000, LivenessUnknown, 0},
		{"no acquire", new(hist), 0, LivenessUnknown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := tc.h.Events()
			if len(evs) == 0 {
				evs = []history.Event{{Type: history.Info, F: history.FaultStart, Process: -1, Time: 1, Value: "f"}}
			}
			r := mustCheck(t, evs, Options{LivenessBound: tc.bound})
			if r.Liveness != tc.want {
				t.Fatalf("liveness %s (%s), want %s", r.Liveness, r.LivenessReason, tc.want)
			}
			if tc.want == LivenessStuck {
				s := r.Stuck
				if s == nil || s.Key != k || s.From != tc.from || s.LastHolder == nil || s.LastHolder.Token != "a" || !s.UntilEnd {
					t.Fatalf("stuck %+v, want key %s from %d, last holder a, until the end", s, k, tc.from)
				}
				if r.Outcome() != Fold(r.Lease, r.Resource) {
					t.Fatalf("outcome %s with liveness stuck; liveness does not count in it", r.Outcome())
				}
			}
		})
	}
}

// TestLivenessTimeoutsAreNotRefusals: a key free after its holder vanished,
// around which every attempt timed out (info, or a fail on which every
// node was silent), is not stuck: nothing answered about the key. The same
// stretch with refusals is stuck, judged up to the last refusal.
func TestLivenessTimeoutsAreNotRefusals(t *testing.T) {
	const k = "k"
	attempts := func(p int, from, to, step int64, end func(h *hist, t int64)) *hist {
		h := new(hist).Acquire(0, k, "a", 0, 10, 100)
		for t := from; t < to; t += step {
			end(h, t)
		}
		return h
	}
	info := func(h *hist, t int64) { h.AcquireEnds(1, k, history.Info, t, t+5) }
	silent := func(h *hist, t int64) {
		h.Add(history.Event{Type: history.Invoke, F: history.Acquire, Process: 1, Time: t, Key: k},
			history.Event{Type: history.Fail, F: history.Acquire, Process: 1, Time: t + 5, Key: k, Nodes: &history.Nodes{Attempt: 1, Silent: []int{0, 1, 2}}})
	}
	refused := func(h *hist, t int64) {
		h.Add(history.Event{Type: history.Invoke, F: history.Acquire, Process: 1, Time: t, Key: k},
			history.Event{Type: history.Fail, F: history.Acquire, Process: 1, Time: t + 5, Key: k, Nodes: &history.Nodes{Attempt: 1, Refused: []int{0, 1}, Silent: []int{2}}})
	}
	refusedAround := func(h *hist, refused, info func(*hist, int64)) *hist {
		for t := int64(160); t < 900; t += 10 {
			info(h, t)
		}
		for t := int64(900); t < 1000; t += 10 {
			refused(h, t)
		}
		return h
	}
	for _, tc := range []struct {
		name string
		h    *hist
		want Liveness
	}{
		{"every attempt timed out", attempts(1, 50, 1000, 10, info), LivenessOK},
		{"every node silent", attempts(1, 50, 1000, 10, silent), LivenessOK},
		{"refused by the nodes that answered", attempts(1, 50, 1000, 10, refused), LivenessStuck},
		// Refused, then every call timed out for most of the stretch, then
		// refused again: the timed-out acquires may hold the key a
		// validity after they returned, so only the time before them (and
		// after, to the last refusal) counts, 150 of the bound of 300.
		{"refusals around a long stretch of timeouts", refusedAround(attempts(1, 50, 160, 10, refused), refused, info), LivenessOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{})
			if r.Liveness != tc.want {
				t.Fatalf("liveness %s (%s), want %s", r.Liveness, r.LivenessReason, tc.want)
			}
			if tc.want == LivenessStuck && (r.Stuck == nil || r.Stuck.End != 995) {
				t.Fatalf("stuck %+v, want it judged up to the last refusal at 995", r.Stuck)
			}
		})
	}
}

// TestFaultAvailability: acquires are counted in the part (before,
// during, after a stretch of faults) in which they were invoked.
func TestFaultAvailability(t *testing.T) {
	const k = "k"
	h := new(hist).
		AcquireEnds(0, k, history.Fail, 0, 1).Acquire(0, k, "a", 2, 3, 5).
		Add(history.Event{Type: history.Info, F: history.FaultStart, Process: -1, Time: 10, Value: "f"}).
		AcquireEnds(0, k, history.Fail, 11, 12).
		Add(history.Event{Type: history.Info, F: history.FaultStop, Process: -1, Time: 20, Value: "f"}).
		Acquire(0, k, "b", 21, 22, 30)
	r := mustCheck(t, h.Events(), Options{})
	got := r.Stats.FaultAvailability
	if len(got) != 1 || got[0] != (Availability{Start: 10, End: 20, Before: 0.5, During: 0, After: 1}) {
		t.Fatalf("fault availability %+v, want one stretch [10, 20] with 0.5, 0, 1", got)
	}
}
