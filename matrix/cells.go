package matrix

import (
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
)

// Sources cited by the expectations.
const (
	SrcRedis     = "Redis docs, \"Distributed Locks with Redis\" (redis.io/docs/latest/develop/use/patterns/distributed-locks/)"
	SrcKleppmann = "M. Kleppmann, \"How to do distributed locking\", 2016"
	SrcAntirez   = "antirez, \"Is Redlock safe?\", 2016"
	SrcMutant    = "deliberate bug (locks/mutants.go)"
	SrcExtends   = "lock libraries' extend bugs: go-redsync/redsync #72, #147, #149, mike-marcacci/node-redlock #296, #169, leandromoreira/redlock-rb #36 (extends after expiry, extends that revive another client's key)" // #13
	SrcJepsen    = "Jepsen's fenced-mutex check: fencing tokens must increase in the order the lock was granted"                                                                                                            // #13
	SrcRedisPy   = "redis-py docs, Redis.lock and redis.lock.Lock (timeout is the key's TTL; the lock offers no validity and holds until release())"
	// #16: the rule the latency cells rely on, and the argument the
	// single-instance clock cells rest on.
	SrcLeaseRule = "the lease rule: a client counts its lease from before it sent the request (C. Gray, D. Cheriton, \"Leases\", SOSP 1989)"
	SrcSeed      = "the seed article: the single-instance lock SET NX PX with a Lua compare-and-delete release and no validity (locks/setnxseed.go), and RedLock with a quorum of ⌈N/2⌉+1"
	SrcWait      = "Redis docs, WAIT (redis.io/docs/latest/commands/wait/): WAIT does not make Redis a strongly consistent store; a failover may still promote a replica that did not acknowledge"
	SrcFsync     = "Redis docs, persistence (redis.io/docs/latest/operate/oss_and_stack/management/persistence/) and the distributed-locks page's \"Performance, crash recovery and fsync\": appendfsync always keeps every acknowledged write; everysec may lose the last second on a crash"
	SrcRedLockPy = "redlock-py (SPSCommerce/redlock-py): elapsed = int(time.time() * 1000) − start_time, validity = ttl − elapsed − drift, on the wall clock"
	SrcSingle    = "the single-instance argument: one node's key expires by that node's wall clock alone, so a forward jump ends every lock it holds at once (Redis 7 keyIsExpired; " + "M. Kleppmann, \"How to do distributed locking\", 2016)"
)

// Spec is one cell of the matrix: a lock under a set of faults, with
// the literature's expectation and the workload that exposes it.
type Spec struct {
	Name  string
	Lock  string
	Nodes int
	// Nemesis is the fault kinds of the cell (harness.Config.Nemesis).
	Nemesis  []string
	Fencing  bool
	Topology string
	// Restart is the kill kind's restart mode ("" = mixed).
	Restart string
	// Appendfsync runs the nodes persistent, with this fsync policy
	// (cluster.Spec.Appendfsync; "" = no persistence). Quorum is
	// redlock's (harness.Workload.Quorum; 0 = ⌊N/2⌋+1). #16.
	Appendfsync string
	Quorum      int
	// WaitReplicas is setnx's WAIT after the SET
	// (harness.Workload.WaitReplicas; 0 = none). #16.
	WaitReplicas int
	// Workload. Zero values take the harness defaults.
	Clients  int
	Keys     int
	TTL      time.Duration
	Hold     time.Duration
	Interval time.Duration
	// MinDuration is the least duration a run of this cell needs (e.g.
	// a failover takes seconds); the profile's duration is raised to it.
	MinDuration time.Duration
	Expect      report.Expectation
	// Band is the expectation as a band of rates (#16), when the cell
	// states one; else the cell's entry in bands (bands.go), else
	// report.DefaultBand of Expect.
	Band   *report.Band
	Source string
	// Why explains the expectation in a sentence.
	Why string
	// Promise names what an expected-safe cell rests on: the promise the
	// lock broke when the cell shows a violation (the release gate says
	// so). Set by the rows of Literature; "" in a hand-written cell.
	Promise string
	// LeasePromise, in a cell expected to lose updates, names the promise
	// that the lock's leases still never overlap: a lease violation there
	// breaks it (e.g. a release that deletes another holder's key), while
	// the lost update alone is expected. "" when leases may overlap too.
	LeasePromise string
	// Quick puts the cell in the release gate: its outcome is reliable in
	// one short run.
	Quick bool
	// Extend, ExtendEvery: auto-extended leases (harness.Workload.Extend);
	// Hold is then the work of a cycle, which may be several TTLs.
	Extend      bool
	ExtendEvery time.Duration
	// Store is where the store checks fencing tokens
	// (harness.Workload.Store; "" for every access).
	Store string
	// Liveness is the liveness verdict every run must give (ok or stuck);
	// "" when the cell states none, and then liveness does not count.
	Liveness checker.Liveness
}

// The profiles of a cell derived from the table (fromTable): quick puts it
// in the release gate's quick profile (`make torture`), full only in the
// whole matrix.
const (
	quick = true
	full  = false
)

// cells is the matrix, in the order of the published table. The cells of
// the locks this project ships are rows of Literature, derived for each
// lock's declared promises (fromTable); the mutants' cells and the
// controls are written by hand.
var cells = []Spec{
	// No faults: every correct lock is safe, every mutant with a race is
	// caught.
	fromTable("setnx/none", quick),
	fromTable("setnx+fencing/none", quick),
	fromTable("redlock/none", quick),
	{Name: "setnx-get-set/none", Lock: "setnx-get-set", Expect: report.ExpectViolation, Source: SrcMutant, Why: "GET then SET without NX is a check-then-act race", Quick: true},
	{Name: "redlock-no-quorum/none", Lock: "redlock-no-quorum", Nodes: 5, Expect: report.ExpectViolation, Source: SrcMutant, Why: "one grant out of five is not a majority", Quick: true},

	// Network partitions: RedLock's quorum keeps it safe.
	fromTable("redlock/partition", quick),
	fromTable("redlock/latency", quick),
	{Name: "redlock-no-elapsed/latency", Lock: "redlock-no-elapsed", Nodes: 5, Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcRedis, Why: "counting validity from the reply, not from before the request, overstates it by the round's time"},
	fromTable("setnx/latency", quick),

	// Process faults.
	fromTable("setnx/kill-immediate", quick),
	fromTable("setnx/kill-delayed", quick),
	fromTable("redlock/kill-delayed,pause", quick),
	fromTable("redlock/kill-quorum-delayed", quick),
	fromTable("redlock/kill-quorum", quick),

	// Client pauses (the GC pause): no lock protects the resource
	// without fencing.
	fromTable("setnx/client-pause", quick),
	fromTable("setnx+fencing/client-pause", quick),
	fromTable("redlock/client-pause", quick),
	fromTable("redlock+fencing/kill-quorum", full),
	{Name: "setnx-plain-del/client-pause", Lock: "setnx-plain-del", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcRedis, Why: "a late plain DEL removes the next holder's lock", Quick: true},

	// Clocks: RedLock assumes bounded clock drift.
	fromTable("redlock/clock", full),
	fromTable("setnx/clock", full),

	// The libraries people use, under the same faults.
	fromTable("redsync/none", quick),
	fromTable("redislock/none", quick),
	fromTable("redsync/partition", full),
	fromTable("redsync/latency", full),
	fromTable("redislock/latency", full),
	fromTable("redsync/client-pause", full),
	fromTable("redislock/client-pause", full),
	fromTable("redsync/clock", full),
	fromTable("redislock/clock", full),
	fromTable("redislock/kill-immediate", full),
	fromTable("redsync/kill-quorum", full),

	// Locks in other languages, through the process adapter
	// (locks/clients): redis-py's Lock, whose users hold until they
	// release (it keeps no validity), and RedLock written in Python from
	// the Redis page, under redlock's cells.
	fromTable("redis-py-lock/none", quick),
	fromTable("redis-py-lock/client-pause", full),
	{Name: "setnx/latency-hold950", Lock: "setnx", Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "control of redis-py-lock/latency, same schedule: a validity counted from before the SET ends the hold before the key expires", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"},
	fromTable("redis-py-lock/kill-immediate", full),
	fromTable("redis-py-lock/clock", full),
	fromTable("redlock-py/none", full),
	fromTable("redlock-py/partition", full),
	fromTable("redlock-py/latency", full),
	fromTable("redlock-py/kill-delayed,pause", full),
	fromTable("redlock-py/kill-quorum-delayed", full),
	fromTable("redlock-py/kill-quorum", full),
	fromTable("redlock-py/client-pause", full),
	fromTable("redlock-py/clock", full),

	// #14: targeted faults, which strike at a moment of a live hold (see
	// nemesis/targeted.go), written by hand beside the rows of Literature:
	// the cells that are "possible" under random faults (redlock and
	// redsync under kill-immediate, redlock+fencing under client-pause,
	// setnx and redislock under clock) aimed so that each is expected to
	// fail, and controls expected safe under the same aim.
	{Name: "setnx/clock-holder", Lock: "setnx", Keys: 1, Nemesis: []string{"clock-holder"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a forward jump just past the holder's validity expires its key while it still counts on it", Quick: true},
	{Name: "redislock/clock-holder", Lock: "redislock", Keys: 1, Nemesis: []string{"clock-holder"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a forward jump just past the holder's validity expires its key"},
	{Name: "redlock/clock-partition", Lock: "redlock", Nodes: 3, Clients: 2, Keys: 1, Nemesis: []string{"clock-partition"}, Hold: 500 * time.Millisecond, Interval: 250 * time.Millisecond, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "the contested case: the clients split onto two bare majorities, one client a side; one shared node's clock jump leaves the holder without a majority and gives the other side one (with more clients a side, the holder's side-mates' partial grants keep the freed node taken)"},
	{Name: "redlock/clock-majority", Lock: "redlock", Nodes: 5, Keys: 1, Nemesis: []string{"clock-majority"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "a majority of the holder's nodes jump past its validity: RedLock assumes bounded clock drift", Quick: true},
	{Name: "redlock/clock-minority", Lock: "redlock", Nodes: 5, Keys: 1, Nemesis: []string{"clock-minority"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcAntirez, Why: "control: a minority's clocks jump, the rest of the holder's nodes are still a majority", Promise: "quorum: a grant needs a majority, and two majorities intersect", Quick: true},
	{Name: "setnx/pause-holder", Lock: "setnx", Keys: 1, Nemesis: []string{"pause-holder"}, TTL: 500 * time.Millisecond, Hold: 100 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a holder stalled just past its validity writes after the next holder read", LeasePromise: "lease safety under a client pause: the stalled holder's validity ends before another client is granted the key", Quick: true},
	{Name: "setnx+fencing/pause-holder", Lock: "setnx", Fencing: true, Keys: 1, Nemesis: []string{"pause-holder"}, TTL: 500 * time.Millisecond, Hold: 100 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcKleppmann, Why: "control: the resource refuses the stalled holder's stale token", Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write"},
	fromTable("setnx/delay-grant", full),
	fromTable("redlock/delay-grant", full),
	{Name: "redlock-no-elapsed/delay-grant", Lock: "redlock-no-elapsed", Nodes: 5, Keys: 1, Nemesis: []string{"delay-grant"}, Hold: 960 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcRedis, Why: "counting validity from the reply over-claims by the held reply's delay: the holder writes after its keys expired and the next holder took them"},
	fromTable("setnx-seed/delay-grant", full),
	fromTable("redsync/delay-grant", full),
	fromTable("redislock/delay-grant", full),
	fromTable("redis-py-lock/delay-grant", full),
	fromTable("redlock-py/delay-grant", full),

	// #13: the workloads real lock users run. Auto-extended leases
	// (--extend: a hold of 3 TTLs, renewed every TTL/3) under latency,
	// client pauses, clocks and kills; a mutant whose extend checks no
	// token; crashed holders (liveness); fencing checked on writes only
	// (Kleppmann's storage service).
	{Name: "setnx+extend/latency", Lock: "setnx", Extend: true, Hold: 3 * time.Second, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "an extend is a compare-and-pexpire counted from before it was sent, like the acquire"},
	{Name: "redlock+extend/latency", Lock: "redlock", Nodes: 5, Extend: true, Hold: 3 * time.Second, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "an extend needs a quorum and its validity subtracts the time it took"},
	{Name: "redsync+extend/latency", Lock: "redsync", Nodes: 5, Extend: true, Hold: 3 * time.Second, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis + "; " + SrcExtends, Why: "redsync's Extend touches a quorum with a token check and recomputes Until"},
	{Name: "redislock+extend/latency", Lock: "redislock", Extend: true, Hold: 3 * time.Second, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis + "; " + SrcExtends, Why: "redislock's Refresh checks the token; its validity is counted from before the call"},
	{Name: "setnx+extend/client-pause", Lock: "setnx", Extend: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "renewing does not help a holder paused past its TTL between its check and its write; its next extend is refused"},
	{Name: "redlock+extend/client-pause", Lock: "redlock", Nodes: 5, Extend: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "renewing does not help a holder paused past its TTL"},
	{Name: "redsync+extend/client-pause", Lock: "redsync", Nodes: 5, Extend: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcExtends, Why: "renewing does not help a holder paused past its TTL"},
	{Name: "redislock+extend/client-pause", Lock: "redislock", Extend: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcExtends, Why: "renewing does not help a holder paused past its TTL"},
	{Name: "setnx+extend/clock-holder", Lock: "setnx", Extend: true, Keys: 1, Hold: 3 * time.Second, Nemesis: []string{"clock-holder"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a forward jump just past the holder's validity expires its key, whatever the renewals: the next extend is refused, after another client took the key"},
	{Name: "redlock+extend/clock-majority", Lock: "redlock", Nodes: 5, Extend: true, Keys: 1, Hold: 3 * time.Second, Nemesis: []string{"clock-majority"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "a jump on a majority of the holder's nodes just past its validity expires the keys while the holder's validity runs on; renewing comes too late"},
	{Name: "redsync+extend/clock-majority", Lock: "redsync", Nodes: 5, Extend: true, Keys: 1, Hold: 3 * time.Second, Nemesis: []string{"clock-majority"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "as for redlock"},
	{Name: "redislock+extend/clock-holder", Lock: "redislock", Extend: true, Keys: 1, Hold: 3 * time.Second, Nemesis: []string{"clock-holder"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a forward jump just past the holder's validity expires its key, whatever the renewals"},
	{Name: "setnx+extend/kill-immediate", Lock: "setnx", Extend: true, Hold: 3 * time.Second, Nemesis: []string{"kill"}, Restart: "immediate", Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis, Why: "a node restarted without persistence forgets the lock; the holder's next extend is refused, too late"},
	{Name: "redlock+extend/kill-delayed", Lock: "redlock", Nodes: 5, Extend: true, Hold: 3 * time.Second, Nemesis: []string{"kill"}, Restart: "delayed", Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "delayed restarts: a minority down cannot break the quorum of an acquire or an extend"},
	{Name: "redsync+extend/kill-delayed", Lock: "redsync", Nodes: 5, Extend: true, Hold: 3 * time.Second, Nemesis: []string{"kill"}, Restart: "delayed", Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "as for redlock"},
	{Name: "redislock+extend/kill-immediate", Lock: "redislock", Extend: true, Hold: 3 * time.Second, Nemesis: []string{"kill"}, Restart: "immediate", Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis, Why: "a node restarted without persistence forgets the lock"},
	{Name: "setnx-extend-no-check+extend/client-pause", Lock: "setnx-extend-no-check", Extend: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcExtends, Why: "a bare PEXPIRE renews the key of whoever holds it now: the paused holder's late extend succeeds beside the new holder (lease invalid)", Quick: true},
	{Name: "setnx-no-ttl/client-crash", Lock: "setnx-no-ttl", Nemesis: []string{"client-crash"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Liveness: checker.LivenessStuck, Source: SrcMutant + "; " + SrcRedis, Why: "mutual exclusion holds, but a crashed holder's key never expires: no one acquires again"},
	{Name: "setnx/client-crash", Lock: "setnx", Nemesis: []string{"client-crash"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Liveness: checker.LivenessOK, Source: SrcRedis, Why: "a crashed holder's key expires within its TTL"},
	{Name: "redlock+fencing+write-only/kill-quorum", Lock: "redlock", Nodes: 3, Fencing: true, Store: "write-only", Keys: 1, Nemesis: []string{"kill-quorum"}, Hold: 800 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcJepsen, Why: "two holders at once after a node of a bare majority restarted empty: the maximum of per-node counters, one of them reset, need not order their writes, and the store takes a stale one"},
	{Name: "redlock+fencing+write-only/client-pause", Lock: "redlock", Nodes: 5, Fencing: true, Store: "write-only", Keys: 1, Nemesis: []string{"client-pause"}, TTL: 500 * time.Millisecond, Hold: 200 * time.Millisecond, Interval: time.Second, Expect: report.ExpectPossible, Source: SrcKleppmann + "; " + SrcJepsen, Why: "counters of different majorities diverge: a paused holder's token may exceed the next holder's, and its late write goes in; possible, not forced: which majorities grant and how far their counters drift apart is contention's doing, which no fault here aims at (kill-quorum, which does force two holders, is redlock+fencing+write-only/kill-quorum)"},
	{Name: "setnx+fencing+write-only/client-pause", Lock: "setnx", Fencing: true, Store: "write-only", Keys: 1, Nemesis: []string{"client-pause"}, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcKleppmann, Why: "one counter on one node increases with every grant: the store refuses the paused holder's stale write"},

	// Failover with asynchronous replication.
	fromTable("setnx/failover", quick),

	// #16: the seed article's own lock beside setnx, persistence, WAIT
	// after the SET, a data node's crash in the failover topology, and
	// the article's quorum. Bands: bands.go.
	// The seed article's lock: every row of the table for its class (no
	// validity counted from before the request), beside setnx's.
	fromTable("setnx-seed/none", full),
	fromTable("setnx-seed/kill-immediate", full),
	fromTable("setnx-seed/kill-delayed", full),
	fromTable("setnx-seed/client-pause", full),
	fromTable("setnx-seed/clock", full),
	{Name: "setnx/kill-immediate-always", Lock: "setnx", Nemesis: []string{"kill"}, Restart: "immediate", Appendfsync: "always", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcFsync,
		Why: "appendfsync always: the SET is on disk before its reply, and the restarted node reloads it with its absolute expiry (PXAT)"},
	{Name: "setnx/kill-immediate-everysec", Lock: "setnx", Nemesis: []string{"kill"}, Restart: "immediate", Appendfsync: "everysec", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectPossible, Source: SrcFsync,
		Why: "everysec loses what the OS had not written on a machine crash; a process kill keeps the page cache, so only a write Redis postponed behind a slow fsync can be lost, which no fault here forces"},
	{Name: "setnx+wait/failover", Lock: "setnx", WaitReplicas: 1, Topology: "failover", Nemesis: []string{"failover"}, TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, MinDuration: 20 * time.Second, Expect: report.ExpectPossible, Source: SrcWait + "; " + SrcRedis,
		Why: "WAIT 1 puts the key on the replica before the client holds, which closes setnx/failover's window for acknowledged grants; the promoted replica still expires by its own clock, and a grant the old primary gives while isolated is never acknowledged (refused), so what is left is narrow"},
	fromTable("setnx/failover-unreplicated", full),
	{Name: "setnx+wait/failover-unreplicated", Lock: "setnx", WaitReplicas: 1, Topology: "failover", Nemesis: []string{"failover-unreplicated"}, TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, MinDuration: 20 * time.Second, Expect: report.ExpectSafe, Source: SrcWait + "; " + SrcRedis,
		Why: "WAIT 1 cannot be acknowledged under the cut, so setnx refuses every acquire the old primary grants there (it deletes the key): every lease it hands out is on the replica that is promoted", Promise: "WAIT 1: a grant only once the replica acknowledged the key"},
	{Name: "setnx/failover-kill-always", Lock: "setnx", Topology: "failover", Nemesis: []string{"kill"}, Restart: "immediate", Appendfsync: "always", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcFsync + "; " + SrcRedis,
		Why: "one data node crashes and restarts at once from its append-only file: the primary keeps every lock it acknowledged and no promotion is needed; a replica's crash does not touch the primary"},
	{Name: "redlock/kill-immediate-q3", Lock: "redlock", Nodes: 3, Quorum: 3, Keys: 1, Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectSafe, Source: SrcSeed + "; " + SrcRedis,
		Why: "the article's quorum ⌈3/2⌉+1 = 3 is every node: a second holder needs the two nodes that still hold the first's key, so one node restarted empty cannot hand it out; the price is availability while any node is down (compare redlock/kill-immediate)"},
	// #16: a wall-clock jump on the client. Only a client process under
	// the clock shim can be moved (Go's time.Now reads no libc; the kind
	// refuses a Go lock): RedLock in Python, counting the time elapsed in
	// a round on time.monotonic (redlock-py) or on time.time as the
	// redlock-py library does (redlock-py-wall). The strobe's backward
	// jumps of 0.5–0.9 TTL meet acquire rounds in flight.
	{Name: "redlock-py-wall/client-clock", Lock: "redlock-py-wall", Nodes: 3, Keys: 2, Nemesis: []string{"client-clock"}, TTL: 500 * time.Millisecond, Hold: 750 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcAntirez + "; " + SrcRedLockPy,
		Why: "a backward jump of the client's wall clock during a round makes the elapsed time come out smaller, and the validity over-claims by the jump: a hold of 1.5 TTL that a correct count ends at its validity runs on past the keys' expiry; a seed with no overlap would contradict it"},
	fromTable("redlock-py/client-clock", full),
	// #16: a backward jump on nodes healed by slewing (clock-back-slew):
	// the clock returns to the real time at 0.8%, below the 1% drift the
	// locks allow for, instead of jumping forward.
	{Name: "setnx/clock-back-slew", Lock: "setnx", Keys: 1, Nemesis: []string{"clock-back-slew"}, TTL: 500 * time.Millisecond, Hold: 480 * time.Millisecond, Interval: time.Second, MinDuration: 16 * time.Second, Expect: report.ExpectSafe, Liveness: checker.LivenessOK, Source: SrcAntirez + "; " + SrcKleppmann,
		Why:     "a backward jump makes keys outlive their TTL, and the slewed heal runs the node's clock 0.8% fast, so a key set meanwhile expires at most 0.8% of the TTL early, within the drift allowance (1% + 2 ms): liveness only. A violation on any seed (a key expired before the holder's section ended) or a stuck key would contradict it. The holds of 96% of the TTL make it sensitive to a clock running about 4% fast or more: replaying the fault at 10% gives overlaps, at 3% none",
		Promise: "drift allowance: a node clock running at most 1% fast cannot expire a key before the holder's validity ends"},
	{Name: "redlock/clock-back-slew", Lock: "redlock", Nodes: 5, Keys: 1, Nemesis: []string{"clock-back-slew"}, TTL: 500 * time.Millisecond, Hold: 480 * time.Millisecond, Interval: time.Second, MinDuration: 16 * time.Second, Expect: report.ExpectSafe, Liveness: checker.LivenessOK, Source: SrcAntirez + "; " + SrcKleppmann,
		Why:     "as setnx/clock-back-slew, on a minority or a majority of five nodes: no node's key expires earlier than the drift allowance covers. A violation on any seed or a stuck key would contradict it",
		Promise: "drift allowance: a node clock running at most 1% fast cannot expire a key before the holder's validity ends"},
}

// Cells returns the matrix in its published order; quick restricts it
// to the release gate's cells.
func Cells(quick bool) []Spec {
	var out []Spec
	for _, c := range cells {
		if !quick || c.Quick {
			out = append(out, c)
		}
	}
	return out
}
