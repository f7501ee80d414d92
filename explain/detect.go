package explain

import (
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/checker"
)

// detectors name the cause of an overlap: the first that reports a finding.
var detectors = []func(*evidence) (finding, bool){
	lateNotice,        // a holder without validity told too late (notice.go)
	extendAfterExpiry, // an extend granted by a node that had lost the key (lock.go)
	disjointGrants,    // no node granted both: promoted elsewhere, or quorums apart (failover.go)
	byNode,            // what each node that granted both did to the key
	unobservedFaults,  // no node observed: the faults alone
	unmarkedFault,     // a fault that leaves no mark on a key
}

// explainOverlap finds the cause of lease lb starting inside lease la.
func explainOverlap(a *checker.Analysis, fs []fault, ke *checker.KeyEvidence, la, lb checker.Lease) finding {
	e := &evidence{a: a, fs: fs, ke: ke, la: la, lb: lb, best: finding{cause: Unknown, node: -1, text: "The evidence names no cause."}}
	if ke != nil {
		e.obs = ke.Nodes
	}
	if la.Granted != nil && lb.Granted != nil {
		for _, n := range la.Granted {
			if slices.Contains(lb.Granted, n) {
				e.common = append(e.common, n)
			}
		}
	} else {
		for _, o := range e.obs {
			if !slices.Contains(e.common, o.Node) {
				e.common = append(e.common, o.Node)
			}
		}
		slices.Sort(e.common)
	}
	for _, d := range detectors {
		if f, ok := d(e); ok {
			return f
		}
	}
	return e.best
}

// byNode keeps the most specific finding of the nodes that granted both
// (nodeDetectors), reported when it names a cause.
func byNode(e *evidence) (finding, bool) {
	for _, n := range e.common {
		f := nodeFinding(e, n)
		if rank(f.cause) > rank(e.best.cause) {
			e.best = f
		}
	}
	return e.best, e.best.cause != Unknown
}

// unobservedFaults: with no node observed, a fault of a family that takes the
// key, or with no fault at all, the lock.
func unobservedFaults(e *evidence) (finding, bool) {
	if e.a.Observed {
		return finding{}, false
	}
	if fam, f, ok := blamed(e, unobserved); ok {
		return finding{cause: fam.cause, fault: f.num, node: firstOr(f.nodes), text: fmt.Sprintf("No node observations; %s was active between the two acquires.", f)}, true
	}
	if len(e.fs) == 0 || !anyFault(e.fs, e.la.Invoked, e.lb.Start) {
		return finding{cause: LockLogic, node: -1, text: "No fault was active between the two acquires."}, true
	}
	return finding{}, false
}

// unmarkedFault names, when nothing else is, a fault that leaves no mark on a
// key.
func unmarkedFault(e *evidence) (finding, bool) {
	fam, f, ok := blamed(e, unmarked)
	if !ok {
		return finding{}, false
	}
	return finding{cause: fam.cause, fault: f.num, node: firstOr(f.nodes), text: fmt.Sprintf("%s %s was active between the two acquires, and no node was seen to lose the key otherwise.", e.best.text, capital(f.String()))}, true
}

// nodeDetectors name what node n's evidence says: the first that reports.
var nodeDetectors = []func(*nodeEvidence) (finding, bool){
	clockBeforeGrant,        // clock.go
	lateGrant,               // grant.go
	evictedKey,              // evict.go
	clockExpired.detect,     // clock.go
	stallExpired.detect,     // stall.go
	pauseExpired.detect,     // stall.go
	killExpired.detect,      // kill.go
	powerLossExpired.detect, // kill.go
	expiredEarly,            // lock.go
	powerLost.detect,        // kill.go
	killed.detect,           // kill.go
	failedOver.detect,       // failover.go
	deletedForOther,         // lock.go
	setOver,                 // lock.go
}

// nodeFinding is what n, which granted both, says of lb starting inside la.
func nodeFinding(e *evidence, n int) finding {
	ne := &nodeEvidence{evidence: e, n: n, name: NodeName(n), valid: validity(e.la), from: min(e.la.Invoked, e.lb.Invoked)}
	la, lb := e.la, e.lb
	for i := range e.obs {
		o := &e.obs[i]
		if o.Node != n || o.Time < ne.from || o.Time > lb.Start+lag {
			continue
		}
		switch {
		case o.Event == "set":
			if o.Time >= la.Invoked {
				ne.sets++
			}
		case o.Time <= la.Start:
			if o.Event == "expired" && ne.before == nil {
				ne.before = o
			}
		case (o.Event == "expired" || o.Event == "evicted") && ne.expired == nil:
			ne.expired = o
		case o.Event == "del" && ne.deleted == nil && (la.Released == 0 || la.Released > o.Time):
			ne.deleted = o
		}
	}
	if ne.expired != nil && ne.expired.Time < ne.valid {
		ne.early = fmt.Sprintf(", %s before the end of P%d's validity", secsDelta(ne.valid-ne.expired.Time), la.Process)
	}
	for _, d := range nodeDetectors {
		if f, ok := d(ne); ok {
			return f
		}
	}
	return finding{cause: Unknown, node: n, text: fmt.Sprintf("%s granted both; it was not seen to lose the key.", ne.name)}
}

// blamed names the first family of blame b with a fault active between e's
// acquires.
func blamed(e *evidence, b blame) (family, fault, bool) {
	for _, fam := range families {
		if fam.blame != b {
			continue
		}
		if f, ok := findFamily(e.fs, fam.name, -1, e.la.Invoked, e.lb.Start); ok {
			return fam, f, true
		}
	}
	return family{}, fault{}, false
}
