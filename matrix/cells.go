package matrix

import (
	"time"

	"github.com/locktorture/locktorture/report"
)

// Sources cited by the expectations.
const (
	SrcRedis     = "Redis docs, \"Distributed Locks with Redis\" (redis.io/docs/latest/develop/use/patterns/distributed-locks/)"
	SrcKleppmann = "M. Kleppmann, \"How to do distributed locking\", 2016"
	SrcAntirez   = "antirez, \"Is Redlock safe?\", 2016"
	SrcMutant    = "deliberate bug (locks/mutants.go)"
	SrcRedisPy   = "redis-py docs, Redis.lock and redis.lock.Lock (timeout is the key's TTL; the lock offers no validity and holds until release())"
	// #16: the rule the latency cells rely on, and the argument the
	// single-instance clock cells rest on.
	SrcLeaseRule = "the lease rule: a client counts its lease from before it sent the request (C. Gray, D. Cheriton, \"Leases\", SOSP 1989)"
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
	// Quick puts the cell in the release gate: its outcome is reliable in
	// one short run.
	Quick bool
}

// cells is the matrix, in the order of the published table.
var cells = []Spec{
	// No faults: every correct lock is safe, every mutant with a race is
	// caught.
	{Name: "setnx/none", Lock: "setnx", Expect: report.ExpectSafe, Source: SrcRedis, Why: "one node, no faults: SET NX PX is mutual exclusion", Quick: true},
	{Name: "setnx+fencing/none", Lock: "setnx", Fencing: true, Expect: report.ExpectSafe, Source: SrcRedis, Why: "no faults", Quick: true},
	{Name: "redlock/none", Lock: "redlock", Nodes: 5, Expect: report.ExpectSafe, Source: SrcRedis, Why: "no faults", Quick: true},
	{Name: "setnx-get-set/none", Lock: "setnx-get-set", Expect: report.ExpectViolation, Source: SrcMutant, Why: "GET then SET without NX is a check-then-act race", Quick: true},
	{Name: "redlock-no-quorum/none", Lock: "redlock-no-quorum", Nodes: 5, Expect: report.ExpectViolation, Source: SrcMutant, Why: "one grant out of five is not a majority", Quick: true},

	// Network partitions: RedLock's quorum keeps it safe.
	{Name: "redlock/partition", Lock: "redlock", Nodes: 5, Nemesis: []string{"partition"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "two majorities always intersect, whatever the partition", Quick: true},
	{Name: "redlock/latency", Lock: "redlock", Nodes: 5, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "validity subtracts the time spent acquiring", Quick: true},
	{Name: "redlock-no-elapsed/latency", Lock: "redlock-no-elapsed", Nodes: 5, Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcRedis, Why: "counting validity from the reply, not from before the request, overstates it by the round's time"},
	{Name: "setnx/latency", Lock: "setnx", Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcLeaseRule, Why: "validity is counted from before the SET was sent", Quick: true},

	// Process faults.
	{Name: "setnx/kill-immediate", Lock: "setnx", Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis, Why: "a node restarted without persistence forgets the lock", Quick: true},
	{Name: "setnx/kill-delayed", Lock: "setnx", Nemesis: []string{"kill"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "a node that stays down longer than the TTL comes back after every lock it granted expired", Quick: true},
	{Name: "redlock/kill-delayed,pause", Lock: "redlock", Nodes: 5, Nemesis: []string{"kill", "pause"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "delayed restarts: a minority down or stopped cannot break the quorum", Quick: true},
	{Name: "redlock/kill-immediate", Lock: "redlock", Nodes: 3, Keys: 1, Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectPossible, Source: SrcRedis + "; " + SrcKleppmann, Why: "a node restarted empty can hand a held lock to a second majority, if the holder had exactly a majority"},

	// Client pauses (the GC pause): no lock protects the resource
	// without fencing.
	{Name: "setnx/client-pause", Lock: "setnx", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "a holder paused past its TTL writes after another client", Quick: true},
	{Name: "setnx+fencing/client-pause", Lock: "setnx", Fencing: true, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcKleppmann, Why: "the resource refuses the stale fencing token", Quick: true},
	{Name: "redlock/client-pause", Lock: "redlock", Nodes: 5, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "RedLock cannot stop a paused holder from writing late", Quick: true},
	{Name: "redlock+fencing/client-pause", Lock: "redlock", Nodes: 5, Fencing: true, Nemesis: []string{"client-pause", "kill"}, Restart: "immediate", Keys: 1, TTL: 500 * time.Millisecond, Hold: 200 * time.Millisecond, Interval: time.Second, Expect: report.ExpectPossible, Source: SrcKleppmann, Why: "the maximum of independent per-node counters is not a fencing token: it need not grow from one holder to the next"},
	{Name: "setnx-plain-del/client-pause", Lock: "setnx-plain-del", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcMutant + "; " + SrcRedis, Why: "a late plain DEL removes the next holder's lock", Quick: true},

	// Clocks: RedLock assumes bounded clock drift.
	{Name: "redlock/clock", Lock: "redlock", Nodes: 5, Nemesis: []string{"clock"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "a wall-clock jump on nodes expires their keys early while the holder's validity runs on"},
	{Name: "setnx/clock", Lock: "setnx", Nemesis: []string{"clock"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcSingle, Why: "a forward jump on the one node expires the held key at once, while the holder's validity runs on its own clock (#16: was possible)"},

	// The libraries people use, under the same faults.
	{Name: "redsync/none", Lock: "redsync", Nodes: 5, Expect: report.ExpectSafe, Source: SrcRedis, Why: "redsync implements RedLock", Quick: true},
	{Name: "redislock/none", Lock: "redislock", Expect: report.ExpectSafe, Source: SrcRedis, Why: "redislock is a single-instance SET NX PX lock", Quick: true},
	{Name: "redsync/partition", Lock: "redsync", Nodes: 5, Nemesis: []string{"partition"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "RedLock's quorum"},
	{Name: "redsync/latency", Lock: "redsync", Nodes: 5, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "redsync's Until subtracts the time spent acquiring and a drift"},
	{Name: "redislock/latency", Lock: "redislock", Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcLeaseRule, Why: "validity counted from before the call (the adapter's; redislock keeps none)"},
	{Name: "redsync/client-pause", Lock: "redsync", Nodes: 5, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "no lock stops a paused holder from writing late"},
	{Name: "redislock/client-pause", Lock: "redislock", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "no lock stops a paused holder from writing late"},
	{Name: "redsync/clock", Lock: "redsync", Nodes: 5, Nemesis: []string{"clock"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "wall-clock jumps on the nodes"},
	{Name: "redislock/clock", Lock: "redislock", Nemesis: []string{"clock"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcSingle, Why: "a forward jump on the one node expires the held key at once (#16: was possible)"},
	{Name: "redislock/kill-immediate", Lock: "redislock", Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis, Why: "a node restarted without persistence forgets the lock"},
	{Name: "redsync/kill-immediate", Lock: "redsync", Nodes: 3, Keys: 1, Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectPossible, Source: SrcRedis, Why: "as for redlock: needs a holder with exactly a majority"},

	// Locks in other languages, through the process adapter
	// (locks/clients): redis-py's Lock, whose users hold until they
	// release (it keeps no validity), and RedLock written in Python from
	// the Redis page, under redlock's cells.
	{Name: "redis-py-lock/none", Lock: "redis-py-lock", Expect: report.ExpectSafe, Source: SrcRedisPy + "; " + SrcRedis, Why: "one node, no faults: SET NX PX is mutual exclusion", Quick: true},
	{Name: "redis-py-lock/client-pause", Lock: "redis-py-lock", Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcRedisPy, Why: "a paused holder writes late; with no validity its lease outlives the key too, where setnx's ends at its validity"},
	{Name: "redis-py-lock/latency", Lock: "redis-py-lock", Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectPossible, Source: SrcRedisPy + "; " + SrcRedis, Why: "no validity: a hold that began with a slow reply runs past the key's expiry; the next holder overlaps it if its own reply is faster (the fault healed)"},
	{Name: "setnx/latency-hold950", Lock: "setnx", Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "control of redis-py-lock/latency, same schedule: a validity counted from before the SET ends the hold before the key expires"},
	{Name: "redis-py-lock/kill-immediate", Lock: "redis-py-lock", Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcRedis, Why: "a node restarted without persistence forgets the lock"},
	{Name: "redis-py-lock/clock", Lock: "redis-py-lock", Nemesis: []string{"clock"}, Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcSingle + "; " + SrcRedisPy, Why: "a forward jump on the one node expires the held key at once (#16: was possible, as setnx/clock)"},
	{Name: "redlock-py/none", Lock: "redlock-py", Nodes: 5, Expect: report.ExpectSafe, Source: SrcRedis, Why: "no faults"},
	{Name: "redlock-py/partition", Lock: "redlock-py", Nodes: 5, Nemesis: []string{"partition"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "two majorities always intersect, whatever the partition"},
	{Name: "redlock-py/latency", Lock: "redlock-py", Nodes: 5, Nemesis: []string{"latency"}, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "validity subtracts the time spent acquiring"},
	{Name: "redlock-py/kill-delayed,pause", Lock: "redlock-py", Nodes: 5, Nemesis: []string{"kill", "pause"}, Restart: "delayed", Hold: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "delayed restarts: a minority down or stopped cannot break the quorum"},
	{Name: "redlock-py/kill-immediate", Lock: "redlock-py", Nodes: 3, Keys: 1, Nemesis: []string{"kill"}, Restart: "immediate", Hold: 500 * time.Millisecond, Interval: 500 * time.Millisecond, Expect: report.ExpectPossible, Source: SrcRedis + "; " + SrcKleppmann, Why: "a node restarted empty can hand a held lock to a second majority, if the holder had exactly a majority"},
	{Name: "redlock-py/client-pause", Lock: "redlock-py", Nodes: 5, Nemesis: []string{"client-pause"}, Keys: 1, TTL: 500 * time.Millisecond, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "RedLock cannot stop a paused holder from writing late"},
	{Name: "redlock-py/clock", Lock: "redlock-py", Nodes: 5, Nemesis: []string{"clock"}, Interval: time.Second, Expect: report.ExpectViolation, Source: SrcKleppmann + "; " + SrcAntirez, Why: "a wall-clock jump on nodes expires their keys early while the holder's validity runs on"},

	// Failover with asynchronous replication.
	{Name: "setnx/failover", Lock: "setnx", Topology: "failover", Nemesis: []string{"failover"}, TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, MinDuration: 20 * time.Second, Expect: report.ExpectViolation, Source: SrcRedis + "; " + SrcKleppmann, Why: "the replica is promoted without the lock the old primary granted", Quick: true},
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
