// Package checker decides, from a recorded history alone, whether mutual
// exclusion held.
//
// It reads histories, never a live system: it imports package history and
// porcupine and nothing that talks to Redis, so a saved run can be
// re-checked offline years later. Two porcupine models, partitioned per
// key, give the verdicts: lease safety (no two clients inside their
// validity at once) and resource safety (the lock-protected
// read-modify-write never loses an update; with fencing, a refused stale
// access is legal). An independent sweep cross-checks the lease verdict on
// every history; a disagreement is a bug and is reported as such. A
// porcupine timeout gives [Unknown], never a pass. Liveness and latency
// statistics come from the same history.
//
// # Lease safety
//
// Per key, a client holds the lock (a [Hold]) from the Time of its
// acquire's ok until the earliest of the Time of the invoke of its next
// release of that token, its validity, and the Time of a loss notice of
// that token (history.Lost: the lock told the holder it lost the lease, as
// a watchdog does when a renewal fails). The validity is the acquire
// ok's ValidUntil, replaced by the ValidUntil of an extend ok of that
// token if the extend was invoked before the current validity. A lock
// that renews itself claims no validity (it is a century away) and its
// hold ends at its release or its notice: a holder told after another
// client was granted the key overlapped it, a lease violation.
// [Stats.LossNotices] counts the notices.
//
// A token fixed per client. Some locks give a client the same token on
// every acquire (Redisson's is its client id and thread): a release or an
// extend then acts on the client's current grant of that token, the
// latest, and a new grant of a token ends the client's earlier hold of it
// at the new ok, if that hold had not ended yet. A lapsed grant is never
// stretched to the release of a later one.
//
// Late extends. An extend invoked at or after the current validity finds
// the hold already ended there. If it returns ok all the same, the client
// goes on as the holder on the strength of it (it may write), so its ok
// starts a new hold of the same token and fence, from the Time of the ok
// until the extend's ValidUntil. A correct lock may grant such an extend
// only while its own key is still set (the drift allowance keeps the key
// a little longer than the validity), and then no one else held the key
// in between and the new hold overlaps nothing. A lock that renews a
// lapsed lease without checking the token (a bare PEXPIRE), or that
// renews or revives another client's key, gives a hold that overlaps
// that client's: a lease violation. A late extend that fails or whose
// outcome is unknown starts nothing. [Stats.LateExtends] counts the late
// extends that returned ok. An
// that failed, whose outcome is unknown (info) or that never completed
// creates no hold: the client does not believe it holds the lock. Two holds
// of one key overlap when one starts strictly before the other ends;
// holds that touch (one ends at t, the next starts at t) do not.
//
// Fence order (Jepsen's fenced-mutex check). Where holds carry fencing
// tokens, the tokens of a key's holds, taken in grant order (by Start:
// holds that do not overlap were granted in that order), must strictly
// increase; a hold whose token is not greater than the highest granted
// before it is a [FenceViolation], reported with both holds, and makes
// the lease verdict Invalid: the token is part of what the lock hands
// out. A late extend's new hold of the same lease is the same grant.
// Holds without a token are not judged.
//
// Porcupine checks a mutex model in which each hold is a "lock" at its
// Start and an "unlock" at its End, both instantaneous; the sweep sorts
// each key's holds and looks for one starting before the latest End so
// far. See lease.go for why the two agree exactly, ties included.
//
// # Resource safety
//
// Per key, the protected value is a counter starting at 0. A section that
// returned ok read r and wrote r+1; one that failed wrote nothing and is
// legal in any state; one with an unknown outcome (info, or no completion)
// may or may not have written: an unfinished one at any time after its
// invoke, an info one before the Time of its info (the protected store is
// in-process, so nothing lands after the client gave up). A history is
// valid if the sections linearize; two ok sections that both read 5 and
// wrote 6 do not.
//
// # Verdicts about nothing
//
// A verdict speaks only of what the history tested. Lease is [Unknown] when
// the history has no hold: no acquire returned ok ([ReasonNoAcquire]), or
// every one returned after its validity had passed ([ReasonNoHold]).
// Resource is Unknown when no section returned ok ([ReasonNoSection]):
// sections that failed or whose outcome is unknown cannot lose an update.
// [Result.LeaseReason] and [Result.ResourceReason] say why in one line,
// with the counts of the operations and their most frequent error; they
// also name the keys porcupine could not decide in time. The checker reads
// histories only: why a run produced such a history (a hold longer than
// the TTL, an interrupted run) is for the layer that knows the run's
// configuration to add. A history with no event at all is malformed.
//
// # Size
//
// Porcupine's memory grows with the square of a partition's size, so each
// key is cut further, exactly, into parts of a few hundred holds or
// sections: holds at instants no hold spans, sections at instants no
// section spans and at which the value is pinned by the oks just before
// (see resourceChunks). The lease check is then linear in practice; a
// key's sections stay one part after a section that never completed.
//
// # Streaming
//
// [Stream] (and [CheckDecoder] on a history.Decoder) checks a history as
// it is read, one event at a time, and keeps only what the checks need:
// per key the holds, the sections and the acquire attempts. `torture
// check` uses it; [Check] is the same on a slice. Memory then grows with
// the number of holds and sections, not with the history's text: 10⁶
// operations check in about 150–250 MiB (BENCHMARKS.md, part 2). A Stream that
// [Stream.Watch]es also notices, as events come, the first violation they
// already show, so that a run can stop there (cmd/bench's detection runs).
//
// # Analysis
//
// [Analyze] (and [AnalyzeDecoder], [Stream.Analyze] with
// [Stream.FinishAnalysis]) checks a history and, in the same pass,
// derives an [Analysis]: the Result and, per key, the leases (each
// acquire ok with the nodes that granted it, its extends, its release),
// the ok sections and the nodes' observations (history.NodeKey events,
// which no verdict depends on), and the pairs of sections that lost an
// update. Package explain and the report read it, never the raw events.
//
// # Liveness
//
// [Result.Liveness] is [LivenessOK], [LivenessStuck] or [LivenessUnknown].
// A key is stuck when it stayed free (no hold, as the history shows it)
// yet unacquired, while acquires on it were in progress, for longer than
// a bound ([Options.LivenessBound]; by default [DefaultLivenessFactor] ×
// the longest validity an acquire was granted, about 3 × TTL), counting
// only the time under no fault: a fault may keep a key unacquirable, and
// the lock must recover in the quiet time after it. A key that many
// clients contend for can also be unacquirable for a while without any
// fault (RedLock's split votes): that is reported too. [Result.Stuck]
// gives the key, the interval and the last holder. Unknown means nothing to judge: no acquire, no bound, or a
// history shorter than the bound. [Stats.FaultAvailability] gives the
// availability before, during and after each stretch of faults.
//
// # Truthful answers, starvation, split votes
//
// Three verdicts beside liveness, none counted in Outcome: a matrix cell
// judges each where it states an expectation of it.
// [Result.Answers] holds each reply of the lock against what the nodes
// held when it was given ([Analysis.Contradictions]): an extend ok of a
// token its key no longer held, a release reported done while the key
// outlived it; only an Analysis judges it, from the node observations.
// [Result.Starvation] is invalid when a client waited, under no fault,
// longer than [Options.StarvationBound] (by default three validities plus
// the longest acquire call) for a key other clients were granted
// meanwhile ([Stats.LongestWait]). [Result.SplitVotes], for a key
// observed on more than one node, is invalid when the key was free on
// every node and yet, for longer than [Options.SplitVoteBound] (by
// default one validity) under no fault, every contender failed
// ([SplitVote]). starve.go says why each bound.
//
// # Outcome
//
// [Result.Outcome] folds the two safety verdicts into one word (see
// [Fold]): safe, violation or unknown; liveness does not count. Exit
// statuses and benchmarks go by it; a matrix cell that states a liveness
// expectation judges liveness by it.
//
// # When
//
// [Result.FirstLeaseViolation] is the start of the earliest overlap;
// [Result.FirstResourceViolation] the earliest completion of a second ok
// section that read a value another ok section of the key had read (both
// wrote value+1: an update was lost by then).
//
// # Malformed histories
//
// [Check] returns an error wrapping [ErrMalformed] for an event that fails
// history.Event.Validate, a completion with no open invoke of its process
// (or of another f or key), an invoke while its process has an operation
// open, a completion earlier than its invoke, an invoke earlier than the
// previous completion of its process (a process does one thing at a time:
// a release invoked before its own acquire's ok would otherwise end the
// hold before it began and hide it), a lost notice earlier than the
// grant of the hold it ends (for the same reason), a section ok that did not write
// read+1, and a history without events.
package checker
