package checker

import (
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestCuts: a hold the lock ends before its validity (a loss notice, a
// refused extend, a refused release answered before the validity) while
// no fault is active is a spurious loss, and the holds verdict invalid;
// the same cut under a fault, or under a fault Options.Benign excuses,
// is not; ends at or after the validity, timeouts and releases that
// succeed cut nothing; a history without a hold decides nothing.
func TestCuts(t *testing.T) {
	const k, century = "k", int64(1) << 62
	refuse := func(h *hist, p int, f history.Func, tok string, inv, ret int64) *hist {
		return h.Add(
			history.Event{Type: history.Invoke, F: f, Process: p, Key: k, Token: tok, Time: inv},
			history.Event{Type: history.Fail, F: f, Process: p, Key: k, Token: tok, Time: ret, Error: "lease not held", Nodes: &history.Nodes{Attempt: 1, Refused: []int{0}}})
	}
	timeout := func(h *hist, p int, f history.Func, tok string, inv, ret int64) *hist {
		return h.Add(
			history.Event{Type: history.Invoke, F: f, Process: p, Key: k, Token: tok, Time: inv},
			history.Event{Type: history.Fail, F: f, Process: p, Key: k, Token: tok, Time: ret, Error: "i/o timeout", Nodes: &history.Nodes{Attempt: 1, Silent: []int{0}}})
	}
	fault := func(h *hist, desc string, start, stop int64) *hist {
		return h.Fault(history.FaultStart, desc, start).Fault(history.FaultStop, desc, stop)
	}
	latency := func(desc string) bool { return strings.HasPrefix(desc, "latency") }
	for _, tc := range []struct {
		name     string
		h        *hist
		benign   func(string) bool
		want     Verdict
		how      string
		spurious int
	}{
		{"a watchdog's notice with no fault", new(hist).Acquire(0, k, "a", 0, 10, century).Lost(0, k, "a", 500), nil, Invalid, CutLost, 1},
		{"a refused extend before the validity", refuse(new(hist).Acquire(0, k, "a", 0, 10, 1000), 0, history.Extend, "a", 300, 310), nil, Invalid, CutExtend, 1},
		{"a refused release before the validity", refuse(new(hist).Acquire(0, k, "a", 0, 10, 1000), 0, history.Release, "a", 300, 310), nil, Invalid, CutRelease, 1},
		{"a notice under a partition", fault(new(hist).Acquire(0, k, "a", 0, 10, century).Lost(0, k, "a", 500), "partition n1", 100, 200), nil, Valid, CutLost, 0},
		{"a notice under a latency the run calls benign", fault(new(hist).Acquire(0, k, "a", 0, 10, century).Lost(0, k, "a", 500), "latency-group: replies to client group 0 late by 50ms", 100, 600), latency, Invalid, CutLost, 1},
		{"a fault before the grant excuses nothing", fault(new(hist).Acquire(0, k, "a", 100, 110, century).Lost(0, k, "a", 500), "partition n1", 10, 90), nil, Invalid, CutLost, 1},
		{"a refused release after the validity", refuse(new(hist).Acquire(0, k, "a", 0, 10, 1000), 0, history.Release, "a", 1000, 1010), nil, Valid, "", 0},
		{"a refusal answered after the validity", refuse(new(hist).Acquire(0, k, "a", 0, 10, 1000), 0, history.Extend, "a", 990, 1010), nil, Valid, "", 0},
		{"a timed-out extend", timeout(new(hist).Acquire(0, k, "a", 0, 10, 1000), 0, history.Extend, "a", 300, 310), nil, Valid, "", 0},
		{"a notice after the release", new(hist).Acquire(0, k, "a", 0, 10, century).Release(0, k, "a", 400, 410).Lost(0, k, "a", 500), nil, Valid, "", 0},
		{"held to the release", new(hist).Acquire(0, k, "a", 0, 10, century).Extend(0, k, "a", 100, 110, century).Release(0, k, "a", 400, 410), nil, Valid, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{Benign: tc.benign})
			if r.Holds != tc.want || r.SpuriousCount != tc.spurious {
				t.Fatalf("holds %s (%s), %d spurious, want %s and %d; cuts %+v", r.Holds, r.HoldsReason, r.SpuriousCount, tc.want, tc.spurious, r.Cuts)
			}
			if tc.how == "" {
				if r.CutCount != 0 {
					t.Fatalf("cuts %+v, want none", r.Cuts)
				}
				return
			}
			if len(r.Cuts) != 1 || r.Cuts[0].How != tc.how || r.Cuts[0].Spurious() != (tc.spurious > 0) {
				t.Fatalf("cuts %+v, want one %q, spurious %v", r.Cuts, tc.how, tc.spurious > 0)
			}
			if tc.want == Invalid && (r.Lease != Valid || r.Outcome() != OutcomeUnknown && r.Outcome() != OutcomeSafe) {
				t.Fatalf("lease %s, outcome %s: a cut hold breaks no safety verdict", r.Lease, r.Outcome())
			}
		})
	}
	r := mustCheck(t, new(hist).AcquireEnds(0, k, history.Fail, 0, 10).Events(), Options{})
	if r.Holds != Unknown || !strings.HasPrefix(r.HoldsReason, ReasonNoHold) {
		t.Fatalf("no hold: holds %s (%s), want unknown", r.Holds, r.HoldsReason)
	}
}
