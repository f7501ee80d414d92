package checker

import "fmt"

// FenceViolation is two holds of Key, B granted after A, the hold with
// the highest fence so far, whose fencing tokens do not increase:
// B.Fence ≤ A.Fence (Jepsen's fenced-mutex check). A resource that trusts
// them would take B's accesses for stale, or, checking only writes, let
// A's stale writes in after B's.
type FenceViolation struct {
	Key string `json:"key"`
	A   Hold   `json:"a"`
	B   Hold   `json:"b"`
}

// String describes the violation on one line.
func (v FenceViolation) String() string {
	return fmt.Sprintf("key %q: P%d token %s granted at %d with fence %d after P%d token %s granted at %d with fence %d",
		v.Key, v.B.Process, v.B.Token, v.B.Start, v.B.Fence, v.A.Process, v.A.Token, v.A.Start, v.A.Fence)
}

// fenceOrder checks, in O(n), that the fences of one key's holds strictly
// increase in grant order (see the package doc). Start is the grant order
// of holds that do not overlap (those that do are a lease violation
// already). Each hold whose fence is not greater than the highest so far
// gives one violation, against the hold that carried it.
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
