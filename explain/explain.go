package explain

import (
	"fmt"
	"strconv"
	"strings"

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
	f := explainOverlap(a, fs, ke, la, lb)
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
			if f, ok := find(fs, Restart, n, v.A.Start, v.B.Start); ok && len(f.nodes) > 0 {
				ex.Cause, ex.Fault, ex.Nodes = Restart, f.num, []string{NodeName(n)}
				ex.Text = fmt.Sprintf("%s %s restarted %s between the two grants: its counter began again. Cause: %s.", text, capital(f.String()), NodeName(n), Restart)
				return ex
			}
		}
	}
	ex.Text = fmt.Sprintf("%s No restart came between them: the lock's token does not order its grants (a maximum of per-node counters counts, on each majority, only the grants that majority saw). Cause: %s.", text, LockLogic)
	return ex
}

// untilReleased reports whether l claims no validity: a lock that renews
// itself, or whose users hold until they release, is recorded with a
// validity a century away.
func untilReleased(l checker.Lease) bool {
	const day = 24 * 3600 * 1e9
	return validity(l)-l.Invoked > 365*day
}

// capital capitalises the first letter of s, which begins a sentence.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
		if f, ok := find(fs, Stalled, -1, p.s.Call, p.s.Return); ok {
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
	f := explainOverlap(a, fs, a.Keys[lu.Key], first, second)
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
