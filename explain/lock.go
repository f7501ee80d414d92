package explain

import (
	"fmt"

	"github.com/locktorture/locktorture/checker"
)

// The lock's own logic: what the nodes show it did with no fault to blame.

// extendAfterExpiry: an extend ok granted by a node that had lost the key.
func extendAfterExpiry(e *evidence) (finding, bool) {
	la := e.la
	for _, x := range la.Extends {
		if x.Type != "ok" {
			continue
		}
		for _, n := range x.Granted {
			if rm, ok := removal(e.obs, n, la.Start, x.Completed); ok {
				return finding{cause: ExtendAfterExpiry, node: n, text: fmt.Sprintf("%s %s the key at %s; P%d's extend at %s (invoked %s) was granted by %s all the same, the validity pushed to %s.",
					NodeName(n), rm.Event, Secs(rm.Time), la.Process, Secs(x.Completed), Secs(x.Invoked), NodeName(n), Secs(x.ValidUntil))}, true
			}
		}
	}
	return finding{}, false
}

// expiredEarly: n expired the key, no fault to blame: the lock told a
// validity longer than the key's life.
func expiredEarly(ne *nodeEvidence) (finding, bool) {
	if ne.expired == nil {
		return finding{}, false
	}
	return finding{cause: LockLogic, node: ne.n, text: fmt.Sprintf("%s expired the key at %s%s, with no clock or restart fault on it: the lock told the holder a validity longer than the key's life.", ne.name, Secs(ne.expired.Time), ne.early)}, true
}

// deletedForOther: n deleted the key while la's holder held it (another's
// release, when one came just before).
func deletedForOther(ne *nodeEvidence) (finding, bool) {
	if ne.deleted == nil {
		return finding{}, false
	}
	text := fmt.Sprintf("%s deleted the key at %s, while P%d held it and had not released it.", ne.name, Secs(ne.deleted.Time), ne.la.Process)
	if p, ok := releaser(ne.ke, ne.la, ne.deleted.Time); ok {
		text += fmt.Sprintf(" P%d had invoked a release of its own lease %s before.", p.Process, Short(p.Token))
	}
	return finding{cause: LockLogic, node: ne.n, text: text}, true
}

// setOver: n set the key for lb over la's, neither expired nor deleted.
func setOver(ne *nodeEvidence) (finding, bool) {
	if ne.sets < 2 {
		return finding{}, false
	}
	return finding{cause: LockLogic, node: ne.n, text: fmt.Sprintf("%s set the key for P%d at about %s over P%d's, which it had neither expired nor deleted.", ne.name, ne.lb.Process, Secs(ne.lb.Start), ne.la.Process)}, true
}

// releaser returns another lease of the key whose release was invoked in the
// half second before t.
func releaser(ke *checker.KeyEvidence, la checker.Lease, t int64) (checker.Lease, bool) {
	if ke == nil {
		return checker.Lease{}, false
	}
	for _, l := range ke.Leases() {
		if l.Token != la.Token && l.Released != 0 && l.Released <= t && t-l.Released < 5e8 && l.Start < la.Start {
			return l, true
		}
	}
	return checker.Lease{}, false
}
