package explain

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// Cause is what made a violation happen, as the evidence shows it.
type Cause string

const (
	// ClockJump: a node that granted the earlier lease expired its key
	// during or after a clock fault on that node, while the holder's
	// validity ran on.
	ClockJump Cause = "clock jump"
	// Restart: a node that granted the earlier lease was killed and
	// restarted without persistence, forgetting the key, and granted the
	// later lease.
	Restart Cause = "restart without persistence"
	// Failover: a failover promoted a replica that did not have the key,
	// and the new primary granted the later lease.
	Failover Cause = "failover promotion without the key"
	// Stalled: a holder's critical section went on past its lease's
	// validity (a stalled client) and wrote after another's; the leases
	// themselves did not overlap (resource only).
	Stalled Cause = "holder stalled past its validity"
	// ExtendAfterExpiry: the holder's lease was extended on a node after
	// that node had expired or deleted the key, so the validity it was
	// told ran on a key that no longer existed.
	ExtendAfterExpiry Cause = "extend after expiry"
	// LateNotice: the earlier holder's lock claims no validity (it renews
	// itself, or its users hold until they release) and the holder was
	// told it lost the lock only after the other client was granted it,
	// or not at all before it released: its whole process was stopped (a
	// client-stop fault) while its key expired, or its lock noticed the
	// loss too late.
	LateNotice Cause = "holder told too late"
	// Evicted: a node that granted the earlier lease evicted its key under
	// memory pressure (maxmemory with an evicting policy) and granted the
	// later lease.
	Evicted Cause = "key evicted under maxmemory"
	// PowerLoss: a node that granted the earlier lease lost its power: it
	// was killed and what it had written but not fsynced was dropped, the
	// grant with it; it came back without the key and granted the later
	// lease.
	PowerLoss Cause = "power loss dropped the unsynced grant"
	// ServerStall: a node that granted the earlier lease stalled (its
	// event loop stopped, DEBUG SLEEP or CLIENT PAUSE) and expired the key
	// while the holder counted on it.
	ServerStall Cause = "server stall"
	// BrokenConnection: a connection fault (a reset, a cut after some
	// bytes, sliced replies, dropped connections) was active between the
	// two acquires, and no node's evidence names another cause: a reply
	// lost with its connection, an outcome the lock took for known.
	BrokenConnection Cause = "broken connection"
	// ReplicationCut: the link between the primary and its replica was cut
	// or slowed between the two acquires, and no node's evidence names
	// another cause.
	ReplicationCut Cause = "replication link cut"
	// PromotedWithoutKey: on Redis Cluster, the master of the key's slot
	// granted the first lease and the cluster then promoted its replica
	// (a forced failover, a killed master), which the node evidence shows
	// never had the key before the second grant: the grant had not been
	// replicated.
	PromotedWithoutKey Cause = "promoted replica without the key"
	// MinorityMaster: on Redis Cluster, the master of the key's slot was
	// cut off every other node (cluster-partition-master) before it
	// granted the first lease: a minority of one, it still accepted the
	// write until the node timeout told it so, and the majority promoted
	// its replica, which the node evidence shows never had the key, and
	// which granted the second.
	MinorityMaster Cause = "minority master accepted the grant"
	// LateGrant: the key an acquire set expired before that acquire
	// returned granted (its replies were slow, or held by a fault): the
	// lock did not count the time its round took, and told its holder it
	// held a key that was already gone, which the next client set.
	LateGrant Cause = "granted after its key expired"
	// LockLogic: no fault explains it; the nodes' evidence shows the lock
	// itself broke exclusion (a key set over a live one, deleted for
	// another client, quorums that do not intersect, a validity that
	// outlived the key): a mutant.
	LockLogic Cause = "the lock's own logic"
	// Unknown: the evidence does not say.
	Unknown Cause = "unknown"
)

// Causes lists every Cause, in the order of their constants.
var Causes = []Cause{ClockJump, Restart, Failover, PromotedWithoutKey, MinorityMaster, Stalled, ExtendAfterExpiry, LateNotice, Evicted, PowerLoss, ServerStall, BrokenConnection, ReplicationCut, LateGrant, LockLogic, Unknown}

// Explanation is the cause of one violation, in one paragraph.
type Explanation struct {
	// Property is "lease" (two holds overlapped), "fence" (a later
	// grant's fencing token was not above an earlier one's: a lease
	// violation too) or "resource" (an update was lost).
	Property string `json:"property"`
	// Key is the lock key.
	Key string `json:"key"`
	// At is the time of the violation: the start of the overlap, or the
	// return of the section that completed second.
	At int64 `json:"at"`
	// Cause is the cause named.
	Cause Cause `json:"cause"`
	// Fault is the number (1, 2, …, as in Result.Stats.FaultWindows) of
	// the fault blamed; 0 for none.
	Fault int `json:"fault,omitempty"`
	// Nodes are the nodes (n1, n2, …) of the evidence.
	Nodes []string `json:"nodes,omitempty"`
	// Text is the paragraph.
	Text string `json:"text"`
}

// DefaultLimit is how many violations Explain explains when its limit is
// not positive.
const DefaultLimit = 20

// Explain explains the violations of a: the lease overlaps first, then
// the fencing tokens out of order, then the lost updates, each earliest
// first, at most limit of them (when limit ≤ 0, DefaultLimit); total is
// how many there are (those beyond the checker's caps not counted).
func Explain(a *checker.Analysis, limit int) (ex []Explanation, total int) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	r := &a.Result
	total = len(r.LeaseViolations) + len(r.FenceViolations) + len(a.LostUpdates)
	for _, ov := range r.LeaseViolations {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, overlap(a, ov))
	}
	for _, fv := range r.FenceViolations {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, fence(a, fv))
	}
	for _, lu := range a.LostUpdates {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, lost(a, lu))
	}
	return ex, total
}

// Secs formats t (ns from the run's start) as seconds with milliseconds.
func Secs(t int64) string { return fmt.Sprintf("%.3f s", float64(t)/1e9) }

// Short shortens a token to its first 6 characters (runes: a token may
// be any text, and a cut inside a character would leave a broken one).
func Short(token string) string {
	if r := []rune(token); len(r) > 6 {
		return string(r[:6]) + "…"
	}
	return token
}

// NodeName is node i's name: n1 for 0.
func NodeName(i int) string { return "n" + strconv.Itoa(i+1) }

func nodeList(ns []int) string {
	if ns == nil {
		return "nodes not reported"
	}
	if len(ns) == 0 {
		return "no node"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = NodeName(n)
	}
	return strings.Join(s, " ")
}

// fault is a fault window, numbered, with its kind and nodes parsed from
// its description.
type fault struct {
	num   int // 1-based
	w     checker.Window
	kind  string // clock, kill, failover, client-pause, pause, partition, latency, …
	nodes []int
}

var nodeRef = regexp.MustCompile(`\bn([0-9]+)\b`)

func faults(r *checker.Result) []fault {
	var fs []fault
	for i, w := range r.Stats.FaultWindows {
		f := fault{num: i + 1, w: w}
		f.kind, _, _ = strings.Cut(w.Desc, " ")
		f.kind = family(strings.TrimSuffix(f.kind, ":"))
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

// family is the kind of fault a cause names, for a fault kind: the
// targeted kinds act as the kinds they aim (kill-quorum kills,
// clock-holder and clock-partition jump node clocks, pause-holder
// stalls the holder, failover-unreplicated fails over,
// server-stall-holder stalls a node); the two memory kinds are
// "evict", the connection kinds "connection", the replication link's
// "replica-link"; the rest are their own.
func family(kind string) string {
	switch {
	case strings.HasPrefix(kind, "kill"):
		return "kill"
	case strings.HasPrefix(kind, "clock"):
		return "clock"
	case strings.HasPrefix(kind, "failover"):
		return "failover"
	case strings.HasPrefix(kind, "cluster-"):
		return "cluster"
	case kind == "pause-holder":
		return "client-pause"
	case kind == "power-loss-holder":
		return "power-loss"
	case strings.HasPrefix(kind, "client-stop"):
		return "client-stop"
	case kind == "evict" || kind == "noeviction":
		return "evict"
	case strings.HasPrefix(kind, "server-stall"):
		return "server-stall"
	case kind == "reset-peer" || kind == "limit-data" || kind == "slicer" || kind == "conn-drop":
		return "connection"
	case strings.HasPrefix(kind, "replica-"):
		return "replica-link"
	}
	return kind
}

func (f fault) String() string {
	return fmt.Sprintf("fault #%d (%s, %s–%s)", f.num, f.w.Desc, Secs(f.w.Start), Secs(f.w.End))
}

// cutOffAt reads when cluster-partition-master cut its master off, from
// its description ("… master n2 cut off at 7.531s, at client …").
var cutOffAt = regexp.MustCompile(`^cluster-partition-master: .* cut off at ([0-9.]+(?:ms|s|m))\b`)

// minorityCut reports whether f cut the master that alone granted la off
// the other nodes before la's acquire returned, and when it did.
func minorityCut(f fault, la checker.Lease) (int64, bool) {
	m := cutOffAt.FindStringSubmatch(f.w.Desc)
	if m == nil || len(la.Granted) != 1 || len(f.nodes) == 0 || f.nodes[0] != la.Granted[0] {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || int64(d) > la.Start {
		return 0, false
	}
	return int64(d), true
}

// find returns the last fault of kind (on node, when node ≥ 0 and the
// fault names nodes) active at some time in [from, to].
func find(fs []fault, kind string, node int, from, to int64) (fault, bool) {
	var best fault
	ok := false
	for _, f := range fs {
		if f.kind != kind || f.w.Start > to || f.w.End < from {
			continue
		}
		if node >= 0 && len(f.nodes) > 0 && !slices.Contains(f.nodes, node) {
			continue
		}
		best, ok = f, true
	}
	return best, ok
}

// finding is what one node's evidence says of an overlap.
type finding struct {
	cause Cause
	fault int
	node  int
	text  string
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

// lease is the lease of key with token current at t (a hold's start, a
// section's call): a token fixed per client is granted many times.
func lease(a *checker.Analysis, key, token string, t int64) (checker.Lease, bool) {
	return a.LeaseAt(key, token, t)
}

// validity is the lease's validity at its end: the last extend ok
// invoked before the validity then.
func validity(l checker.Lease) int64 {
	v := l.ValidUntil
	for _, e := range l.Extends {
		if e.Type == "ok" && e.Invoked < v {
			v = e.ValidUntil
		}
	}
	return v
}

func overlap(a *checker.Analysis, ov checker.Overlap) Explanation {
	ex := Explanation{Property: "lease", Key: ov.Key, At: ov.Start, Cause: Unknown}
	la, okA := lease(a, ov.Key, ov.A.Token, ov.A.Start)
	lb, okB := lease(a, ov.Key, ov.B.Token, ov.B.Start)
	head := fmt.Sprintf("P%d held %s from %s", ov.A.Process, ov.Key, Secs(ov.A.Start))
	tail := fmt.Sprintf("P%d acquired %s at %s", ov.B.Process, ov.Key, Secs(ov.B.Start))
	if okA {
		valid := "valid to " + Secs(validity(la))
		if untilReleased(la) {
			valid = "no validity: held until released or told it lost the lock"
		}
		head += fmt.Sprintf(" (token %s, granted by %s, %s)", Short(la.Token), nodeList(la.Granted), valid)
	}
	if okB {
		tail += fmt.Sprintf(" from %s", nodeList(lb.Granted))
	}
	both := fmt.Sprintf("Both held it %s–%s.", Secs(ov.Start), Secs(ov.End))
	if !okA || !okB {
		ex.Text = fmt.Sprintf("%s. %s. %s No evidence of the leases.", head, tail, both)
		return ex
	}
	fs := faults(&a.Result)
	ke := a.Keys[ov.Key]
	f := cause(a, fs, ke, la, lb)
	ex.Cause, ex.Fault = f.cause, f.fault
	if f.node >= 0 {
		ex.Nodes = []string{NodeName(f.node)}
	}
	ex.Text = fmt.Sprintf("%s. %s %s. %s Cause: %s.", head, f.text, tail, both, f.cause)
	return ex
}

// fence explains a fencing token that did not grow: a node that granted
// the later hold and restarted between the two grants (a kill fault on
// it) began its counter again; else the lock's tokens do not order its
// grants (RedLock's maximum of per-node counters: two majorities count
// different grants).
func fence(a *checker.Analysis, v checker.FenceViolation) Explanation {
	ex := Explanation{Property: "fence", Key: v.Key, At: v.B.Start, Cause: LockLogic}
	text := fmt.Sprintf("P%d was granted %s at %s with fencing token %d, after P%d's grant at %s with %d: the tokens do not increase in grant order, so a resource that keeps the highest token refuses the newer holder, or, checking writes only, takes the older holder's late write.",
		v.B.Process, v.Key, Secs(v.B.Start), v.B.Fence, v.A.Process, Secs(v.A.Start), v.A.Fence)
	la, okA := lease(a, v.Key, v.A.Token, v.A.Start)
	lb, okB := lease(a, v.Key, v.B.Token, v.B.Start)
	if okA && okB && la.Granted != nil && lb.Granted != nil {
		text += fmt.Sprintf(" P%d's grant came from %s, P%d's from %s.", v.A.Process, nodeList(la.Granted), v.B.Process, nodeList(lb.Granted))
		fs := faults(&a.Result)
		for _, n := range lb.Granted {
			if f, ok := find(fs, "kill", n, v.A.Start, v.B.Start); ok && len(f.nodes) > 0 {
				ex.Cause, ex.Fault, ex.Nodes = Restart, f.num, []string{NodeName(n)}
				ex.Text = fmt.Sprintf("%s %s restarted %s between the two grants: its counter began again. Cause: %s.", text, capital(f.String()), NodeName(n), Restart)
				return ex
			}
		}
	}
	ex.Text = fmt.Sprintf("%s No restart came between them: the lock's token does not order its grants (a maximum of per-node counters counts, on each majority, only the grants that majority saw). Cause: %s.", text, LockLogic)
	return ex
}

// cause finds the cause of lease lb starting inside lease la.
func cause(a *checker.Analysis, fs []fault, ke *checker.KeyEvidence, la, lb checker.Lease) finding {
	var obs []checker.NodeObservation
	if ke != nil {
		obs = ke.Nodes
	}
	// The nodes to look at: those that granted both; with no report, every
	// node observed.
	var common []int
	switch {
	case la.Granted != nil && lb.Granted != nil:
		for _, n := range la.Granted {
			if slices.Contains(lb.Granted, n) {
				common = append(common, n)
			}
		}
	default:
		for _, o := range obs {
			if !slices.Contains(common, o.Node) {
				common = append(common, o.Node)
			}
		}
		slices.Sort(common)
	}

	if f, ok := lateNotice(fs, obs, la, lb); ok {
		return f
	}

	// Extend after expiry: an extend ok granted by a node that had already
	// lost the key.
	for _, e := range la.Extends {
		if e.Type != "ok" {
			continue
		}
		for _, n := range e.Granted {
			if rm, ok := removal(obs, n, la.Start, e.Completed); ok {
				return finding{cause: ExtendAfterExpiry, node: n, text: fmt.Sprintf("%s %s the key at %s; P%d's extend at %s (invoked %s) was granted by %s all the same, the validity pushed to %s.",
					NodeName(n), rm.Event, Secs(rm.Time), la.Process, Secs(e.Completed), Secs(e.Invoked), NodeName(n), Secs(e.ValidUntil))}
			}
		}
	}

	if len(common) == 0 && la.Granted != nil && lb.Granted != nil {
		if f, ok := find(fs, "cluster", -1, la.Invoked, lb.Start); ok {
			text := fmt.Sprintf("%s, started %s after the lease was granted by %s, promoted %s in its place.", capital(f.String()), secsDelta(f.w.Start-la.Start), nodeList(la.Granted), nodeList(lb.Granted))
			missing := a.Observed
			for _, n := range lb.Granted {
				if a.Observed && !setBetween(obs, n, la.Invoked, lb.Invoked) {
					text += fmt.Sprintf(" %s never had the key before P%d set it: %s's grant had not been replicated.", NodeName(n), lb.Process, nodeList(la.Granted))
				} else {
					missing = false
				}
			}
			if missing {
				if cut, ok := minorityCut(f, la); ok {
					text = fmt.Sprintf("%s: %s was cut off every other node at %s and granted P%d's lease at %s all the same, a minority of one that had not yet noticed (the node timeout); the majority promoted %s in its place.",
						capital(f.String()), nodeList(la.Granted), Secs(cut), la.Process, Secs(la.Start), nodeList(lb.Granted))
					for _, n := range lb.Granted {
						text += fmt.Sprintf(" %s never had the key before P%d set it.", NodeName(n), lb.Process)
					}
					return finding{cause: MinorityMaster, fault: f.num, node: firstOr(la.Granted), text: text}
				}
				return finding{cause: PromotedWithoutKey, fault: f.num, node: firstOr(lb.Granted), text: text}
			}
		}
		if f, ok := find(fs, "failover", -1, la.Invoked, lb.Start); ok {
			text := fmt.Sprintf("%s, started %s after the lease was granted, made %s the primary.", capital(f.String()), secsDelta(f.w.Start-la.Start), nodeList(lb.Granted))
			for _, n := range lb.Granted {
				if !setBetween(obs, n, la.Invoked, lb.Invoked) && a.Observed {
					text += fmt.Sprintf(" %s never had the key before P%d set it.", NodeName(n), lb.Process)
				}
			}
			return finding{cause: Failover, fault: f.num, node: firstOr(lb.Granted), text: text}
		}
		return finding{cause: LockLogic, node: -1, text: fmt.Sprintf("No node granted both leases (%s and %s): the quorums do not intersect.", nodeList(la.Granted), nodeList(lb.Granted))}
	}

	best := finding{cause: Unknown, node: -1, text: "The evidence names no cause."}
	for _, n := range common {
		f := nodeCause(fs, ke, obs, n, la, lb)
		if rank(f.cause) > rank(best.cause) {
			best = f
		}
	}
	if best.cause == Unknown && !a.Observed {
		// No observation: faults alone, else the lock.
		for _, kind := range []string{"clock", "kill", "power-loss", "failover", "evict"} {
			if f, ok := find(fs, kind, -1, la.Invoked, lb.Start); ok {
				c := map[string]Cause{"clock": ClockJump, "kill": Restart, "power-loss": PowerLoss, "failover": Failover, "evict": Evicted}[kind]
				return finding{cause: c, fault: f.num, node: firstOr(f.nodes), text: fmt.Sprintf("No node observations; %s was active between the two acquires.", f)}
			}
		}
		if len(fs) == 0 || !anyFault(fs, la.Invoked, lb.Start) {
			return finding{cause: LockLogic, node: -1, text: "No fault was active between the two acquires."}
		}
	}
	if best.cause == Unknown {
		// Faults that leave no mark on a node's key: a stall, a broken
		// connection, a cut replication link, named when nothing else is.
		for _, kind := range []string{"server-stall", "connection", "replica-link"} {
			if f, ok := find(fs, kind, -1, la.Invoked, lb.Start); ok {
				c := map[string]Cause{"server-stall": ServerStall, "connection": BrokenConnection, "replica-link": ReplicationCut}[kind]
				return finding{cause: c, fault: f.num, node: firstOr(f.nodes), text: fmt.Sprintf("%s %s was active between the two acquires, and no node was seen to lose the key otherwise.", best.text, capital(f.String()))}
			}
		}
	}
	return best
}

// nodeCause is what node n's evidence says of lease lb starting inside
// la, both granted by n. It looks at what n did to the key after la's ok
// and before lb's (with a slack of lag, 50 ms, for the notifications):
// an expiry or eviction (during a clock fault on n: a clock jump); a del
// that was not la's release; else a kill or failover fault; else two sets
// (la's and lb's) with nothing removed between them.
func nodeCause(fs []fault, ke *checker.KeyEvidence, obs []checker.NodeObservation, n int, la, lb checker.Lease) finding {
	name := NodeName(n)
	valid := validity(la)
	const lag = 50e6
	var expired, before, deleted *checker.NodeObservation
	sets := 0
	from := min(la.Invoked, lb.Invoked)
	for i := range obs {
		o := &obs[i]
		if o.Node != n || o.Time < from || o.Time > lb.Start+lag {
			continue
		}
		switch {
		case o.Event == "set":
			if o.Time >= la.Invoked {
				sets++
			}
		case o.Time <= la.Start:
			// Removed before la's ok: an earlier key's end, or lb's
			// own key (lb set it first and returned later), which
			// counts when a clock fault on n expired it.
			if o.Event == "expired" && before == nil {
				before = o
			}
		case (o.Event == "expired" || o.Event == "evicted") && expired == nil:
			expired = o
		case o.Event == "del" && deleted == nil && (la.Released == 0 || la.Released > o.Time):
			deleted = o
		}
	}
	if expired == nil && before != nil {
		if f, ok := find(fs, "clock", n, from, before.Time); ok {
			return finding{cause: ClockJump, fault: f.num, node: n, text: fmt.Sprintf("%s expired the key at %s, %s after the start of %s, and granted it again.",
				name, Secs(before.Time), secsDelta(before.Time-f.w.Start), f)}
		}
	}
	if f, ok := lateGrant(fs, obs, n, la); ok {
		return f
	}
	if expired != nil {
		rm := *expired
		early := ""
		if rm.Time < valid {
			early = fmt.Sprintf(", %s before the end of P%d's validity", secsDelta(valid-rm.Time), la.Process)
		}
		if rm.Event == "evicted" {
			if f, ok := find(fs, "evict", n, la.Invoked, rm.Time); ok {
				return finding{cause: Evicted, fault: f.num, node: n, text: fmt.Sprintf("%s evicted the key at %s%s, %s after the start of %s, and granted it again.",
					name, Secs(rm.Time), early, secsDelta(rm.Time-f.w.Start), f)}
			}
			return finding{cause: Evicted, node: n, text: fmt.Sprintf("%s evicted the key at %s%s (maxmemory under an evicting policy, set outside the run's faults), and granted it again.", name, Secs(rm.Time), early)}
		}
		if f, ok := find(fs, "clock", n, la.Invoked, rm.Time); ok {
			return finding{cause: ClockJump, fault: f.num, node: n, text: fmt.Sprintf("%s %s the key at %s%s, %s after the start of %s.",
				name, rm.Event, Secs(rm.Time), early, secsDelta(rm.Time-f.w.Start), f)}
		}
		if f, ok := find(fs, "server-stall", n, la.Invoked, rm.Time); ok {
			return finding{cause: ServerStall, fault: f.num, node: n, text: fmt.Sprintf("%s expired the key at %s%s, after %s stopped its event loop.",
				name, Secs(rm.Time), early, f)}
		}
		if f, ok := find(fs, "client-pause", -1, la.Start, lb.Start); ok {
			return finding{cause: Stalled, fault: f.num, node: n, text: fmt.Sprintf("%s %s the key at %s%s, while %s stalled the holder.", name, rm.Event, Secs(rm.Time), early, f)}
		}
		if f, ok := find(fs, "kill", n, la.Invoked, rm.Time); ok {
			return finding{cause: Restart, fault: f.num, node: n, text: fmt.Sprintf("%s %s the key at %s%s, after %s.", name, rm.Event, Secs(rm.Time), early, f)}
		}
		if f, ok := find(fs, "power-loss", n, la.Invoked, rm.Time); ok {
			return finding{cause: PowerLoss, fault: f.num, node: n, text: fmt.Sprintf("%s dropped what %s had not fsynced, the grant with it; %s came back with an older copy of the key, which it %s at %s%s, and granted it again.",
				capital(f.String()), name, name, rm.Event, Secs(rm.Time), early)}
		}
		return finding{cause: LockLogic, node: n, text: fmt.Sprintf("%s expired the key at %s%s, with no clock or restart fault on it: the lock told the holder a validity longer than the key's life.", name, Secs(rm.Time), early)}
	}
	if f, ok := find(fs, "power-loss", n, la.Invoked, lb.Start); ok {
		return finding{cause: PowerLoss, fault: f.num, node: n, text: fmt.Sprintf("%s, %s after the lease was granted, killed %s and dropped what it had not fsynced, the grant with it; %s came back without the key and granted it again.",
			capital(f.String()), secsDelta(f.w.Start-la.Start), name, name)}
	}
	if f, ok := find(fs, "kill", n, la.Invoked, lb.Start); ok {
		return finding{cause: Restart, fault: f.num, node: n, text: fmt.Sprintf("%s, %s after the lease was granted, restarted %s empty; it granted the key again.", capital(f.String()), secsDelta(f.w.Start-la.Start), name)}
	}
	if f, ok := find(fs, "failover", -1, la.Invoked, lb.Start); ok {
		return finding{cause: Failover, fault: f.num, node: n, text: fmt.Sprintf("%s was active between the two acquires.", capital(f.String()))}
	}
	if deleted != nil {
		text := fmt.Sprintf("%s deleted the key at %s, while P%d held it and had not released it.", name, Secs(deleted.Time), la.Process)
		if p, ok := releaser(ke, la, deleted.Time); ok {
			text += fmt.Sprintf(" P%d had invoked a release of its own lease %s before.", p.Process, Short(p.Token))
		}
		return finding{cause: LockLogic, node: n, text: text}
	}
	if sets >= 2 {
		return finding{cause: LockLogic, node: n, text: fmt.Sprintf("%s set the key for P%d at about %s over P%d's, which it had neither expired nor deleted.", name, lb.Process, Secs(lb.Start), la.Process)}
	}
	return finding{cause: Unknown, node: n, text: fmt.Sprintf("%s granted both; it was not seen to lose the key.", name)}
}

// lateGrant explains lease la whose own key on node n expired before its
// acquire returned: n set the key after la's acquire was invoked and
// expired it before la's ok (no clock fault on n did it: nodeCause looks
// for one first). A delay or latency fault active then is named as what
// held the replies.
func lateGrant(fs []fault, obs []checker.NodeObservation, n int, la checker.Lease) (finding, bool) {
	var set, gone *checker.NodeObservation
	for i := range obs {
		o := &obs[i]
		if o.Node != n || o.Time < la.Invoked || o.Time > la.Start {
			continue
		}
		switch {
		case o.Event == "set" && set == nil:
			set = o
		case o.Event == "expired" && set != nil && gone == nil:
			gone = o
		}
	}
	if gone == nil {
		return finding{}, false
	}
	text := fmt.Sprintf("%s set the key for P%d's acquire (invoked %s) at %s and expired it at %s, %s before that acquire returned granted at %s: the lock said granted for a key already gone, the time its round took not counted",
		NodeName(n), la.Process, Secs(la.Invoked), Secs(set.Time), Secs(gone.Time), secsDelta(la.Start-gone.Time), Secs(la.Start))
	f := finding{cause: LateGrant, node: n}
	// A delay-grant records its start once the grant it held is back:
	// a little after la's ok.
	const lag = 50e6
	for _, kind := range []string{"delay-grant", "latency", "latency-group"} {
		if flt, ok := find(fs, kind, -1, la.Invoked, la.Start+lag); ok {
			text += "; its replies were held by " + flt.String()
			f.fault = flt.num
			break
		}
	}
	f.text = text + "."
	return f, true
}

// untilReleased reports whether l claims no validity: a lock that renews
// itself, or whose users hold until they release, is recorded with a
// validity a century away.
func untilReleased(l checker.Lease) bool {
	const day = 24 * 3600 * 1e9
	return validity(l)-l.Invoked > 365*day
}

// clientRef finds the client a client-stop fault's description names
// ("stop client 3's process …").
var clientRef = regexp.MustCompile(`\bclient ([0-9]+)'s process`)

// stoppedBy returns the client-stop fault active at some time in [from,
// to] that stopped client p's process.
func stoppedBy(fs []fault, p int, from, to int64) (fault, bool) {
	var best fault
	ok := false
	for _, f := range fs {
		if f.kind != "client-stop" || f.w.Start > to || f.w.End < from {
			continue
		}
		targets, _, _ := strings.Cut(f.w.Desc, ", at client ")
		m := clientRef.FindStringSubmatch(targets)
		if m == nil || m[1] != strconv.Itoa(p) {
			continue
		}
		best, ok = f, true
	}
	return best, ok
}

// lateNotice explains lease lb starting inside la when la claims no
// validity and its holder was told of the loss only after lb's grant, or
// not at all while it held: how late, by the node observer's expiry of
// the key, and the client-stop fault that stopped its process, if one
// did.
func lateNotice(fs []fault, obs []checker.NodeObservation, la, lb checker.Lease) (finding, bool) {
	if !untilReleased(la) {
		return finding{}, false
	}
	stop, stopped := stoppedBy(fs, la.Process, la.Start, lb.Start)
	// Told after the other's grant, while it still held (the notice
	// ended its hold), or after it released (the notice came too late
	// to end it).
	late := la.Lost > lb.Start && (la.Released == 0 || la.Lost <= la.Released)
	// The key's end on a node that granted la, as its observer saw it.
	var gone *checker.NodeObservation
	for i := range obs {
		o := &obs[i]
		if o.Time > la.Start && o.Time <= lb.Start+50e6 && (o.Event == "expired" || o.Event == "evicted") &&
			(la.Granted == nil || slices.Contains(la.Granted, o.Node)) {
			gone = o
			break
		}
	}
	if !late && !stopped && !(la.Lost > lb.Start) {
		if gone != nil && la.Lost == 0 {
			// Running, yet never told: the lock's own logic (a watchdog
			// that ignores its failed renewals, a lock whose users hold
			// until they release).
			return finding{cause: LockLogic, node: gone.Node, text: fmt.Sprintf("%s %s the key at %s; P%d's lock claims no validity and never told it the lease was lost.",
				NodeName(gone.Node), gone.Event, Secs(gone.Time), la.Process)}, true
		}
		return finding{}, false // never told and never stopped: see nodeCause
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

// releaser returns another lease of the key whose release was invoked in
// the half second before t (a release that deleted la's key).
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

// capital capitalises the first letter of s, which begins a sentence.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func anyFault(fs []fault, from, to int64) bool {
	for _, f := range fs {
		if f.w.Start <= to && f.w.End >= from {
			return true
		}
	}
	return false
}

func firstOr(ns []int) int {
	if len(ns) == 0 {
		return -1
	}
	return ns[0]
}

func secsDelta(d int64) string {
	if d < 0 {
		return "-" + secsDelta(-d)
	}
	return fmt.Sprintf("%.3f s", float64(d)/1e9)
}

// lost explains a lost update: the sections of two leases that read the
// same value.
func lost(a *checker.Analysis, lu checker.LostUpdate) Explanation {
	ex := Explanation{Property: "resource", Key: lu.Key, At: lu.At, Cause: Unknown}
	s1, s2 := lu.A, lu.B
	desc := fmt.Sprintf("P%d's section (%s–%s) and P%d's (%s–%s) on %s both read %d and wrote %d: an update was lost.",
		s1.Process, Secs(s1.Call), Secs(s1.Return), s2.Process, Secs(s2.Call), Secs(s2.Return), lu.Key, s1.Read, s1.Read+1)
	l1, ok1 := lease(a, lu.Key, s1.Token, s1.Call)
	l2, ok2 := lease(a, lu.Key, s2.Token, s2.Call)
	if !ok1 || !ok2 {
		ex.Text = desc + " No lease of the sections is known. Cause: unknown."
		return ex
	}
	fs := faults(&a.Result)
	// A section that returned after its lease's validity: the holder
	// stalled (the later write is the stale one).
	for _, p := range []struct {
		s checker.OKSection
		l checker.Lease
	}{{s1, l1}, {s2, l2}} {
		v := validity(p.l)
		if p.s.Return <= v {
			continue
		}
		ex.Cause = Stalled
		text := fmt.Sprintf(" P%d's lease %s was valid to %s; its section wrote at %s, %s later", p.l.Process, Short(p.l.Token), Secs(v), Secs(p.s.Return), secsDelta(p.s.Return-v))
		if f, ok := find(fs, "client-pause", -1, p.s.Call, p.s.Return); ok {
			ex.Fault = f.num
			text += fmt.Sprintf(", stalled by %s", f)
		}
		ex.Text = desc + text + ". Cause: " + string(Stalled) + "."
		return ex
	}
	// Both wrote within their validity: the leases overlapped.
	first, second := l1, l2
	if second.Start < first.Start {
		first, second = second, first
	}
	f := cause(a, fs, a.Keys[lu.Key], first, second)
	ex.Cause, ex.Fault = f.cause, f.fault
	if f.node >= 0 {
		ex.Nodes = []string{NodeName(f.node)}
	}
	firstValid := "valid to " + Secs(validity(first))
	if untilReleased(first) {
		firstValid = "held until released or told it lost the lock"
	}
	ex.Text = fmt.Sprintf("%s Both wrote within their leases (P%d's %s, P%d's from %s): the leases overlapped. %s Cause: %s.",
		desc, first.Process, firstValid, second.Process, Secs(second.Start), f.text, f.cause)
	return ex
}
