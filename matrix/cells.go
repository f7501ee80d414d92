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
	Source      string
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
	fromTable("redlock/kill-immediate", full),

	// Client pauses (the GC pause): no lock protects the resource
	// without fencing.
	fromTable("setnx/client-pause", quick),
	fromTable("setnx+fencing/client-pause", quick),
	fromTable("redlock/client-pause", quick),
	fromTable("redlock+fencing/client-pause", full),
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
	fromTable("redsync/kill-immediate", full),

	// Locks in other languages, through the process adapter
	// (locks/clients): redis-py's Lock, whose users hold until they
	// release (it keeps no validity), and RedLock written in Python from
	// the Redis page, under redlock's cells.
	fromTable("redis-py-lock/none", quick),
	fromTable("redis-py-lock/client-pause", full),
	fromTable("redis-py-lock/latency", full),
	{Name: "setnx/latency-hold950", Lock: "setnx", Nemesis: []string{"latency"}, Keys: 1, Hold: 950 * time.Millisecond, Interval: time.Second, Expect: report.ExpectSafe, Source: SrcRedis, Why: "control of redis-py-lock/latency, same schedule: a validity counted from before the SET ends the hold before the key expires", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"},
	fromTable("redis-py-lock/kill-immediate", full),
	fromTable("redis-py-lock/clock", full),
	fromTable("redlock-py/none", full),
	fromTable("redlock-py/partition", full),
	fromTable("redlock-py/latency", full),
	fromTable("redlock-py/kill-delayed,pause", full),
	fromTable("redlock-py/kill-immediate", full),
	fromTable("redlock-py/client-pause", full),
	fromTable("redlock-py/clock", full),

	// Failover with asynchronous replication.
	fromTable("setnx/failover", quick),
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
