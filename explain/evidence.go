package explain

import "github.com/locktorture/locktorture/checker"

// finding is what the evidence says of an overlap.
type finding struct {
	cause Cause
	fault int
	node  int
	text  string
}

// evidence is what the detectors read of lease lb starting inside lease la.
type evidence struct {
	a      *checker.Analysis
	fs     []fault
	ke     *checker.KeyEvidence
	obs    []checker.NodeObservation
	la, lb checker.Lease
	// common are the nodes that granted both leases (with no report, every
	// node observed).
	common []int
	// best is the nodes' best finding (byNode), Unknown until one names a
	// cause.
	best finding
}

// nodeEvidence is what node n did to the key between la's ok and lb's (plus
// lag).
type nodeEvidence struct {
	*evidence
	n     int
	name  string
	valid int64 // la's validity
	from  int64 // the earlier of the two acquires' invokes
	// expired is the first expiry or eviction after la's ok; before the first
	// expiry at or before it (an earlier key's end, or lb's own key set first
	// and returned later); deleted the first del that was not la's release.
	expired, before, deleted *checker.NodeObservation
	// sets counts the sets from la's invoke on.
	sets int
	// early is ", 0.5 s before the end of P0's validity" when expired came
	// early.
	early string
}

// lag is how late a node's notifications may arrive after their change.
const lag = 50e6

// nodeFault is a node detector naming a fault of cause active while n lost
// the key, in text's sentence.
type nodeFault struct {
	cause Cause
	// when is what the fault must overlap: expired (on n, la's invoke to n's
	// expiry), between (on n, la's invoke to lb's grant), anywhere (between,
	// any node) or stalled (any node, la's ok to lb's grant, once n expired
	// the key).
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

// removal returns node n's first expired, evicted or del of the key in (from,
// to].
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

// validity is the lease's validity at its end: the last extend ok invoked
// before it.
func validity(l checker.Lease) int64 {
	v := l.ValidUntil
	for _, e := range l.Extends {
		if e.Type == "ok" && e.Invoked < v {
			v = e.ValidUntil
		}
	}
	return v
}

// untilReleased reports whether l claims no validity (a self-renewing lock,
// or one held until released: recorded a century away).
func untilReleased(l checker.Lease) bool {
	const day = 24 * 3600 * 1e9
	return validity(l)-l.Invoked > 365*day
}
