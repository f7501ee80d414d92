package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// How a hold was cut short, as Cut.How names it.
const (
	// CutLost: the lock told its holder it lost the lease (history.Lost)
	// before the lease's validity.
	CutLost = "lost"
	// CutExtend: an extend of the hold was refused (a definite fail)
	// before the hold's validity had passed.
	CutExtend = "extend refused"
	// CutRelease: the release of the hold was refused (a definite fail),
	// and the refusal came back before the hold's validity: the key was
	// gone from under a valid hold.
	CutRelease = "release refused"
)

// Cut is a hold the lock ended before its validity: a loss notice, or a
// refused extend or release whose answer came while the hold was still
// valid. A node that refuses before the validity the lock claimed no
// longer held the key then, since the validity ends before the key can
// expire. Faults are the fault windows (numbered from 1, as in
// Stats.FaultWindows) active between the grant and the cut, other than
// those Options.Benign excuses: a cut with none is a spurious loss, a
// hold cut short while nothing touched it.
type Cut struct {
	Key     string `json:"key"`
	Process int    `json:"process"`
	Token   string `json:"token"`
	// Start is the hold's grant (its acquire's ok); At the cut: the
	// notice, or the refused call's completion; ValidUntil the hold's
	// validity then.
	Start      int64 `json:"start"`
	At         int64 `json:"at"`
	ValidUntil int64 `json:"valid_until"`
	// How is CutLost, CutExtend or CutRelease; Error the lock's words.
	How   string `json:"how"`
	Error string `json:"error,omitempty"`
	// Faults are the fault windows that may have cut it; none for a
	// spurious loss.
	Faults []int `json:"faults,omitempty"`
}

// Spurious reports whether no fault was active while the hold lasted.
func (c Cut) Spurious() bool { return len(c.Faults) == 0 }

// cut records a hold cut short at at (see Cut). Nothing is recorded when
// the cut is not before the validity.
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

// maxReportedCuts caps Result.Cuts; Result.SpuriousCount has the full
// count of the spurious ones.
const maxReportedCuts = maxReportedOverlaps

// judgeCuts gives the holds verdict: Invalid when some hold was cut short
// while no fault (other than those benign excuses) was active, Valid when
// the history has holds and none was, Unknown when it has none. Result.Cuts
// lists the spurious cuts first, then those a fault may explain.
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
	r.Cuts = slices.Concat(spurious, faulted)[:min(len(d.cuts), maxReportedCuts)]
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
