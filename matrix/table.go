package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// Row is one row of the literature table: what the literature predicts of
// a class of lock under one fault and workload, property by property,
// with its source and the promise it rests on. Every cell of the matrix,
// of a lock this project ships, of a library's or of a user's, is a row
// its promises select (Derive); nothing else names a cell.
type Row struct {
	// Name names the row, and the cell after the lock's name: "fault"
	// (the cell lock/fault) or "+variant/fault" for a workload variant
	// (the cell lock+variant/fault).
	Name string
	// When selects the locks the row is for, by their traits
	// (locks.Spec.Traits; locks.Match): space-separated words, each
	// required, or excluded with a leading "!", alternatives separated by
	// "|"; "" is every lock.
	When string
	// Config is the run: workload, faults and cluster. Lock, Seed,
	// Duration and Dir are set per run; every other zero field takes the
	// harness's default (a targeted kind's workload included,
	// nemesis.Kind.Window), and Nodes 0 a quorum lock's quorum.
	Config harness.Config
	// MinDuration is the least duration a run of the row needs (a
	// failover takes seconds), beyond what its kinds ask for
	// (nemesis.Kind.Window).
	MinDuration time.Duration
	// Expect is the prediction for a lock of the class, per property.
	Expect report.Expect
	// Band is the least rate of violations of each property expected
	// violated; nil is report.DefaultBand (≥ 0.9, forced).
	Band *report.Band
	// Catch is the band of a mutant whose bug breaks this row's promise
	// (locks.Bug); nil is report.DefaultBand.
	Catch *report.Band
	// CatchFor is the least duration of a mutant's cell of this row,
	// when its bug shows only once a chain of events lines up and a run
	// of the row's length gives it too few strikes. It costs little: a
	// cell expecting a violation stops at its first one.
	CatchFor time.Duration
	// Source cites the literature; Why gives the reason in a sentence.
	Source, Why string
	// Promise names what the properties expected safe (and liveness ok)
	// rest on: the promise a lock breaks when the row shows them
	// violated.
	Promise string
	// Missing says, for a row that expects a property only possible, what
	// would make it measurable.
	Missing string
	// Quick selects, like When, the locks whose cell of this row is in the
	// release gate's quick profile: those whose outcome was reliable in
	// one short run on a loaded machine; "" is none. Besides the traits,
	// "lock:NAME" selects the lock called NAME, so that every family of
	// fault and every library has a cell in the profile without putting
	// a whole class there.
	Quick string
}

// Spec is one cell of the matrix: a row of Literature for one lock.
type Spec struct {
	// Name is lock + the row's name ("setnx/client-pause",
	// "redlock+extend/latency").
	Name string
	// Row is the row's name; Class the class of lock it is for (the row's
	// When, "any" for every lock).
	Row   string
	Class string
	// Config is the run, Lock set (Seed, Duration and Dir are per run).
	Config harness.Config
	// MinDuration is the least duration a run of this cell needs: the
	// profile's duration is raised to it.
	MinDuration time.Duration
	// Expect is the prediction per property; Band the least rate of the
	// properties expected violated.
	Expect report.Expect
	Band   report.Band
	Source string
	Why    string
	// Promise is what the properties expected safe rest on (see Row).
	Promise string
	// Missing is the row's (see Row).
	Missing string
	// Bug is, in a mutant's cell, the deliberate bug the cell exposes.
	Bug string
	// Quick puts the cell in the release gate's quick profile.
	Quick bool
	// Traits are the lock's (locks.Spec.Traits), which the scenarios
	// select cells by.
	Traits []string
}

// Lock is the cell's lock.
func (sp Spec) Lock() string { return sp.Config.Lock }

// Kinds are the cell's fault kinds.
func (sp Spec) Kinds() []string { return sp.Config.Nemesis }

// ms is a millisecond, for the table's workloads.
const ms = time.Millisecond

// The bands of the table, with the reasons the published runs gave them.
var (
	bandKill = &report.Band{Min: 0.6, Max: 1, Why: "random kills must land while a lock is held, and the restarted node must be asked before the key would have expired: seen on 2 or 3 of 3 seeds"}
	// bandClock1 and bandClock5: a random jump must land while a lock is
	// held and be large enough to expire it.
	bandClock1 = &report.Band{Min: 0.5, Max: 1, Why: "a random jump must land while a lock is held and be large enough to expire it: seen on 5 to 7 of 8 seeds"}
	bandClock5 = &report.Band{Min: 0.3, Max: 1, Why: "a random jump must move enough of the five nodes while a lock is held: seen on 4 or 5 of 8 seeds"}
	bandKillQ  = &report.Band{Min: 0.9, Max: 1, Why: "kill-quorum makes the bare majority itself (the nodes outside it cut off until it grants) and kills one of its nodes at the grant; the second client must still win the restarted node and the freed ones before the holder releases: 10 of 10 seeds for each cell with `bin/bench -only targeted -targeted-seeds 10`, 3 of 3 in the matrix"}
	bandFail   = &report.Band{Min: 0.6, Max: 1, Why: "the isolation must fall inside a hold the replica has not yet copied: seen on 3 of 3 seeds, with random timing"}
	bandEvict  = &report.Band{Min: 0.3, Max: 1, Why: "allkeys-lru must evict the held key before its holder releases: 6 of 6 runs for each lock holding one key in two full matrices of 2026-12-02, 3 of 6 for rueidislock, which holds a lock by a majority of three keys, so one eviction does not free it"}
	bandFence  = &report.Band{Min: 0.6, Max: 1, Why: "tokens come out of order when consecutive grants come from different majorities, which contention decides: in three full matrices the lease broke on 9 of 9 runs under kill-quorum (the stale write landing in 4) and 6 of 9 under client-pause"}
)

// Literature is the table of expectations. A row for a new fault kind or a
// new class of lock is a line here; nothing else switches on fault or
// promise names.
var Literature = []Row{
	// No faults: every correct lock is safe; a mutant with a race is
	// caught.
	{Name: "none", When: "!renews", Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why: "no faults: SET NX PX is mutual exclusion", Promise: "mutual exclusion without faults", Quick: "*"},
	// A lock that renews itself also promises to keep a healthy hold: with
	// no fault it tells no holder it lost the lease.
	{Name: "none", When: "renews", Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Holds: report.ExpectSafe}, Source: SrcRedis + "; " + SrcRedisson,
		Why:     "no faults: SET NX PX is mutual exclusion, and the watchdog renews every hold until its release",
		Promise: "mutual exclusion without faults; renewal: no hold is cut short while nothing touches it", Quick: "*"},
	{Name: "+fencing/none", When: "fence-sound", Config: harness.Config{Workload: harness.Workload{Fencing: true}}, Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why: "no faults", Promise: "mutual exclusion without faults, fencing on", Quick: "fences !renews"},

	// Network faults: RedLock's quorum keeps it safe.
	{Name: "partition", When: "quorum", Config: faults(time.Second, "partition"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why: "two majorities always intersect, whatever the partition", Promise: "quorum: a grant needs a majority, and two majorities intersect", Quick: "fences !renews"},
	{Name: "latency", When: "elapsed", Config: faults(time.Second, "latency"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis + "; " + SrcLeaseRule,
		Why: "validity is counted from before the request", Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it", Quick: "fences !renews"},
	{Name: "latency-hold950", When: "elapsed", Config: withWork(faults(time.Second, "latency"), harness.Workload{Keys: 1, Hold: 950 * ms}), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis + "; " + SrcLeaseRule,
		Why:     "a hold of 0.95 TTL under latency: a validity counted from before the SET ends the hold before the key expires (a slow round leaves less than the hold, and the section refuses to write)",
		Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it",
		Catch:   &report.Band{Min: 0.6, Max: 1, Why: "a latency fault must slow the acquire of a 950 ms hold: seen on 3 of 3 seeds and 10 of 10 in a 10-seed run of the benchmarks' detection part"}},
	// The forced form of the elapsed-time term: one acquire's reply is held
	// by just under a node call's timeout (TTL/10), the next is fast; the
	// workload is the kind's (a hold of 0.96 TTL, 12 s: three steps).
	{Name: "delay-grant", When: "elapsed", Config: faults(0, "delay-grant"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis + "; " + SrcLeaseRule,
		Why:     "the held reply comes off the validity, so the holder's validity ends before the key expires (here its second check fails and it writes nothing)",
		Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"},
	{Name: "delay-grant", When: "!elapsed !renews", Config: faults(0, "delay-grant"), Expect: report.ExpectAll(report.ExpectViolation), Source: SrcRedisPy + "; " + SrcRedis,
		Why: "no validity counted from before the request: the holder whose reply was held counts on the lease for that long after its key expired, and the next client's fast acquire takes the key meanwhile; the late holder's write then loses the next one's update"},

	// Process faults.
	{Name: "kill-immediate", When: "single renews !notice-in-time", Config: withWork(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}),
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcRedis + "; " + SrcRueidislock,
		Why:     "a node restarted without persistence forgets the lock; a lock whose renewal fails only at its own deadline keeps its holder counting on the lease meanwhile, and a second client may be granted the key (rueidislock: on 3 of 10 seeds)",
		Missing: "the moment between the restart and the lock's next renewal, when another client must win the key: no fault here aims at it"},
	{Name: "kill-immediate", When: "single !renews|single notice-in-time", Config: withWork(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandKill, Source: SrcRedis,
		Why: "a node restarted without persistence forgets the lock: a second client is granted it while the first holds (an update is lost when their sections interleave)", Quick: "fences !renews|lock:redislock"},
	{Name: "kill-immediate-always", When: "single", Config: persist(withWork(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}), "always"),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcFsync,
		Why:     "appendfsync always: the SET is on disk before its reply, and the restarted node reloads it with its absolute expiry (PXAT)",
		Promise: "persistence with appendfsync always: a restarted node keeps every lock it acknowledged", Quick: "lock:rueidislock"},
	{Name: "kill-immediate-everysec", When: "single", Config: persist(withWork(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}), "everysec"),
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcFsync,
		Why:     "everysec loses what the OS had not written on a machine crash; a process kill keeps the page cache, so only a write Redis postponed behind a slow fsync can be lost",
		Missing: "a slow disk that makes Redis postpone its fsync; a process kill forces no loss (the page cache survives it: the power-loss-everysec row drops it)"},
	// A power loss right after a grant (the kind's workload: one key,
	// holds of 800 ms): the data folder on lazyfs, which drops what the
	// node wrote but did not fsync; killed and restarted at once. A power
	// loss at times drawn in advance met a fresh grant in about half the
	// runs (22 of 42), too few for three seeds to show.
	{Name: "power-loss-everysec", When: "single !renews", Config: persist(faults(0, "power-loss-holder"), "everysec"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcFsync + "; " + SrcLazyFS,
		Why: "everysec fsyncs once a second: a power loss drops the grants of the last second, and the node restarted at once grants the held lock again"},
	{Name: "power-loss-everysec", When: "single renews", Config: persist(faults(0, "power-loss-holder"), "everysec"),
		Expect: report.Expect{Lease: report.ExpectPossible, Resource: report.ExpectPossible}, Source: SrcFsync + "; " + SrcLazyFS,
		Why:     "the restarted node grants the lost lock again, but a lock that renews itself learns of the loss at its next renewal (a third of the TTL for Redisson's watchdog) or, watching its connection, at once (rueidislock): another client is granted the key before that only if it asks in between (seen on 4 of 8 seeds for setnx-watchdog, 1 of 8 for rueidislock)",
		Missing: "a contender that asks within the renewal period of every strike: the clients' retry pace decides the rate, not the lock"},
	{Name: "power-loss-always", When: "single", Config: persist(faults(0, "power-loss-holder"), "always"),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcFsync + "; " + SrcLazyFS,
		Why:     "appendfsync always fsyncs each write before its reply: a power loss drops nothing the node acknowledged, and the restarted node reloads every grant with its absolute expiry",
		Promise: "persistence with appendfsync always: a restarted node keeps every lock it acknowledged", Quick: "lock:redis-py-lock"},
	{Name: "kill-delayed", When: "single persist:delayed-restart", Config: withWork(restart(faults(time.Second, "kill"), nemesis.RestartDelayed), harness.Workload{Hold: 500 * ms}),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why:     "a node that stays down longer than the TTL comes back after every lock it granted expired",
		Promise: "delayed restarts: a restarted node comes back after every lock it granted expired", Quick: "fences !renews"},
	// Where the lock reports which nodes granted each hold, the targeted
	// kill forces what random kills leave to luck; the workload is the
	// kind's (one key, holds of 0.8 TTL, 250 ms between steps).
	{Name: "kill-quorum", When: "quorum reports", Config: nodes(faults(0, "kill-quorum"), 3),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandKillQ, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "a node of a hold that a bare majority granted, killed while the hold is valid and restarted empty at once, makes with the node that never granted a second majority", Quick: "fences !renews|lock:redsync"},
	{Name: "kill-immediate", When: "quorum !reports", Config: nodes(withWork(restart(faults(500*ms, "kill"), nemesis.RestartImmediate), harness.Workload{Keys: 1, Hold: 500 * ms}), 3),
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcRedis + "; " + SrcKleppmann,
		Why:     "a node restarted empty can hand a held lock to a second majority, if the holder had exactly a majority",
		Missing: "kill-quorum, which forces it, aims at the nodes that granted a hold, which this lock does not report (locks.NodeReporter)"},
	{Name: "kill-immediate-q3", When: "quorum quorum-size", Config: nodes(withWork(restart(faults(500*ms, "kill"), nemesis.RestartImmediate), harness.Workload{Keys: 1, Hold: 500 * ms, Quorum: 3}), 3),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcSeed + "; " + SrcRedis,
		Why:     "the seed article's quorum ⌈3/2⌉+1 = 3 is every node: a second holder needs the two nodes that still hold the first's key, so one node restarted empty cannot hand it out; the price is availability while any node is down",
		Promise: "a quorum of every node: one node restarted empty cannot make a second quorum"},
	{Name: "kill-delayed,pause", When: "quorum persist:delayed-restart", Config: withWork(restart(faults(time.Second, "kill", "pause"), nemesis.RestartDelayed), harness.Workload{Hold: 500 * ms}),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why:     "delayed restarts: a minority down or stopped cannot break the quorum",
		Promise: "quorum with delayed restarts: a minority down or stopped cannot break it", Quick: "fences !renews"},
	{Name: "kill-quorum-delayed", When: "quorum persist:delayed-restart reports", Config: withWork(restart(faults(500*ms, "kill-quorum"), nemesis.RestartDelayed), harness.Workload{Hold: 500 * ms}),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why:     "the aim of kill-quorum with the delayed restart: the node is back after every lease it granted expired",
		Promise: "quorum with delayed restarts: a minority down or stopped cannot break it", Quick: "fences !renews"},
	{Name: "pause", When: "quorum", Config: faults(time.Second, "pause"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcPause,
		Why:     "SIGSTOP of some nodes: their keys expire on their wall clock, the commands sent meanwhile run late after SIGCONT; a grant still needs a majority, and two majorities intersect",
		Promise: "quorum: a grant needs a majority, and two majorities intersect"},

	// A consensus lock (etcd-mutex): one Raft group grants, renews and
	// expires the lease, so what breaks Redis locks here (a node that
	// forgets, a minority that grants) cannot break it.
	{Name: "partition", When: "consensus", Config: faults(time.Second, "partition"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRaft + "; " + SrcKleppmann,
		Why:     "a member cut off from the majority commits nothing; a holder whose keep-alives fail is told before the leader can expire its lease",
		Promise: "consensus: a grant is a write a majority of members commits", Quick: "consensus"},
	{Name: "kill-immediate", When: "consensus", Config: withWork(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRaft + "; " + SrcKleppmann,
		Why:     "a member restarted at once comes back with its log (etcd fsyncs before it answers), so no restart forgets a grant, as a Redis node without persistence does",
		Promise: "consensus: a grant is a write a majority of members commits", Quick: "consensus"},
	{Name: "pause", When: "consensus", Config: faults(time.Second, "pause"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRaft,
		Why:     "a stopped minority, leader or not, commits nothing alone; a new leader extends every lease by its TTL rather than expiring one early",
		Promise: "consensus: a grant is a write a majority of members commits"},

	// A crashed holder: its key expires within the TTL (crashRun).
	{Name: "client-crash", When: "elapsed !renews", Config: crashRun(),
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Liveness: checker.LivenessOK}, Source: SrcRedis,
		Why: "a crashed holder's key expires within its TTL, and the next client acquires it", Promise: "liveness: a crashed holder's key expires within its TTL"},
	{Name: "client-crash", When: "!elapsed !renews", Config: crashRun(),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectSafe, Liveness: checker.LivenessOK}, Source: SrcRedis + "; " + SrcRedisPy,
		Why:     "a crashed holder's key expires within its TTL and the next client acquires it; with no validity the crashed holder's lease is still open then, so the leases overlap on paper (the crashed holder never acts again: the resource is safe)",
		Promise: "liveness: a crashed holder's key expires within its TTL; a holder that never acts again loses no update"},

	// Client pauses (the GC pause): no lock protects the resource without
	// fencing; a lock whose validity is counted from before the request
	// still never grants overlapping leases.
	{Name: "client-pause", When: "elapsed", Config: pauseRun(),
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}, Source: SrcKleppmann + "; " + SrcAntirez,
		Why:     "a holder paused past its TTL writes after another client; its validity ended before the other was granted",
		Promise: "lease safety under a client pause: the stalled holder's validity ends before another client is granted the key", Quick: "fences !renews|mutant",
		// A release without its token check shows as two holders only when
		// the stalled holder's release deletes a key someone holds and a
		// third client wins it before that holder releases: about 9 in 10
		// stalls, and an 8 s run has two (2 of 20 seeds showed no second
		// holder, and a release gate's single run once missed).
		CatchFor: 20 * time.Second},
	{Name: "client-pause", When: "!elapsed !renews", Config: pauseRun(), Expect: report.ExpectAll(report.ExpectViolation), Source: SrcKleppmann + "; " + SrcRedisPy,
		Why: "a paused holder writes late; with no validity its lease outlives the key too"},

	// Locks that renew themselves (a watchdog: Redisson's, rueidislock's
	// auto-extend): the holder claims no validity and holds until it
	// releases or is told it lost the lease.
	{Name: "delay-grant", When: "renews", Config: faults(0, "delay-grant"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedisson,
		Why:     "the held reply delays the grant, but the watchdog renews the key while the holder works: it never expires under a holder that still counts on it",
		Promise: "renewal: the lock keeps its key alive while its holder holds"},
	{Name: "client-pause", When: "renews", Config: pauseRun(), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedisson + "; " + SrcKleppmann,
		Why:     "a paused thread of the holder does not stop its watchdog, which keeps renewing the key: no one else is granted it while the holder is paused (others wait: the price); a pause of the whole process is client-stop",
		Promise: "renewal: the lock keeps its key alive while its holder holds"},
	{Name: "+long/latency-group", When: "renews", Config: withWork(faults(4*time.Second, "latency-group"), harness.Workload{Keys: 2, Clients: 4, TTL: time.Second, Hold: 6 * time.Second}), MinDuration: 24 * time.Second,
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Holds: report.ExpectSafe}, Source: SrcRedisson + "; " + SrcRueidislock,
		Why:     "holds of 6 s with a TTL of 1 s while one client group's replies come back up to a twelfth of the TTL late, within the per-call bound: the watchdog's renewals arrive in time, and no holder is told it lost a key nobody touched",
		Promise: "renewal: a holder on a slow link within the per-call bound keeps its hold"},
	{Name: "client-stop", When: "renews !process", Config: clientStop(false),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcRedisson,
		Why: "the whole client process stops, its watchdog with it; the key expires and another client is granted it, and the resumed holder, not yet told, still counts on its lease"},
	{Name: "client-stop", When: "renews process", Config: faults(0, "client-stop"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcRedisson,
		Why: "the whole client process stops, its watchdog with it; the key expires and another client is granted it, and the resumed holder, not yet told, still counts on its lease"},
	{Name: "+fencing/client-stop", When: "renews fence-sound !process", Config: clientStop(true),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectSafe}, Source: SrcKleppmann,
		Why:     "as client-stop, two holders at once; the resumed holder's write carries an older fencing token than the next holder's, and the store refuses it",
		Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write"},
	{Name: "partition-holder", When: "renews notice-in-time", Config: partitionHolder(),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedisson,
		Why:     "the holder's client is cut off its node: its renewals fail, and the watchdog tells it before the key can expire, so it stops counting on the lease before another client is granted the key",
		Promise: "loss notice in time: a holder whose renewals fail is told before its key can expire"},
	{Name: "partition-holder", When: "renews !notice-in-time", Config: partitionHolder(),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcRueidislock,
		Why: "an auto-extend blocked by the cut fails only at its own new deadline (now + the key's validity), so the holder is told about half a validity after its key expired and another client was granted it"},
	// Client processes stopped whole (a GC or VM pause of the process):
	// a validity counted from before the request runs out while the
	// process is stopped, and the client checks it again before it acts.
	{Name: "client-stop", When: "process elapsed !renews", Config: faults(0, "client-stop"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcKleppmann + "; " + SrcLeaseRule,
		Why:     "the stopped holder's validity ends while it is stopped; resumed, it checks it before it writes, and writes nothing",
		Promise: "lease safety under a client pause: the stalled holder's validity ends before another client is granted the key", Quick: "lock:redlock-py"},
	{Name: "client-stop", When: "process !elapsed !renews", Config: faults(0, "client-stop"), Expect: report.ExpectAll(report.ExpectViolation), Source: SrcKleppmann + "; " + SrcRedisPy,
		Why: "a holder with no validity, stopped past its TTL, resumes still counting on the lease after another client was granted the key, and writes late"},
	{Name: "pause-holder", When: "single elapsed", Config: faults(0, "pause-holder"),
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}, Source: SrcKleppmann,
		Why:     "a holder stalled just past its validity writes after the next holder read",
		Promise: "lease safety under a client pause: the stalled holder's validity ends before another client is granted the key", Quick: "fences !renews"},
	{Name: "+fencing/client-pause", When: "fence-sound", Config: fenced(pauseRun(), ""), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcKleppmann,
		Why: "the resource refuses the stale fencing token", Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write", Quick: "fences !renews"},
	{Name: "+fencing/pause-holder", When: "single fence-sound", Config: fenced(faults(0, "pause-holder"), ""), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcKleppmann,
		Why: "the resource refuses the stalled holder's stale token", Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write"},
	{Name: "+fencing+write-only/client-pause", When: "fence-sound", Config: fenced(pauseRun(), harness.StoreWriteOnly), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcKleppmann,
		Why:     "one counter on one node increases with every grant: the store refuses the paused holder's stale write",
		Promise: "sound fencing: every token is greater than the last holder's, so the resource refuses a stalled holder's write"},
	{Name: "+fencing+write-only/client-pause", When: "fences !fence-sound", Config: nodes(fenced(withWork(pauseRun(), harness.Workload{Hold: 200 * ms}), harness.StoreWriteOnly), 5),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandFence, Source: SrcKleppmann + "; " + SrcJepsen,
		Why:     "the maximum of independent per-node counters is not a fencing token: consecutive grants from different majorities get tokens out of grant order (the lease check counts it, Jepsen's fenced-mutex rule); whether the paused holder's stale write then lands in the write-only store depends on how far the counters drifted apart",
		Missing: "the stale write needs the paused holder's token to exceed the next holder's, which contention decides, not any fault here"},
	{Name: "+fencing/kill-quorum", When: "fences !fence-sound reports", Config: fenced(nodes(faults(0, "kill-quorum"), 3), ""),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandKillQ, Source: SrcKleppmann,
		Why: "two holders at once after a node of a bare majority restarted empty; the maximum of independent per-node counters, one of them reset, is not a fencing token that keeps the stale holder out"},
	{Name: "+fencing+write-only/kill-quorum", When: "fences !fence-sound reports", Config: fenced(nodes(withWork(faults(500*ms, "kill-quorum"), harness.Workload{Hold: 800 * ms}), 3), harness.StoreWriteOnly),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandFence, Source: SrcKleppmann + "; " + SrcJepsen,
		Why:     "two holders at once after a node of a bare majority restarted empty: the maximum of per-node counters, one of them reset, need not order their writes, and the store may take a stale one",
		Missing: "the stale write needs the stale holder's token to exceed the next holder's, which how far the counters drifted apart decides, not the fault: 4 of 9 runs in three full matrices of 2026-12-01 and 12-02, 0 of 3 in the last"},
	{Name: "+fencing/client-pause,kill", When: "fences !fence-sound !reports", Config: fenced(withWork(restart(faults(time.Second, "client-pause", "kill"), nemesis.RestartImmediate), harness.Workload{Keys: 1, TTL: 500 * ms, Hold: 200 * ms}), ""),
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcKleppmann,
		Why:     "the maximum of independent per-node counters is not a fencing token: it need not grow from one holder to the next",
		Missing: "kill-quorum, which forces two holders, needs the per-node grants this lock does not report"},

	// Auto-extended leases (a hold of 3 TTLs, renewed every TTL/3), as
	// redsync's Extend, redislock's Refresh and Redisson's watchdog do.
	{Name: "+extend/latency", When: "extends elapsed", Config: extended(faults(time.Second, "latency"), 3*time.Second), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis + "; " + SrcExtends,
		Why: "an extend is a compare-and-pexpire (on a quorum, for RedLock) counted from before it was sent, like the acquire", Promise: "extends: a renewal is counted from before it was sent and checks the token"},
	// Three clients: with holds of three TTLs on one key, ten contenders
	// would be refused on all but about one acquire in a hundred, under
	// the share that says a run tested anything.
	{Name: "+extend/client-pause", When: "extends elapsed", Config: extended(withWork(pauseRun(), harness.Workload{Clients: 3}), 1500*ms),
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}, Source: SrcKleppmann + "; " + SrcExtends,
		Why:     "renewing does not help a holder paused past its TTL between its check and its write; its next extend is refused",
		Promise: "extends: an extend renews the lease only while its holder still holds it", Quick: "mutant"},
	{Name: "+extend/clock-holder", When: "single extends", Config: extended(faults(0, "clock-holder"), 3*time.Second),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann,
		Why: "a forward jump just past the holder's validity expires its key, whatever the renewals: the next extend is refused, after another client took the key"},
	{Name: "+extend/clock-majority", When: "quorum extends", Config: extended(faults(0, "clock-majority"), 3*time.Second),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "a jump on a majority of the holder's nodes just past its validity expires the keys while the holder's validity runs on; renewing comes too late"},
	{Name: "+extend/kill-immediate", When: "single extends", Config: extended(restart(faults(time.Second, "kill"), nemesis.RestartImmediate), 3*time.Second),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandKill, Source: SrcRedis,
		Why: "a node restarted without persistence forgets the lock; the holder's next extend is refused, too late"},
	{Name: "+extend/kill-delayed", When: "quorum extends persist:delayed-restart", Config: extended(restart(faults(time.Second, "kill"), nemesis.RestartDelayed), 3*time.Second),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRedis,
		Why: "delayed restarts: a minority down cannot break the quorum of an acquire or an extend", Promise: "quorum with delayed restarts: a minority down or stopped cannot break it"},

	// Clocks: RedLock assumes bounded clock drift; a single instance's key
	// expires by its one node's clock.
	{Name: "clock", When: "quorum", Config: faults(time.Second, "clock"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandClock5, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "a wall-clock jump on nodes expires their keys early while the holder's validity runs on"},
	{Name: "clock", When: "single", Config: withWork(faults(time.Second, "clock"), harness.Workload{Hold: 500 * ms}),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandClock1, Source: SrcSingle,
		Why: "a forward jump on the one node expires the held key at once, while the holder's validity runs on its own clock"},
	{Name: "clock-holder", When: "single", Config: faults(0, "clock-holder"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcSingle,
		Why: "a forward jump just past the holder's validity expires its key while it still counts on it", Quick: "fences !renews"},
	// The contested case: the clients split onto two bare majorities, one
	// client a side (the kind's workload); one shared node's clock jump
	// leaves the holder without a majority and gives the other side one.
	{Name: "clock-partition", When: "quorum", Config: nodes(faults(0, "clock-partition"), 3),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "two clients on two bare majorities sharing one node: a forward jump of the shared node's clock frees it for the other side while the holder's validity runs on (with more clients a side, the holder's side-mates' partial grants keep the freed node taken)"},
	{Name: "clock-majority", When: "quorum", Config: faults(0, "clock-majority"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcKleppmann + "; " + SrcAntirez,
		Why: "a majority of the holder's nodes jump past its validity: RedLock assumes bounded clock drift", Quick: "fences !renews"},
	{Name: "clock-minority", When: "quorum", Config: faults(0, "clock-minority"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcAntirez,
		Why: "control: a minority's clocks jump, the rest of the holder's nodes are still a majority", Promise: "quorum: a grant needs a majority, and two majorities intersect", Quick: "fences !renews"},
	// A backward jump healed by slewing (0.8%, below the 1% drift the
	// locks allow for) instead of a forward jump. A step lasts a dozen
	// TTLs and more, one to a run: three keys make it three trials.
	{Name: "clock-back-slew", When: "elapsed !process", Config: withWork(faults(time.Second, "clock-back-slew"), harness.Workload{Keys: 3, TTL: 500 * ms, Hold: 480 * ms}), MinDuration: 16 * time.Second,
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Liveness: checker.LivenessOK}, Source: SrcAntirez + "; " + SrcKleppmann,
		Why:     "a backward jump makes keys outlive their TTL, and the slewed heal runs the node's clock 0.8% fast, so a key set meanwhile expires at most 0.8% of the TTL early, within the drift allowance (1% + 2 ms): liveness only. The holds of 96% of the TTL make it sensitive to a clock running about 4% fast or more",
		Promise: "drift allowance: a node clock running at most 1% fast cannot expire a key before the holder's validity ends"},
	// A jump of the client's wall clock (client processes only: the kind
	// refuses Go locks, whose time.Now the shim cannot move).
	{Name: "client-clock", When: "quorum monotonic", Config: nodes(withWork(faults(time.Second, "client-clock"), harness.Workload{Keys: 2, TTL: 500 * ms, Hold: 450 * ms}), 3),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcAntirez + "; " + SrcRedLockPy,
		Why:     "the client's validity is counted on a monotonic clock, which the jumps do not move; the hold of 0.9 TTL fits the validity of a round shorter than 43 ms",
		Promise: "validity on a monotonic clock: a jump of the client's wall clock does not move it"},
	// The same with holds of 1.5 TTL, which every correct count ends at
	// its validity (no section writes: the resource is not tested), so
	// that a count that over-claims shows as leases outliving their keys.
	{Name: "client-clock-hold750", When: "quorum monotonic", Config: nodes(withWork(faults(time.Second, "client-clock"), harness.Workload{Keys: 2, TTL: 500 * ms, Hold: 750 * ms}), 3),
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectPossible}, Source: SrcAntirez + "; " + SrcRedLockPy,
		Why:     "a monotonic count ends each hold of 1.5 TTL at its validity, before the keys expire, whatever the client's wall clock does; no section can write within its validity, so the resource is not tested",
		Promise: "validity on a monotonic clock: a jump of the client's wall clock does not move it",
		Missing: "the resource: a hold longer than the TTL lets no correct section write",
		Catch:   &report.Band{Min: 0.6, Max: 1, Why: "a backward jump of the strobe must fall inside a round that wins the key, and the over-claimed hold must meet the next grant: seen on 3 of 3 seeds and 9 of 10"}},

	// Server stalls: the process runs, the event loop does not (the
	// kinds' workload: one key, holds of 500 ms).
	{Name: "server-stall", When: "elapsed", Config: faults(0, "server-stall"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcStall + "; " + SrcLeaseRule,
		Why:     "a stalled node only delays: the commands sent meanwhile run late, and a key expires by the wall clock as the holder's validity, counted from before its request, runs out",
		Promise: "elapsed from request: a stall delays the grants and the replies, never stretches the validity past the key", Quick: "lock:setnx"},
	// Not for a quorum lock: its contenders' rounds wait on the stalled
	// majority until their call timeout (well under the stall), so no
	// contender gets an answer while the struck hold lasts and the strike
	// tests nothing; server-stall covers its stalls.
	{Name: "server-stall-holder", When: "elapsed !quorum", Config: faults(0, "server-stall-holder"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcStall + "; " + SrcLeaseRule,
		Why:     "the holder's nodes (a majority of them) stall at the grant for just over the validity left: the holder's validity ends during the stall, and the contenders' queued commands run only after it",
		Promise: "elapsed from request: a stall delays the grants and the replies, never stretches the validity past the key"},

	// Broken connections (the kinds' workload: one key, holds of 500 ms).
	{Name: "reset-peer", When: "elapsed", Config: faults(0, "reset-peer"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcConn,
		Why:     "a reset loses a command or its reply: the lock takes the acquire as failed or unknown, never as granted, and a key it set unknowingly expires within the TTL",
		Promise: "unknown outcomes: a call whose reply was lost is never taken for a grant", Quick: "lock:redlock"},
	{Name: "limit-data", When: "elapsed", Config: faults(0, "limit-data"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcConn,
		Why:     "a connection cut after some bytes, mid-reply or mid-command, fails the call under way: failed or unknown, never granted",
		Promise: "unknown outcomes: a call whose reply was lost is never taken for a grant"},
	{Name: "slicer", When: "elapsed", Config: faults(0, "slicer"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcConn + "; " + SrcLeaseRule,
		Why:     "replies in fragments arrive whole and late; the validity counted from before the request is shortened by the delay",
		Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"},
	{Name: "conn-drop", When: "elapsed", Config: faults(0, "conn-drop"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcConn,
		Why:     "a dropped connection times its call out: the lock takes it as unknown, and the call on another connection decides afresh",
		Promise: "unknown outcomes: a call whose reply was lost is never taken for a grant"},
	{Name: "bandwidth", When: "elapsed", Config: faults(0, "bandwidth"), Expect: report.ExpectAll(report.ExpectSafe), Source: "toxiproxy's bandwidth toxic (Shopify/toxiproxy README); " + SrcLeaseRule,
		Why:     "a throttled connection delivers a call late, or times it out: the validity counted from before the request is shortened by the wait, and a timed-out acquire is unknown, never a grant",
		Promise: "elapsed from request: the validity is counted from before the request, so a slow reply shortens it"},

	// Memory pressure: maxmemory lowered under a policy, filler keys
	// written (the kinds' workload: one key, holds of 500 ms).
	{Name: "evict", When: "single", Config: faults(0, "evict"),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandEvict, Source: SrcEvict,
		Why: "allkeys-lru evicts the held lock key once the fillers written since its grant are newer than it: the next SET NX is granted while the holder still holds", Quick: "lock:setnx-watchdog"},
	{Name: "noeviction", When: "single", Config: faults(0, "noeviction"), Expect: report.ExpectAll(report.ExpectSafe), Source: SrcEvict,
		Why:     "noeviction evicts nothing: past maxmemory the node refuses the writes that need memory, the lock's SET NX among them, so the lock is unavailable, never granted twice",
		Promise: "no eviction: a lock key stays until it is deleted or expires"},

	// Contention, no fault: many clients want one key. No Redis lock
	// keeps a queue, so one may be passed over while the others take
	// turns (starvation); a quorum lock's contenders may each win too
	// few nodes, give them all back and retry together (split votes).
	{Name: "+crowd/none", When: "elapsed !renews !consensus", Config: crowdRun(), MinDuration: 16 * time.Second,
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Starvation: report.ExpectViolation}, Source: SrcContention,
		Why:     "twelve clients on one key, each holding it 300 ms: a fair lock would give each a turn every 3.6 s, but the key goes to whichever contender asks first after a release, and some client waits past three TTLs and its longest call while the others are granted it again and again",
		Promise: "mutual exclusion without faults"},
	{Name: "+lockstep/none", When: "quorum", Config: nodes(lockstepRun(), 5), MinDuration: 8 * time.Second,
		Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, SplitVotes: report.ExpectPossible}, Source: SrcContention,
		Why:     "twenty clients on one key of five nodes, every one retrying after the same 10 ms: whenever the key is free the contenders' SETs split the nodes, nobody has a majority, all give back what they won and try again together; the random delay RedLock asks for is what breaks such ties",
		Promise: "mutual exclusion without faults",
		Missing: "a split vote past its bound (one TTL): the rounds resolve within a few hundred milliseconds here, equal delays or not (in one run of the row the longest was 63 ms for redlock, 33 ms for redsync, 50 ms for redlock-py; 273 ms with fifty clients, 367 ms with all five nodes as the quorum), as the order in which the nodes see the contenders differs from round to round"},

	// Failover with asynchronous replication.
	{Name: "failover", When: "single topology:failover", Config: failoverRun("failover", 0), MinDuration: 20 * time.Second,
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Band: bandFail, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "the replica is promoted without the lock the old primary granted", Quick: "fences !renews"},
	{Name: "failover-unreplicated", When: "single topology:failover", Config: failoverRun("failover-unreplicated", 0),
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcRedis + "; " + SrcKleppmann,
		Why: "the primary grants under the cut, the replica never gets the key and is promoted; the next client acquires there while the first holds"},
	{Name: "+wait/failover", When: "single topology:failover wait", Config: failoverRun("failover", 1), MinDuration: 20 * time.Second,
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcWait + "; " + SrcRedis,
		Why:     "WAIT 1 puts the key on the replica before the client holds, which closes setnx/failover's window for acknowledged grants; the promoted replica still expires by its own clock, and a grant the old primary gives while isolated is never acknowledged (refused), so what is left is narrow",
		Missing: "a promotion of a replica whose clock is ahead, or a WAIT acknowledged by a replica that is then not the one promoted; no fault here aims at either"},
	{Name: "+wait/failover-unreplicated", When: "single topology:failover wait", Config: failoverRun("failover-unreplicated", 1),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcWait + "; " + SrcRedis,
		Why:     "WAIT 1 cannot be acknowledged under the cut, so the lock refuses every acquire the old primary grants there (it deletes the key): every lease it hands out is on the replica that is promoted",
		Promise: "WAIT 1: a grant only once the replica acknowledged the key"},
	// The replication link alone (its own proxy): the sentinels and the
	// clients still reach the primary, which nobody promotes away.
	{Name: "replica-partition", When: "single topology:failover", Config: topology(withWork(faults(time.Second, "replica-partition"), harness.Workload{Hold: 500 * ms}), "failover"),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRepl,
		Why:     "the lock talks to the primary alone; the replica's lag matters only once it is promoted, and the sentinels, who still reach the primary, promote nobody",
		Promise: "one primary: a lock that talks to the primary alone is unmoved by its replica's lag"},
	{Name: "replica-latency", When: "single topology:failover", Config: topology(withWork(faults(time.Second, "replica-latency"), harness.Workload{Hold: 500 * ms}), "failover"),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcRepl,
		Why:     "a slow replication link only makes the replica lag; the lock talks to the primary alone",
		Promise: "one primary: a lock that talks to the primary alone is unmoved by its replica's lag"},
	{Name: "+wait/replica-partition", When: "single topology:failover wait", Config: waited(topology(withWork(faults(time.Second, "replica-partition"), harness.Workload{Hold: 500 * ms}), "failover"), 1),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcWait + "; " + SrcRepl,
		Why:     "WAIT 1 cannot be acknowledged across the cut: the lock refuses those grants, unavailable rather than unsafe",
		Promise: "WAIT 1: a grant only once the replica acknowledged the key"},
	{Name: "failover-kill-always", When: "single topology:failover", Config: persist(withWork(restart(topology(faults(time.Second, "kill"), "failover"), nemesis.RestartImmediate), harness.Workload{Hold: 500 * ms}), "always"),
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcFsync + "; " + SrcRedis,
		Why:     "one data node crashes and restarts at once from its append-only file: the primary keeps every lock it acknowledged and no promotion is needed; a replica's crash does not touch the primary",
		Promise: "persistence with appendfsync always: a restarted node keeps every lock it acknowledged"},

	// Redis Cluster: the key lives on the master of its slot, replicated
	// asynchronously; the cluster promotes a replica itself.
	{Name: "cluster-failover-unreplicated", When: "single topology:cluster", Config: clusterRun("cluster-failover-unreplicated", 3*time.Second, 0), MinDuration: 20 * time.Second,
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcCluster + "; " + SrcKleppmann,
		Why: "the key's master grants while cut from its replica, the replica is forced over without the key, and the next client acquires it there while the first holds", Quick: "lock:setnx"},
	{Name: "+wait/cluster-failover-unreplicated", When: "single topology:cluster wait", Config: clusterRun("cluster-failover-unreplicated", 3*time.Second, 1), MinDuration: 20 * time.Second,
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcCluster + "; " + SrcWait,
		Why:     "WAIT 1 cannot be acknowledged while the master is cut from its replica, so the lock refuses (and deletes) every grant the master gives there: every lease it hands out is on the replica that is promoted",
		Promise: "WAIT 1: a grant only once the replica acknowledged the key"},
	{Name: "cluster-partition-master", When: "single topology:cluster", Config: clusterRun("cluster-partition-master", 8*time.Second, 0), MinDuration: 30 * time.Second,
		Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, Source: SrcCluster + "; " + SrcKleppmann,
		Why: "the key's master, cut off every other node, grants once more before it notices it is a minority; the majority promotes its replica without that grant, and the next client acquires the key there while the first holds"},
	{Name: "cluster-migrate", When: "single topology:cluster", Config: clusterRun("cluster-migrate", 3*time.Second, 0), MinDuration: 20 * time.Second,
		Expect: report.ExpectAll(report.ExpectSafe), Source: SrcMigrate,
		Why:     "the held key's slot moves to another master while it is held: MIGRATE carries the key with its remaining TTL, and a client that tries the key follows ASK and MOVED to the new master, where the key still refuses it",
		Promise: "a key moved between masters keeps its value and TTL"},
	{Name: "cluster-kill-master", When: "single topology:cluster", Config: clusterRun("cluster-kill-master", 5*time.Second, 0), MinDuration: 20 * time.Second,
		Expect: report.ExpectAll(report.ExpectPossible), Source: SrcCluster,
		Why:     "the master of the held key's slot is killed and its replica promoted: the key is lost only if the grant had not reached the replica, which replicates within a millisecond of the master's reply, so a kill after a grant seldom loses it",
		Missing: "a kill aimed within the millisecond between a grant and its replication; cluster-failover-unreplicated makes that window with a cut instead"},
}

// The workloads of the table, built from their parts.

// faults is a run with the fault kinds named, interval apart (0: the
// harness's default, or a targeted kind's).
func faults(interval time.Duration, kinds ...string) harness.Config {
	return harness.Config{Faults: harness.Faults{Nemesis: kinds, NemesisInterval: interval}}
}

// withWork sets the workload fields w sets.
func withWork(c harness.Config, w harness.Workload) harness.Config {
	if w.Keys != 0 {
		c.Keys = w.Keys
	}
	if w.TTL != 0 {
		c.TTL = w.TTL
	}
	if w.Hold != 0 {
		c.Hold = w.Hold
	}
	if w.Clients != 0 {
		c.Clients = w.Clients
	}
	if w.Quorum != 0 {
		c.Quorum = w.Quorum
	}
	return c
}

func restart(c harness.Config, mode string) harness.Config { c.Restart = mode; return c }
func nodes(c harness.Config, n int) harness.Config         { c.Nodes = n; return c }
func topology(c harness.Config, t string) harness.Config   { c.Topology = t; return c }

// persist runs the nodes with the append-only file, fsynced by policy.
func persist(c harness.Config, policy string) harness.Config {
	c.Appendfsync = policy
	return c
}

// waited makes setnx WAIT for n replicas after each granted SET.
func waited(c harness.Config, n int) harness.Config { c.WaitReplicas = n; return c }

// fenced turns fencing on, with the store checking tokens as store says
// ("" for every access).
func fenced(c harness.Config, store string) harness.Config {
	c.Fencing, c.Store = true, store
	return c
}

// extended renews the lease while the client works a cycle of hold.
func extended(c harness.Config, hold time.Duration) harness.Config {
	c.Extend, c.Hold = true, hold
	return c
}

// clientStop is the client-stop workload: the harness's defaults (the
// strike is right after a grant, and the stopped holder's hold lasts as
// long as the stop), a Go lock in client processes of its own, with
// fencing when fenced.
func clientStop(fenced bool) harness.Config {
	c := faults(0, "client-stop")
	c.ClientProcess, c.Fencing = true, fenced
	return c
}

// partitionHolder is the partition-holder workload: four clients on one
// key, a TTL of 500 ms and holds of 1.5 s that a watchdog renews.
func partitionHolder() harness.Config {
	return withWork(faults(time.Second, "partition-holder"), harness.Workload{Clients: 4, Keys: 1, TTL: 500 * ms, Hold: 1500 * ms})
}

// crashRun is the client-crash workload: one key, a crash every other
// second, the default TTL of 1 s (with 500 ms, redsync, whose rounds get
// a twentieth of the TTL, was once refused every acquire for its first 4 s
// on a loaded machine), and a liveness bound of 1.5 TTLs: the quiet time
// between the crashes is what the bound is held to, and with 3 TTLs a key
// a crash left stuck for ever fit under it on one seed of three.
func crashRun() harness.Config {
	c := withWork(faults(time.Second, "client-crash"), harness.Workload{Keys: 1})
	c.LivenessBound = 1500 * ms
	return c
}

// crowdRun is the starvation workload: twelve clients on one key, holds
// of 300 ms (a turn each every 3.6 s if the lock were fair).
func crowdRun() harness.Config {
	return withWork(harness.Config{}, harness.Workload{Clients: 12, Keys: 1, Hold: 300 * ms})
}

// lockstepRun is the split-vote workload: twenty clients on one key,
// short holds, and every retry after the same 10 ms (no jitter).
func lockstepRun() harness.Config {
	c := withWork(harness.Config{}, harness.Workload{Clients: 20, Keys: 1, Hold: 10 * ms})
	c.RetryDelay = 10 * ms
	return c
}

// pauseRun is the client-pause workload: one key, a TTL of 500 ms, a
// pause half a second after the last one healed. A pause stalls one
// holder, so a step is one trial whatever the keys: the quiet between
// steps (a TTL, long enough for the next holder to take the key) is what
// sets the trials of a run, three in 8 s.
func pauseRun() harness.Config {
	return withWork(faults(500*ms, "client-pause"), harness.Workload{Keys: 1, TTL: 500 * ms})
}

// failoverRun is a run of kind in the failover topology, with WAIT for
// wait replicas: four clients, a TTL of 3 s and holds of 2.5 s, a step
// every 3 s (the promotion takes seconds). With ten clients on keys held
// 2.5 s of 3 the clients were granted under 1 % of their acquires, and
// the run decided nothing.
func failoverRun(kind string, wait int) harness.Config {
	c := topology(withWork(faults(3*time.Second, kind), harness.Workload{Clients: 4, TTL: 3 * time.Second, Hold: 2500 * ms}), "failover")
	c.WaitReplicas = wait
	return c
}

// clusterRun is a run of kind on Redis Cluster (a 3×2 cluster), with
// WAIT for wait replicas: four clients on one key (as failoverRun),
// holds of TTL − 500 ms, a step every 3 s (a promotion takes about a
// second).
func clusterRun(kind string, ttl time.Duration, wait int) harness.Config {
	c := topology(withWork(faults(3*time.Second, kind), harness.Workload{Clients: 4, Keys: 1, TTL: ttl, Hold: ttl - 500*ms}), "cluster")
	c.WaitReplicas = wait
	return c
}

// Derive returns the cells of Literature for the lock spec with promises
// p, in the table's order: one for every row p and spec select (When),
// named lock+row. A fault p claims to survive (SafeUnder) is expected
// safe, whatever the table says of its class, with that claim as the
// promise. A mutant's cells are the rows of its bugs alone (locks.Bug),
// each expecting the bug's property violated.
func Derive(spec locks.Spec, p locks.Promises) []Spec {
	traits := spec.Traits(p)
	var out []Spec
	for _, r := range Literature {
		if !locks.Match(traits, r.When) {
			continue
		}
		sp := cell(spec.Name, p, r)
		sp.Traits = traits
		sp.Quick = r.Quick != "" && locks.Match(append(slices.Clone(traits), "lock:"+spec.Name), r.Quick)
		if spec.Mutant {
			i := slices.IndexFunc(spec.Bugs, func(b locks.Bug) bool { return b.Row == r.Name })
			if i < 0 {
				continue
			}
			mutate(&sp, r, spec.Bugs[i])
		} else if fault := r.Name[strings.LastIndex(r.Name, "/")+1:]; sp.Expect.Overall() != report.ExpectSafe && slices.Contains(p.SafeUnder, fault) {
			sp.Expect = report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Liveness: sp.Expect.Liveness}
			sp.Source, sp.Band = SrcDeclared, report.DefaultBand(report.ExpectSafe)
			sp.Why = fmt.Sprintf("the lock declares it survives %s (the literature expects %s of its class: %s)", fault, r.Expect, r.Why)
			sp.Promise, sp.Missing = "safe under "+fault+" (declared)", ""
		}
		if !spec.Mutant && sp.Expect.Lease == report.ExpectSafe {
			// Where the lease is promised, so is every reply: an ok the
			// nodes contradict is a lie. Where a fault breaks the lease,
			// a reply may be overtaken by it, and nothing is promised.
			sp.Expect.Answers = report.ExpectSafe
		}
		out = append(out, sp)
	}
	return out
}

// cell is row r for the lock called lock with promises p.
func cell(lock string, p locks.Promises, r Row) Spec {
	c := r.Config
	c.Nemesis = slices.Clone(c.Nemesis)
	c.Lock = lock
	if c.Nodes == 0 && p.Quorum > 0 && c.Topology == "" {
		c.Nodes = p.Quorum
	}
	name := lock + "/" + r.Name
	if strings.HasPrefix(r.Name, "+") {
		name = lock + r.Name
	}
	band := report.DefaultBand(r.Expect.Overall())
	if r.Band != nil {
		band = *r.Band
	}
	class := r.When
	if class == "" {
		class = "any"
	}
	return Spec{Name: name, Row: r.Name, Class: class, Config: c, MinDuration: max(r.MinDuration, nemesis.WindowOf(c.Nemesis).Duration),
		Expect: r.Expect, Band: band, Source: r.Source, Why: r.Why, Promise: r.Promise, Missing: r.Missing}
}

// mutate turns a row's cell into the cell of a mutant whose bug b breaks
// it: the bug's property is expected violated (at the row's Catch band),
// every other property expected safe may now break too, and the cell
// cites the bug.
func mutate(sp *Spec, r Row, b locks.Bug) {
	loosen := func(e report.Expectation) report.Expectation {
		if e == report.ExpectSafe {
			return report.ExpectPossible
		}
		return e
	}
	e := report.Expect{Lease: loosen(sp.Expect.Lease), Resource: loosen(sp.Expect.Resource)}
	switch b.Property {
	case report.PropertyLease:
		e.Lease = report.ExpectViolation
	case report.PropertyResource:
		e.Resource = report.ExpectViolation
	case "liveness":
		e.Liveness = checker.LivenessStuck
	}
	if slices.Contains(b.Also, "answers") {
		e.Answers = report.ExpectViolation
	}
	sp.Expect = e
	sp.Band = report.DefaultBand(report.ExpectViolation)
	if b.Property == "liveness" {
		sp.Band = report.DefaultBand(e.Overall())
	}
	if r.Catch != nil {
		sp.Band = *r.Catch
	}
	sp.MinDuration = max(sp.MinDuration, r.CatchFor)
	sp.Bug, sp.Why = b.Why, b.Why
	sp.Source = SrcMutant + "; " + r.Source
	sp.Promise, sp.Missing = "", ""
}

// CellsFor returns the cells of the release gate of the lock called lock:
// the rows of Literature its declared promises select (Derive), every
// one of them, whatever the row's Quick. A mutant gets its class's rows
// too: the gate judges a lock by the promises it declares, and a mutant
// declares those of the lock it mutates, which it breaks.
func CellsFor(lock string) ([]Spec, locks.Promises, error) {
	spec, err := locks.Lookup(lock)
	if err != nil {
		return nil, locks.Promises{}, err
	}
	p, err := locks.DeclaredPromises(spec, locks.WithKnownNames(KnownNames()))
	if err != nil {
		return nil, locks.Promises{}, err
	}
	spec.Mutant, spec.Bugs = false, nil
	out := Derive(spec, p)
	for i := range out {
		out[i].Quick = false
	}
	return out, p, nil
}

// Cells returns the matrix: the cells of every registered lock (Derive),
// lock by lock in the registry's order; quick restricts it to the release
// gate's quick profile. A lock that declares no promises, or promises that
// do not check (a name no row or topology knows), has no cell:
// TestEveryLockDeclares holds the registry to it.
func Cells(quick bool) []Spec {
	var out []Spec
	for _, name := range locks.Names() {
		spec, err := locks.Lookup(name)
		if err != nil {
			continue
		}
		p, err := locks.DeclaredPromises(spec, locks.WithKnownNames(KnownNames()))
		if err != nil {
			continue
		}
		for _, sp := range Derive(spec, p) {
			if !quick || sp.Quick {
				out = append(out, sp)
			}
		}
	}
	return out
}

// Rows returns the names of the rows of Literature, each once, in the
// table's order.
func Rows() []string {
	var out []string
	for _, r := range Literature {
		if !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// KnownNames are the names a lock's promises may use: the topologies
// (cluster.Topologies) and, for SafeUnder, the faults of the table's rows
// (the part of a row's name after its last "/").
func KnownNames() locks.PromiseNames {
	k := locks.PromiseNames{Topologies: []string{cluster.TopologyMasters, cluster.TopologyFailover, cluster.TopologyCluster}}
	for _, r := range Rows() {
		fault := r[strings.LastIndex(r, "/")+1:]
		if !slices.Contains(k.SafeUnder, fault) {
			k.SafeUnder = append(k.SafeUnder, fault)
		}
	}
	return k
}
