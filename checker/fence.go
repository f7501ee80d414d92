package checker

import "fmt"

// FenceViolation is two holds of one key, B granted after A, whose
// fencing tokens do not increase: B.Fence ≤ A.Fence (Jepsen's
// fenced-mutex check). A resource that trusts fencing tokens would take
// B's accesses for stale, or, if it checks only writes, let A's stale
// writes in after B's.
type FenceViolation struct {
	// Key is the lock key.
	Key string `json:"key"`
	// A is the earlier hold: the one granted last before B, whose fence
	// is the highest so far.
	A Hold `json:"a"`
	// B is the later hold, whose fence is not greater than A's.
	B Hold `json:"b"`
}

// String describes the violation on one line.
func (v FenceViolation) String() string {
	return fmt.Sprintf("key %q: P%d token %s granted at %d with fence %d after P%d token %s granted at %d with fence %d",
		v.Key, v.B.Process, v.B.Token, v.B.Start, v.B.Fence, v.A.Process, v.A.Token, v.A.Start, v.A.Fence)
}

// fenceOrder checks that the fencing tokens of one key's holds strictly
// increase in grant order. holds are sorted by Start, which is the grant
// order of any two holds that do not overlap (holds that overlap are a
// lease violation already). Holds without a fence (0) are not checked, and
// a hold of the same token as the one before it (a late extend's new hold
// of the lease it renews) is the same grant. Each hold whose fence is not
// greater than the highest fence of the holds granted before it gives one
// violation, against the hold that carried that highest fence. O(n).
func fenceOrder(holds []Hold) []FenceViolation {
	var out []FenceViolation
	top := -1 // index of the hold with the highest fence so far
	for i, h := range holds {
		if h.Fence == 0 {
			continue
		}
		if top >= 0 {
			a := holds[top]
			switch {
			case a.Token == h.Token && a.Process == h.Process:
				continue
			case h.Fence <= a.Fence:
				out = append(out, FenceViolation{Key: h.Key, A: a, B: h})
				continue
			}
		}
		top = i
	}
	return out
}
