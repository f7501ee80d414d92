package explain

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/locktorture/locktorture/checker"
)

// family is a family of faults (nemesis.Kind.Family, recorded on each
// fault-start) and the cause a fault of it makes.
type family struct {
	name  string
	cause Cause
	// blame says when a fault of the family is named without a node's
	// evidence of what it did.
	blame blame
}

// blame is when a family's fault is named on the faults alone.
type blame int

const (
	// withEvidence: only where the nodes' evidence (or a detector's own
	// reading of the leases) shows the fault's work.
	withEvidence blame = iota
	// unobserved: also when no node was observed at all, on a fault of
	// the family active between the two acquires.
	unobserved
	// unmarked: also when nothing else is named: the fault leaves no mark
	// on a node's key (a stall, a broken connection, a cut link).
	unmarked
)

// families is the one table from fault family to cause, in the order
// faults are named when several families share a cause or a blame. A
// fault kind added to a family needs nothing here; a new family is a row.
var families = []family{
	{"clock", ClockJump, unobserved},
	{"kill", Restart, unobserved},
	{"power-loss", PowerLoss, unobserved},
	{"failover", Failover, unobserved},
	{"evict", Evicted, unobserved},
	{"server-stall", ServerStall, unmarked},
	{"connection", BrokenConnection, unmarked},
	{"replica-link", ReplicationCut, unmarked},
	{"cluster", PromotedWithoutKey, withEvidence},
	{"client-pause", Stalled, withEvidence},
	{"client-stop", LateNotice, withEvidence},
	// The faults that hold replies, named by a late grant.
	{"delay-grant", LateGrant, withEvidence},
	{"latency", LateGrant, withEvidence},
	{"latency-group", LateGrant, withEvidence},
}

// legacyFamilies are the families of the kinds whose name is not their
// family, for a history written before fault-starts carried one (its
// kind is the first word of the description). It never grows: a kind
// added since records its family.
var legacyFamilies = map[string]string{
	"kill-quorum":  "kill",
	"clock-holder": "clock", "clock-minority": "clock", "clock-majority": "clock", "clock-partition": "clock",
	"clock-back-slew": "clock", "clock-drift": "clock",
	"failover-unreplicated":         "failover",
	"cluster-failover-unreplicated": "cluster", "cluster-kill-master": "cluster",
	"cluster-partition-master": "cluster", "cluster-migrate": "cluster",
	"pause-holder": "client-pause", "power-loss-holder": "power-loss", "client-stop-random": "client-stop",
	"noeviction": "evict", "server-stall-holder": "server-stall", "partition-holder": "partition",
	"reset-peer": "connection", "limit-data": "connection", "slicer": "connection", "conn-drop": "connection",
	"replica-partition": "replica-link", "replica-latency": "replica-link",
}

// fault is a fault window, numbered, with its family and the nodes its
// description names.
type fault struct {
	num    int // 1-based
	w      checker.Window
	family string
	nodes  []int
}

var nodeRef = regexp.MustCompile(`\bn([0-9]+)\b`)

func faults(r *checker.Result) []fault {
	var fs []fault
	for i, w := range r.Stats.FaultWindows {
		f := fault{num: i + 1, w: w, family: w.Family}
		if f.family == "" {
			kind, _, _ := strings.Cut(w.Desc, " ")
			kind = strings.TrimSuffix(kind, ":")
			f.family = cmp.Or(legacyFamilies[kind], kind)
		}
		// A targeted fault's description ends with the hold it struck
		// at ("…, at client 3's hold of k0 granted by n2,n3 …"): its
		// nodes are the hold's, not the fault's.
		targets, _, _ := strings.Cut(w.Desc, ", at client ")
		for _, m := range nodeRef.FindAllStringSubmatch(targets, -1) {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				f.nodes = append(f.nodes, n-1)
			}
		}
		fs = append(fs, f)
	}
	return fs
}

func (f fault) String() string {
	return fmt.Sprintf("fault #%d (%s, %s–%s)", f.num, f.w.Desc, Secs(f.w.Start), Secs(f.w.End))
}

// find returns the last fault that makes cause (on node, when node ≥ 0
// and the fault names nodes) active at some time in [from, to]; of the
// families that make it, the first in the table with such a fault.
func find(fs []fault, cause Cause, node int, from, to int64) (fault, bool) {
	for _, fam := range families {
		if fam.cause != cause {
			continue
		}
		if f, ok := findFamily(fs, fam.name, node, from, to); ok {
			return f, true
		}
	}
	return fault{}, false
}

// findFamily is find for the faults of one family.
func findFamily(fs []fault, family string, node int, from, to int64) (fault, bool) {
	return lastFault(fs, from, to, func(f fault) bool {
		return f.family == family && (node < 0 || len(f.nodes) == 0 || slices.Contains(f.nodes, node))
	})
}

func anyFault(fs []fault, from, to int64) bool {
	_, ok := lastFault(fs, from, to, func(fault) bool { return true })
	return ok
}

// lastFault returns the last fault of fs active at some time in [from,
// to] that is wanted.
func lastFault(fs []fault, from, to int64, wanted func(fault) bool) (fault, bool) {
	var best fault
	ok := false
	for _, f := range fs {
		if f.w.Start <= to && f.w.End >= from && wanted(f) {
			best, ok = f, true
		}
	}
	return best, ok
}

// causeOf is the cause the table names for a family, "" for none.
func causeOf(name string) Cause {
	for _, fam := range families {
		if fam.name == name {
			return fam.cause
		}
	}
	return ""
}
