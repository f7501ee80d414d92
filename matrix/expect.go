package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// Row is one row of the literature table: what the literature expects of
// every lock of a class under one fault, with the workload that exposes
// it. Its Spec is the cell's template: Name is the fault's part of the
// cell's name ("latency", "kill-immediate"), or a workload variant and
// the fault ("+extend/latency", giving lock+extend/latency), Lock is
// empty and Nodes 0 takes the lock's quorum (or one node); Derive fills
// them in.
type Row struct {
	// When selects the locks the row is for, by the traits of their
	// promises: space-separated words, each required, or excluded with a
	// leading "!" (locks.Promises.Satisfies). "" is every lock.
	When string
	Spec
}

// Literature is the table of expectations: for a class of lock (When)
// under a fault, the outcome the literature predicts, its source and the
// promise it rests on. The matrix's rows for the locks this project
// ships are derived from it (cells uses fromTable), and so are the cells
// of any registered lock's release gate (CellsFor): one table, not two.
// A row for a new fault kind or a new class is a line here; nothing else
// switches on fault or promise names.
var Literature = []Row{
	{When: "", Spec: Spec{Name: "none", Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "no faults: SET NX PX is mutual exclusion", Promise: "mutual exclusion without faults"}},
	{When: "fence-sound", Spec: Spec{Name: "none", Fencing: true, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "no faults", Promise: "mutual exclusion without faults, fencing on"}},

	// Network faults.
	{When: "quorum", Spec: Spec{Name: "partition", Nemesis: []string{"partition"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "two majorities always intersect, whatever the partition", Promise: "quorum: a grant needs a majority, and two majorities intersect"}},
	{When: "quorum elapsed", Spec: Spec{Name: "latency", Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "validity is counted from before the request", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"}},
	// #16: the Redis page states the rule for RedLock only; a single
	// instance lock rests on the lease rule itself.
	{When: "single elapsed", Spec: Spec{Name: "latency", Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcLeaseRule,
		Why: "validity is counted from before the request", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"}},
	// #14: the random latency row of the locks without the elapsed term
	// (possible) left the table for its forced form here: one acquire's reply is
	// held by just under a node call's timeout (TTL/10) and the next
	// acquire is fast; the hold (960 ms of a 1 s TTL) outlasts the key
	// only by that delay. 12 s: three steps, since one step's search for
	// a delay the lock takes can run out of window (a lock that bounds
	// its round below the delay, redsync, leaves keys of the acquires it
	// gave up until the TTL): in a loaded 8 s run both steps of one seed
	// in five missed, and the run was undecided.
	{When: "elapsed", Spec: Spec{Name: "delay-grant", Nemesis: []string{"delay-grant"}, Keys: 1, Hold: 960 * time.Millisecond, Interval: time.Second, MinDuration: 12 * time.Second, Expect: report.ExpectSafe, Source: SrcRedis + "; " + SrcLeaseRule,
		Why: "the held reply comes off the validity, so the holder's validity ends before the key expires (here its second check fails and it writes nothing)", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"}},
	{When: "!elapsed", Spec: Spec{Name: "delay-grant", Nemesis: []string{"delay-grant"}, Keys: 1, Hold: 960 * time.Millisecond, Interval: time.Second, MinDuration: 12 * time.Second, Expect: report.ExpectViolation, Source: SrcRedisPy + "; " + SrcRedis,
		Why: "no validity counted from before the request: the holder whose reply was held counts on the lease for that long after its key expired, and the next client's fast acquire takes the key meanwhile"}},

	// Process faults.
	{When: "single", Spec: Spec{Name: "kill-immediate", Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis,
		Why: "a node restarted without persistence forgets the lock"}},
	// #14: where the lock reports which nodes granted each hold, the
	// targeted kill forces what random kills leave to luck (it cuts the
	// nodes outside a bare majority off until the others grant, then
	// kills one of those); where it does not, nothing can aim at a bare
	// majority and the row stays possible. 250 ms between steps: a 10 s
	// run holds three two-TTL windows.
	{When: "quorum reports", Spec: Spec{Name: "kill-quorum", Nodes: 3, Keys: 1, Nemesis: []string{"kill-quorum"}, Hold: 800 * time.Millisecond, Interval: 250 * time.Millisecond, Expect: report.ExpectViolation, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "a node of a hold that a bare majority granted, killed while the hold is valid and restarted empty at once, makes with the node that never granted a second majority"}},
	{When: "quorum !reports", Spec: Spec{Name: "kill-immediate", Nodes: 3, Keys: 1, Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectPossible, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "a node restarted empty can hand a held lock to a second majority, if the holder had exactly a majority; kill-quorum, which forces it, aims at the nodes that granted a hold, which this lock does not report"}},
	{When: "single persist:delayed-restart", Spec: Spec{Name: "kill-delayed", Nemesis: []string{"kill"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "a node that stays down longer than the TTL comes back after every lock it granted expired", Promise: "delayed restarts: a restarted node comes back after every lock it granted expired"}},
	{When: "quorum persist:delayed-restart", Spec: Spec{Name: "kill-delayed,pause", Nemesis: []string{"kill", "pause"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "delayed restarts: a minority down or stopped cannot break the quorum", Promise: "quorum with delayed restarts: a minority down or stopped cannot break it"}},
	// #14: the control of kill-quorum: the same aim, the node back only
	// after every lease it granted expired.
	{When: "quorum persist:delayed-restart reports", Spec: Spec{Name: "kill-quorum-delayed", Nodes: 5, Keys: 1, Nemesis: []string{"kill-quorum"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectSafe, Source: SrcRedis,
		Why: "the aim of kill-quorum with the delayed restart: the node is back after every lease it granted expired", Promise: "quorum with delayed restarts: a minority down or stopped cannot break it"}},

	// Client pauses (the GC pause): no lock protects the resource
	// without fencing; a lock whose validity is counted from before the
	// request still never grants overlapping leases.
	{When: "elapsed", Spec: Spec{Name: "client-pause", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "a holder paused past its TTL writes after another client", LeasePromise: "lease safety under a client pause: the stalled holder's validity ends before another client is granted the key"}},
	{When: "!elapsed", Spec: Spec{Name: "client-pause", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcRedisPy,
		Why: "a paused holder writes late; with no validity its lease outlives the key too"}},
	{When: "fence-sound", Spec: Spec{Name: "client-pause", Fencing: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcKleppmann,
		Why: "the resource refuses the stale fencing token", Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write"}},
	{When: "fences !fence-sound reports", Spec: Spec{Name: "kill-quorum", Fencing: true, Nodes: 3, Keys: 1, Nemesis: []string{"kill-quorum"}, Hold: 800 * time.Millisecond, Interval: 250 * time.Millisecond, Expect: report.ExpectViolation, Source: SrcKleppmann,
		Why: "two holders at once after a node of a bare majority restarted empty; the maximum of independent per-node counters, one of them reset, is not a fencing token that keeps the stale holder out"}},
	{When: "fences !fence-sound !reports", Spec: Spec{Name: "client-pause", Fencing: true, Nemesis: []string{"client-pause", "kill"}, Restart: "immediate", Keys: 1, TTL: 500 * time.Millisecond, Hold: 200 * time.Millisecond, Interval: time.Second, Expect: report.ExpectPossible, Source: SrcKleppmann,
		Why: "the maximum of independent per-node counters is not a fencing token: it need not grow from one holder to the next; kill-quorum, which forces two holders, needs the per-node grants this lock does not report"}},

	// Clocks: RedLock assumes bounded clock drift.
	{When: "quorum", Spec: Spec{Name: "clock", Nemesis: []string{"clock"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "a wall-clock jump on nodes expires their keys early while the holder's validity runs on"}},
	// #16: violation by the single-instance argument (was possible).
	{When: "single", Spec: Spec{Name: "clock", Nemesis: []string{"clock"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcSingle,
		Why: "a forward jump on the one node expires the held key at once, while the holder's validity runs on its own clock"}},

	// #16: a jump of the client's wall clock (client-processes only: the
	// kind refuses Go locks). The strobe's backward jumps of 0.5–0.9 TTL
	// meet acquire rounds in flight; the hold of 0.9 TTL fits the
	// validity a monotonic count gives.
	{When: "quorum monotonic", Spec: Spec{Name: "client-clock", Nodes: 3, Keys: 2, Nemesis: []string{"client-clock"}, TTL: 500 * time.Millisecond, Hold: 450 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcAntirez,
		Why:     "the client's validity is counted on a monotonic clock, which the jumps do not move; the hold of 0.9 TTL fits the validity of a round shorter than 43 ms. A violation on any seed would contradict it (a lease outliving its keys). redlock-py-wall/client-clock, with a hold of 1.5 TTL that a correct count ends at its validity, shows what a wall-time count does",
		Promise: "validity on a monotonic clock: a jump of the client's wall clock does not move it"}},

	// Failover with asynchronous replication.
	{When: "single topology:failover", Spec: Spec{Name: "failover", Topology: "failover", Nemesis: []string{"failover"}, TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, MinDuration: 20 * time.Second, Expect: report.ExpectViolation, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "the replica is promoted without the lock the old primary granted"}},
	// #14: the same aimed at a grant: the primary is cut from its replica
	// right before it grants, so the grant is never replicated.
	{When: "single topology:failover", Spec: Spec{Name: "failover-unreplicated", Topology: "failover", Nemesis: []string{"failover-unreplicated"}, TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, MinDuration: 20 * time.Second, Expect: report.ExpectViolation, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "the primary grants under the cut, the replica never gets the key and is promoted; the next client acquires there while the first holds"}},
}

// SrcDeclared is the source of an expectation a lock sets for itself
// (locks.Promises.SafeUnder).
const SrcDeclared = "declared by the lock (locks.Promises.SafeUnder)"

// Derive returns the cells of Literature for the lock called lock with
// promises p, in the table's order: one for every row whose When p
// satisfies, named lock[+fencing]/fault. A fault p claims to survive
// (SafeUnder) is expected safe, whatever the table says of its class,
// with that claim as the promise.
func Derive(lock string, p locks.Promises) []Spec {
	var out []Spec
	for _, r := range Literature {
		if !p.Satisfies(r.When) {
			continue
		}
		sp := r.Spec
		sp.Nemesis = slices.Clone(sp.Nemesis)
		sp.Lock = lock
		name := lock
		if sp.Fencing {
			name += "+fencing"
		}
		// "fault", or "+variant/fault" for a workload variant (e.g.
		// "+extend/latency": lock+extend/latency).
		if strings.HasPrefix(r.Name, "+") {
			sp.Name = name + r.Name
		} else {
			sp.Name = name + "/" + r.Name
		}
		fault := r.Name[strings.LastIndex(r.Name, "/")+1:]
		if sp.Nodes == 0 {
			sp.Nodes = p.Quorum
		}
		if sp.Expect != report.ExpectSafe && slices.Contains(p.SafeUnder, fault) {
			sp.Expect, sp.Source = report.ExpectSafe, SrcDeclared
			sp.Why = fmt.Sprintf("the lock declares it survives %s (the literature expects %s of its class: %s)", fault, r.Expect, r.Why)
			sp.Promise, sp.LeasePromise = "safe under "+fault+" (declared)", ""
		}
		out = append(out, sp)
	}
	return out
}

// CellsFor returns the cells of the release gate of the lock called lock:
// the rows of Literature for its declared promises (Derive), then every
// other cell of the matrix that names it (a control, a mutant's bug, a
// cell added before its row), in the matrix's order.
func CellsFor(lock string) ([]Spec, locks.Promises, error) {
	spec, err := locks.Lookup(lock)
	if err != nil {
		return nil, locks.Promises{}, err
	}
	p, err := locks.DeclaredPromises(spec)
	if err != nil {
		return nil, locks.Promises{}, err
	}
	out := Derive(lock, p)
	for _, c := range cells {
		if c.Lock == lock && !slices.ContainsFunc(out, func(d Spec) bool { return d.Name == c.Name }) {
			out = append(out, c)
		}
	}
	for i := range out {
		out[i].Quick = false // the gate runs every cell it derives
	}
	return out, p, nil
}

// fromTable is the matrix cell called name ("lock[+fencing]/fault"),
// derived from Literature for the lock's declared promises, in the
// release gate's quick profile when quick is set. It panics when the
// table has no such row for the lock: the cell list is a literal, and
// every test of the package fails at once.
func fromTable(name string, quick bool) Spec {
	lock, _, _ := strings.Cut(name, "/")
	lock, _, _ = strings.Cut(lock, "+")
	spec, err := locks.Lookup(lock)
	if err != nil {
		panic(fmt.Sprintf("matrix: cell %s: %v", name, err))
	}
	p, err := locks.DeclaredPromises(spec)
	if err != nil {
		panic(fmt.Sprintf("matrix: cell %s: %v", name, err))
	}
	for _, sp := range Derive(lock, p) {
		if sp.Name == name {
			sp.Quick = quick
			return sp
		}
	}
	panic(fmt.Sprintf("matrix: cell %s: no row of Literature for %s's promises (%s)", name, lock, p))
}
