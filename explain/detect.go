package explain

import (
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/checker"
)

// finding is what the evidence says of an overlap.
type finding struct {
	cause Cause
	fault int
	node  int
	text  string
}

// evidence is what the detectors read of lease lb starting inside lease
// la: the faults, the key's evidence and the nodes to look at.
type evidence struct {
	a      *checker.Analysis
	fs     []fault
	ke     *checker.KeyEvidence
	obs    []checker.NodeObservation
	la, lb checker.Lease
	// common are the nodes that granted both leases; with no report,
	// every node observed.
	common []int
	// best is the best of the nodes' findings (byNode), Unknown until one
	// names a cause.
	best finding
}

// detectors name the cause of an overlap, in order: the first that
// reports a finding names it.
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

// rank orders causes by how specific they are: a named fault first.
func rank(c Cause) int {
	switch c {
	case ClockJump, Restart, Failover, PromotedWithoutKey, MinorityMaster, ExtendAfterExpiry, LateNotice, Evicted, PowerLoss, LateGrant:
		return 3
	case Stalled, ServerStall, BrokenConnection, ReplicationCut:
		return 2
	case LockLogic:
		return 1
	}
	return 0
}

// byNode asks every node that granted both what it did (nodeDetectors)
// and keeps the most specific finding; it reports one that names a cause.
func byNode(e *evidence) (finding, bool) {
	for _, n := range e.common {
		f := nodeFinding(e, n)
		if rank(f.cause) > rank(e.best.cause) {
			e.best = f
		}
	}
	return e.best, e.best.cause != Unknown
}

// unobservedFaults: with no node observed, a fault of a family that
// takes the key is named on its own; with no fault at all, the lock.
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

// unmarkedFault names, when nothing else is named, a fault that leaves no
// mark on a node's key: a stall, a broken connection, a cut replication
// link.
func unmarkedFault(e *evidence) (finding, bool) {
	fam, f, ok := blamed(e, unmarked)
	if !ok {
		return finding{}, false
	}
	return finding{cause: fam.cause, fault: f.num, node: firstOr(f.nodes), text: fmt.Sprintf("%s %s was active between the two acquires, and no node was seen to lose the key otherwise.", e.best.text, capital(f.String()))}, true
}

// nodeEvidence is what node n did to the key after la's ok and before
// lb's (with a slack of lag for the notifications).
type nodeEvidence struct {
	*evidence
	n     int
	name  string
	valid int64 // la's validity
	from  int64 // the earlier of the two acquires' invokes
	// expired is the first expiry or eviction after la's ok; before the
	// first expiry at or before it (an earlier key's end, or lb's own
	// key, set first and returned later); deleted the first del that
	// was not la's release.
	expired, before, deleted *checker.NodeObservation
	// sets counts the sets from la's invoke on.
	sets int
	// early is ", 0.5 s before the end of P0's validity" when expired
	// came before la's validity ended.
	early string
}

// lag is the slack of a node's notifications: they arrive after the
// change they report.
const lag = 50e6

// nodeDetectors name what node n's evidence says, in order: the first
// that reports a finding names it.
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

// nodeFinding is what node n's evidence says of lb starting inside la,
// both granted by n.
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

// nodeFault is a node detector that names a fault of cause active while
// n lost the key, in the sentence text makes of it.
type nodeFault struct {
	cause Cause
	// when is what the fault must overlap: expired (on n, from la's
	// invoke to n's expiry of the key), between (on n, from la's invoke
	// to lb's grant), anywhere (between, on any node), or stalled (on any
	// node, from la's ok to lb's grant, once n expired the key).
	when int
	text func(ne *nodeEvidence, f fault) string
}

const (
	expired = iota
	between
	anywhere
	stalled
)

func (nf nodeFault) detect(ne *nodeEvidence) (finding, bool) {
	node, from, to := ne.n, ne.la.Invoked, ne.lb.Start
	switch {
	case (nf.when == expired || nf.when == stalled) && ne.expired == nil:
		return finding{}, false
	case nf.when == expired:
		to = ne.expired.Time
	case nf.when == anywhere:
		node = -1
	case nf.when == stalled:
		node, from = -1, ne.la.Start
	}
	f, ok := find(ne.fs, nf.cause, node, from, to)
	if !ok {
		return finding{}, false
	}
	return finding{cause: nf.cause, fault: f.num, node: ne.n, text: nf.text(ne, f)}, true
}

// removal returns node n's first expired, evicted or del of the key
// after from and at or before to.
func removal(obs []checker.NodeObservation, n int, from, to int64) (checker.NodeObservation, bool) {
	for _, o := range obs {
		if o.Node == n && o.Time > from && o.Time <= to && (o.Event == "expired" || o.Event == "evicted" || o.Event == "del") {
			return o, true
		}
	}
	return checker.NodeObservation{}, false
}

// setBetween reports whether node n set the key in [from, to].
func setBetween(obs []checker.NodeObservation, n int, from, to int64) bool {
	for _, o := range obs {
		if o.Node == n && o.Event == "set" && o.Time >= from && o.Time <= to {
			return true
		}
	}
	return false
}
