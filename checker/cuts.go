package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// How a hold was cut short before its validity, as Cut.How names it: a
// loss notice (history.Lost), or an extend or a release refused (a
// definite fail) with the refusal back before the validity.
const (
	CutLost    = "lost"
	CutExtend  = "extend refused"
	CutRelease = "release refused"
)

// Cut is a hold the lock ended before its validity, granted at Start and
// cut At (the notice, or the refused call's completion) while valid until
// ValidUntil. A node that refuses before the validity no longer held the
// key, since the validity ends before the key can expire. Error is the
// lock's words. Faults are the fault windows (numbered from 1, as in
// Stats.FaultWindows) active between the grant and the cut, other than
// those Options.Benign excuses: none is a spurious loss.
type Cut struct {
	Key        string `json:"key"`
	Process    int    `json:"process"`
	Token      string `json:"token"`
	Start      int64  `json:"start"`
	At         int64  `json:"at"`
	ValidUntil int64  `json:"valid_until"`
	How        string `json:"how"`
	Error      string `json:"error,omitempty"`
	Faults     []int  `json:"faults,omitempty"`
}

// Spurious reports whether no fault was active while the hold lasted.
func (c Cut) Spurious() bool { return len(c.Faults) == 0 }

// cut records a hold cut short at at, if that is within it.
func (s *scanner) cut(a *activeHold, at int64, how string, e *history.Event) {
	if at >= a.validUntil || at < a.hold.Start {
		return
	}
	s.cuts = append(s.cuts, Cut{Key: a.hold.Key, Process: a.hold.Process, Token: a.hold.Token, Start: a.hold.Start, At: at,
		ValidUntil: a.validUntil, How: how, Error: e.Error})
}

// refused reports whether e, the completion of an extend or release, is a
// refusal: a fail that some node answered (see definite).
func refused(e *history.Event) bool { return e.Type == history.Fail && definite(e) }

// judgeCuts gives the holds verdict: Invalid when a hold was cut short
// while no fault that is not benign was active, Unknown without holds.
func judgeCuts(r *Result, d *scanned, benign func(desc string) bool) {
	var spurious, faulted []Cut
	for _, c := range d.cuts {
		for i, w := range d.windows {
			if w.Start <= c.At && w.End >= c.Start && (benign == nil || !benign(w.Desc)) {
				c.Faults = append(c.Faults, i+1)
			}
		}
		if c.Spurious() {
			spurious = append(spurious, c)
		} else {
			faulted = append(faulted, c)
		}
	}
	byAt := func(a, b Cut) int { return cmp.Compare(a.At, b.At) }
	slices.SortStableFunc(spurious, byAt)
	slices.SortStableFunc(faulted, byAt)
	r.SpuriousCount = len(spurious)
	r.CutCount = len(d.cuts)
	r.Cuts = slices.Concat(spurious, faulted)[:min(len(d.cuts), maxReportedOverlaps)]
	switch {
	case len(spurious) > 0:
		r.Holds = Invalid
		first := spurious[0]
		r.HoldsReason = fmt.Sprintf("%d hold(s) cut short while no fault was active; the first: P%d's hold of %q from %d ended at %d (%s)",
			len(spurious), first.Process, first.Key, first.Start, first.At, first.How)
	case r.Stats.Holds == 0:
		r.Holds, r.HoldsReason = Unknown, ReasonNoHold+": no hold to cut short"
	default:
		r.Holds = Valid
	}
}
