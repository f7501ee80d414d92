package explain

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/locktorture/locktorture/checker"
)

// The client-stop family: a holder whose lock claims no validity told of the
// loss too late, or not at all, its process stopped.

// clientRef finds the client a client-stop fault's description names
// ("stop client 3's process …").
var clientRef = regexp.MustCompile(`\bclient ([0-9]+)'s process`)

// stoppedBy returns the client-stop fault active in [from, to] that stopped
// client p's process.
func stoppedBy(fs []fault, p int, from, to int64) (fault, bool) {
	return lastFault(fs, from, to, func(f fault) bool {
		targets, _, _ := strings.Cut(f.w.Desc, ", at client ")
		m := clientRef.FindStringSubmatch(targets)
		return causeOf(f.family) == LateNotice && m != nil && m[1] == strconv.Itoa(p)
	})
}

// keyGone is the key's end on a node that granted la, after la's ok and by
// lb's (plus lag), or nil.
func keyGone(obs []checker.NodeObservation, la, lb checker.Lease) *checker.NodeObservation {
	for i := range obs {
		o := &obs[i]
		if o.Time > la.Start && o.Time <= lb.Start+lag && (o.Event == "expired" || o.Event == "evicted") &&
			(la.Granted == nil || slices.Contains(la.Granted, o.Node)) {
			return o
		}
	}
	return nil
}

// lateNotice explains lb starting inside la when la claims no validity and
// its holder learnt of the loss only after lb's grant, or not at all: how
// late (by the node's expiry of the key), and the client-stop fault that
// stopped it, if any.
func lateNotice(e *evidence) (finding, bool) {
	la, lb := e.la, e.lb
	if !untilReleased(la) {
		return finding{}, false
	}
	stop, stopped := stoppedBy(e.fs, la.Process, la.Start, lb.Start)
	// Told after the other's grant, while still holding (the notice ended the
	// hold) or after releasing (too late to end it).
	late := la.Lost > lb.Start && (la.Released == 0 || la.Lost <= la.Released)
	gone := keyGone(e.obs, la, lb)
	if !late && !stopped && !(la.Lost > lb.Start) {
		if gone != nil && la.Lost == 0 {
			// Running, yet never told: the lock's own logic (a watchdog
			// ignoring failed renewals, a hold until release).
			return finding{cause: LockLogic, node: gone.Node, text: fmt.Sprintf("%s %s the key at %s; P%d's lock claims no validity and never told it the lease was lost.",
				NodeName(gone.Node), gone.Event, Secs(gone.Time), la.Process)}, true
		}
		return finding{}, false // never told and never stopped: see nodeFinding
	}
	f := finding{cause: LateNotice, node: -1}
	var b strings.Builder
	if stopped {
		f.fault = stop.num
		fmt.Fprintf(&b, "%s stopped P%d's process %s after the grant. ", capital(stop.String()), la.Process, secsDelta(stop.w.Start-la.Start))
	}
	if gone != nil {
		f.node = gone.Node
		fmt.Fprintf(&b, "%s %s the key at %s. ", NodeName(gone.Node), gone.Event, Secs(gone.Time))
	}
	switch {
	case late:
		fmt.Fprintf(&b, "P%d was told it lost the lock at %s, %s after P%d was granted it", la.Process, Secs(la.Lost), secsDelta(la.Lost-lb.Start), lb.Process)
		if gone != nil {
			fmt.Fprintf(&b, " and %s after its key %s", secsDelta(la.Lost-gone.Time), gone.Event)
		}
		b.WriteString(".")
	case la.Released != 0 && la.Lost != 0:
		fmt.Fprintf(&b, "P%d was not told it lost the lock before it released it at %s; the notice came at %s.", la.Process, Secs(la.Released), Secs(la.Lost))
	case la.Released != 0:
		fmt.Fprintf(&b, "P%d was never told it lost the lock; it held on until it released it at %s.", la.Process, Secs(la.Released))
	default:
		fmt.Fprintf(&b, "P%d was never told it lost the lock.", la.Process)
	}
	f.text = b.String()
	return f, true
}
