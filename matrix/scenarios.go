package matrix

import (
	"slices"

	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// scenarios are the scenarios of the lock-safety literature (Kleppmann
// 2016, antirez's reply, the Redis distributed-locks page, the Redis
// source, and the seed article), each with the rows of Literature that
// measure it: the table of results/README.md, whose rates WriteMatrix
// fills in from a run. A scenario names rows, never cells: every lock
// whose promises select a row (and the scenario's When) is measured.
var scenarios = []report.Scenario{
	{Name: "Release without the token check", Source: SrcRedis,
		Claim: "a plain DEL lets a holder whose key expired delete the next holder's lock (two holders: the lease breaks); a compare-and-delete release keeps the leases apart, and only the paused holder's late write is lost",
		Rows:  []string{"client-pause"}, When: "elapsed"},
	{Name: "A holder paused past the TTL (the GC pause)", Source: SrcKleppmann + "; " + SrcAntirez,
		Claim: "no lock without fencing stops a paused holder from writing after the next one: lost updates for every lock; leases overlap too where the lock tells no validity",
		Rows:  []string{"client-pause", "pause-holder", "+extend/client-pause"}},
	{Name: "Fencing tokens", Source: SrcKleppmann + "; " + SrcJepsen,
		Claim: "a resource that refuses a token older than the newest it saw is safe under pauses; RedLock's per-node counters are not a fencing token",
		Rows:  []string{"+fencing/client-pause", "+fencing/pause-holder", "+fencing/kill-quorum", "+fencing+write-only/kill-quorum", "+fencing+write-only/client-pause"}},
	{Name: "A slow network: validity counted from before the request", Source: SrcRedis + "; " + SrcLeaseRule,
		Claim: "validity = TTL − time spent acquiring − drift keeps a slow reply from stretching the lease past the key's expiry; a lock that counts from the reply, or counts nothing, over-claims",
		Rows:  []string{"latency", "latency-hold950", "delay-grant", "+extend/latency"}},
	{Name: "Wall-clock jumps on RedLock's nodes", Source: SrcKleppmann + "; " + SrcAntirez,
		Claim: "a node whose clock jumps forward expires its keys early while the holder's validity runs on (Kleppmann); antirez: safe with one node's jump and no partition, so operators must keep clocks from jumping",
		Rows:  []string{"clock", "clock-minority", "clock-majority", "clock-partition", "+extend/clock-majority", "clock-back-slew"}, When: "quorum"},
	{Name: "A wall-clock jump on the single instance", Source: SrcSingle,
		Claim: "one node's forward jump expires every key it holds at once, while each holder's validity runs on its own clock",
		Rows:  []string{"clock", "clock-holder", "+extend/clock-holder", "clock-back-slew"}, When: "single"},
	{Name: "A wall-clock jump on the client", Source: SrcAntirez + "; " + SrcRedLockPy,
		Claim: "a lock that counts validity on a monotonic clock is unmoved by the client's wall clock; one that counts wall time (the redlock-py library) over-claims by a backward jump during its acquire. Go clients cannot be moved (time.Now reads no libc): the cells are Python clients under the clock shim",
		Rows:  []string{"client-clock"}},
	{Name: "The seed article's lock: no client-side validity", Source: SrcSeed + "; " + SrcRedisPy,
		Claim: "a holder that believes it holds until release outlives its key whenever it is paused or its reply was slow: lease overlaps, where a lock with a validity (start + TTL − drift) stays lease-valid",
		Rows:  []string{"none", "client-pause", "delay-grant", "kill-immediate", "kill-delayed"}, When: "single !elapsed"},
	{Name: "Crash and restart without persistence", Source: SrcRedis + "; " + SrcKleppmann,
		Claim: "a node restarted at once without persistence forgets the locks it granted; restarting it only after the TTL (delayed restart) keeps every lock safe",
		Rows:  []string{"kill-immediate", "kill-delayed", "kill-delayed,pause", "kill-quorum", "kill-quorum-delayed", "+extend/kill-immediate", "+extend/kill-delayed"}},
	{Name: "Persistence: appendfsync always or everysec", Source: SrcFsync,
		Claim: "with fsync always an immediate restart keeps every acknowledged lock; with everysec a crash may lose the last second: a power loss (the page cache dropped, lazyfs) does, a process kill on a fast disk does not",
		Rows:  []string{"kill-immediate-always", "kill-immediate-everysec", "power-loss-always", "power-loss-everysec", "failover-kill-always"}},
	{Name: "Failover with asynchronous replication, and WAIT", Source: SrcRedis + "; " + SrcWait + "; " + SrcKleppmann,
		Claim: "a promoted replica lacks the lock the old primary had not yet replicated; WAIT 1 after the SET narrows the window without closing it",
		Rows:  []string{"failover", "+wait/failover", "failover-unreplicated", "+wait/failover-unreplicated"}},
	{Name: "Partitions, stopped nodes and the size of the quorum", Source: SrcRedis + "; " + SrcSeed,
		Claim: "two majorities intersect, so partitions and a stopped minority cannot give two clients the lock; one grant is not a quorum; the seed article's ⌈N/2⌉+1 (every node of three) keeps an immediate restart from handing out a held lock, at a cost in availability",
		Rows:  []string{"none", "partition", "pause", "kill-immediate-q3"}, When: "quorum"},
	{Name: "Locks that renew themselves: stopped processes and the loss notice", Source: SrcRedisson + "; " + SrcKleppmann + "; " + SrcRueidislock,
		Claim: "a watchdog keeps its key alive while a thread of its holder is paused, but a stopped process stops its watchdog too: the key expires and the resumed holder, not yet told, overlaps the next one (fencing keeps the resource safe); when renewals fail, a correct watchdog tells its holder before the key can expire, a late notice (or none) is an overlap",
		Rows:  []string{"client-pause", "client-stop", "+fencing/client-stop", "partition-holder", "delay-grant"}, When: "renews"},
	{Name: "Memory pressure: eviction", Source: SrcEvict,
		Claim: "under an evicting policy (allkeys-lru) a held lock key is evicted like any other, and the next SET NX is granted; noeviction evicts nothing and refuses the writes instead: unavailable, not unsafe",
		Rows:  []string{"evict", "noeviction"}},
	{Name: "Server stalls: the process runs, the event loop does not", Source: SrcStall + "; " + SrcLeaseRule,
		Claim: "a stalled node (DEBUG SLEEP, CLIENT PAUSE) only delays commands and replies; a lock whose validity is counted from before the request stays safe, also when the stall is aimed at the holder's nodes",
		Rows:  []string{"server-stall", "server-stall-holder"}},
	{Name: "Broken connections: unknown outcomes", Source: SrcConn,
		Claim: "a connection reset, cut mid-reply, sliced or dropped loses commands or replies; a lock that takes a lost reply for an unknown outcome, never for a grant, stays safe",
		Rows:  []string{"reset-peer", "limit-data", "slicer", "conn-drop"}},
	{Name: "The replication link alone", Source: SrcRepl + "; " + SrcWait,
		Claim: "a cut or slow link between the primary and its replica makes the replica lag; a lock that talks to the primary is unmoved until a promotion, and one that WAITs for the replica refuses its grants",
		Rows:  []string{"replica-partition", "replica-latency", "+wait/replica-partition"}},
	{Name: "A crashed holder (liveness)", Source: SrcRedis,
		Claim: "a holder that crashes without releasing blocks its key only until the TTL; a key without a TTL is blocked for ever",
		Rows:  []string{"client-crash"}},
}

// Scenarios returns the literature's scenarios with the rows that measure
// each (no cells: ScenariosOf finds those).
func Scenarios() []report.Scenario {
	out := slices.Clone(scenarios)
	for i := range out {
		out[i].Rows = slices.Clone(out[i].Rows)
		out[i].Cells = nil
	}
	return out
}

// ScenariosOf returns the scenarios with a cell among specs, each with
// those cells — what a matrix of specs measures — and the scenarios no
// cell measures, which say why.
func ScenariosOf(specs []Spec) []report.Scenario {
	var out []report.Scenario
	for _, s := range Scenarios() {
		for _, sp := range specs {
			if slices.Contains(s.Rows, sp.Row) && locks.Match(sp.Traits, s.When) {
				s.Cells = append(s.Cells, sp.Name)
			}
		}
		if len(s.Cells) > 0 || s.Missing != "" {
			out = append(out, s)
		}
	}
	return out
}
