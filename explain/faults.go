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

// family is a fault family (nemesis.Kind.Family) and the cause its faults
// make.
type family struct {
	name  string
	cause Cause
	// blame says when its fault is named without a node's evidence of its
	// work.
	blame blame
}

// blame is when a family's fault is named on the faults alone.
type blame int

const (
	// withEvidence: only where the evidence (or a detector's reading of the
	// leases) shows its work.
	withEvidence blame = iota
	// unobserved: also when no node was observed, if active between the
	// acquires.
	unobserved
	// unmarked: also when nothing else is named: it leaves no mark on a key
	// (a stall, a broken connection, a cut link).
	unmarked
)

// families is the one table from fault family to cause, in the order faults
// are named when families share a cause or a blame.
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

// legacyFamilies are the families of the kinds not named after theirs, for a
// history written before fault-starts carried one (the kind is the
// description's first word). It never grows.
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

// fault is a numbered fault window, its family and the nodes its description
// names.
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
		// A targeted fault's description ends with the hold it struck at ("…,
		// at client 3's hold of k0 granted by n2,n3 …"): those nodes are not
		// the fault's.
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

// find returns the last fault that makes cause active in [from, to] (on node,
// when node ≥ 0 and the fault names nodes), of the first family in the table
// that has one.
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

// lastFault returns the last wanted fault of fs active in [from, to].
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
