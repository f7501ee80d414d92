package checker

import (
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestFenceOrder: fencing tokens must increase in grant order; a
// violation names both holds; a late extend's new hold of the same lease
// is the same grant; holds without a fence are not judged.
func TestFenceOrder(t *testing.T) {
	const k = "k"
	fenced := func(h *hist, p int, token string, fence, call, ret, valid int64) *hist {
		return h.Add(
			history.Event{Type: history.Invoke, F: history.Acquire, Process: p, Key: k, Time: call},
			history.Event{Type: history.Ok, F: history.Acquire, Process: p, Key: k, Token: token, Fence: fence, Time: ret, ValidUntil: valid})
	}
	for _, tc := range []struct {
		name  string
		h     *hist
		want  int
		a, b  string // the tokens of the first violation
		lease Verdict
	}{
		{"increasing", fenced(fenced(new(hist), 0, "a", 1, 0, 10, 20), 1, "b", 2, 5, 30, 40), 0, "", "", Valid},
		{"equal", fenced(fenced(new(hist), 0, "a", 3, 0, 10, 20), 1, "b", 3, 5, 30, 40), 1, "a", "b", Invalid},
		{"decreasing after a higher one", fenced(fenced(fenced(new(hist), 0, "a", 5, 0, 10, 20), 1, "b", 9, 5, 30, 40), 2, "c", 7, 6, 50, 60), 1, "b", "c", Invalid},
		{"own late extend", fenced(new(hist), 0, "a", 4, 0, 10, 20).Extend(0, k, "a", 25, 26, 60), 0, "", "", Valid},
		{"no fences", new(hist).Acquire(0, k, "a", 0, 10, 20).Acquire(1, k, "b", 5, 30, 40), 0, "", "", Valid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{})
			if r.FenceViolationCount != tc.want || len(r.FenceViolations) != tc.want || r.Lease != tc.lease {
				t.Fatalf("%d fence violations %v, lease %s; want %d, %s", r.FenceViolationCount, r.FenceViolations, r.Lease, tc.want, tc.lease)
			}
			if tc.want > 0 {
				v := r.FenceViolations[0]
				if v.A.Token != tc.a || v.B.Token != tc.b || r.FirstLeaseViolation == nil || *r.FirstLeaseViolation != v.B.Start {
					t.Fatalf("violation %s (first at %v), want holds %s then %s", v, r.FirstLeaseViolation, tc.a, tc.b)
				}
			}
		})
	}
}
