package matrix

import (
	"slices"

	"github.com/locktorture/locktorture/report"
)

// scenarios are the twelve scenarios of the lock-safety literature
// (Kleppmann 2016, antirez's reply, the Redis distributed-locks page, the
// Redis source, and the seed article), each with the cells that measure
// it: the table of results/README.md, whose rates WriteMatrix fills in
// from a run (#16).
var scenarios = []report.Scenario{
	{Name: "Release without the token check", Source: SrcRedis,
		Claim: "a plain DEL lets a holder whose key expired delete the next holder's lock; release must compare the token (Lua)",
		Cells: []string{"setnx-plain-del/client-pause", "setnx/client-pause"}},
	{Name: "A holder paused past the TTL (the GC pause)", Source: SrcKleppmann + "; " + SrcAntirez,
		Claim: "no lock without fencing stops a paused holder from writing after the next one: lost updates for every lock; leases overlap too where the lock tells no validity",
		Cells: []string{"setnx/client-pause", "redlock/client-pause", "redsync/client-pause", "redislock/client-pause", "redis-py-lock/client-pause", "redlock-py/client-pause", "setnx-seed/client-pause", "setnx/pause-holder"}},
	{Name: "Fencing tokens", Source: SrcKleppmann,
		Claim: "a resource that refuses a token older than the newest it saw is safe under pauses; RedLock's per-node counters are not a fencing token",
		Cells: []string{"setnx+fencing/client-pause", "setnx+fencing/pause-holder", "redlock+fencing/kill-quorum", "redlock+fencing+write-only/kill-quorum", "setnx+fencing+write-only/client-pause"}},
	{Name: "A slow network: validity counted from before the request", Source: SrcRedis + "; " + SrcLeaseRule,
		Claim: "validity = TTL − time spent acquiring − drift keeps a slow reply from stretching the lease past the key's expiry; a lock that counts from the reply, or counts nothing, over-claims",
		Cells: []string{"setnx/latency", "redlock/latency", "redislock/latency", "redlock-no-elapsed/latency", "setnx/latency-hold950",
			"setnx/delay-grant", "redlock/delay-grant", "redsync/delay-grant", "redislock/delay-grant", "redlock-py/delay-grant", "redlock-no-elapsed/delay-grant", "redis-py-lock/delay-grant", "setnx-seed/delay-grant"}},
	{Name: "Wall-clock jumps on RedLock's nodes", Source: SrcKleppmann + "; " + SrcAntirez,
		Claim: "a node whose clock jumps forward expires its keys early while the holder's validity runs on (Kleppmann); antirez: safe with one node's jump and no partition, so operators must keep clocks from jumping",
		Cells: []string{"redlock/clock", "redsync/clock", "redlock-py/clock", "redlock/clock-minority", "redlock/clock-majority", "redlock/clock-partition", "redlock+extend/clock-majority", "redsync+extend/clock-majority", "redlock/clock-back-slew", "setnx/clock-back-slew"}},
	{Name: "A wall-clock jump on the single instance", Source: SrcSingle,
		Claim: "one node's forward jump expires every key it holds at once, while each holder's validity runs on its own clock",
		Cells: []string{"setnx/clock", "redislock/clock", "redis-py-lock/clock", "setnx-seed/clock", "setnx/clock-holder", "redislock/clock-holder", "setnx+extend/clock-holder", "redislock+extend/clock-holder"}},
	{Name: "A wall-clock jump on the client", Source: SrcAntirez + "; " + SrcRedLockPy,
		Claim: "a lock that counts validity on a monotonic clock is unmoved by the client's wall clock; one that counts wall time (the redlock-py library) over-claims by a backward jump during its acquire. Go clients cannot be moved (time.Now reads no libc): the cells are Python clients under the clock shim",
		Cells: []string{"redlock-py-wall/client-clock", "redlock-py/client-clock"}},
	{Name: "The seed article's lock: no client-side validity", Source: SrcSeed + "; " + SrcRedisPy,
		Claim: "a holder that believes it holds until release outlives its key whenever it is paused or its reply was slow: lease overlaps, where setnx (validity start + TTL − drift) stays lease-valid",
		Cells: []string{"setnx-seed/none", "setnx-seed/client-pause", "setnx-seed/delay-grant", "setnx/latency-hold950", "setnx/delay-grant", "setnx-seed/kill-immediate", "setnx-seed/kill-delayed"}},
	{Name: "Crash and restart without persistence", Source: SrcRedis + "; " + SrcKleppmann,
		Claim: "a node restarted at once without persistence forgets the locks it granted; restarting it only after the TTL (delayed restart) keeps every lock safe",
		Cells: []string{"setnx/kill-immediate", "redislock/kill-immediate", "redis-py-lock/kill-immediate", "setnx/kill-delayed", "redlock/kill-delayed,pause", "redlock/kill-quorum", "redsync/kill-quorum", "redlock-py/kill-quorum", "redlock/kill-quorum-delayed", "redlock-py/kill-quorum-delayed"}},
	{Name: "Persistence: appendfsync always or everysec", Source: SrcFsync,
		Claim:   "with fsync always an immediate restart keeps every acknowledged lock; with everysec a crash may lose the last second",
		Cells:   []string{"setnx/kill-immediate-always", "setnx/kill-immediate-everysec"},
		Missing: "everysec's loss needs a machine crash (the page cache lost) or a write Redis postponed behind a slow fsync; a process kill on a fast disk forces neither"},
	{Name: "Failover with asynchronous replication, and WAIT", Source: SrcRedis + "; " + SrcWait + "; " + SrcKleppmann,
		Claim: "a promoted replica lacks the lock the old primary had not yet replicated; WAIT 1 after the SET narrows the window without closing it; a data node's crash and restart from its AOF needs no promotion and is safe",
		Cells: []string{"setnx/failover", "setnx+wait/failover", "setnx/failover-unreplicated", "setnx+wait/failover-unreplicated", "setnx/failover-kill-always"}},
	{Name: "Partitions and the size of the quorum", Source: SrcRedis + "; " + SrcSeed,
		Claim: "two majorities intersect, so partitions cannot give two clients the lock; one grant is not a quorum; the seed article's ⌈N/2⌉+1 (every node of three) keeps an immediate restart from handing out a held lock, at a cost in availability",
		Cells: []string{"redlock/partition", "redsync/partition", "redlock-py/partition", "redlock-no-quorum/none", "redlock/kill-quorum", "redlock/kill-immediate-q3"}},
}

// Scenarios returns the literature's scenarios with the cells that
// measure each.
func Scenarios() []report.Scenario {
	out := slices.Clone(scenarios)
	for i := range out {
		out[i].Cells = slices.Clone(out[i].Cells)
	}
	return out
}

// ScenariosOf returns the scenarios with a cell among specs, each
// restricted to those cells — what a matrix of specs measures — and the
// scenarios no cell measures, which say why.
func ScenariosOf(specs []Spec) []report.Scenario {
	have := map[string]bool{}
	for _, sp := range specs {
		have[sp.Name] = true
	}
	var out []report.Scenario
	for _, s := range Scenarios() {
		none := len(s.Cells) == 0
		s.Cells = slices.DeleteFunc(s.Cells, func(c string) bool { return !have[c] })
		if len(s.Cells) > 0 || none {
			out = append(out, s)
		}
	}
	return out
}
