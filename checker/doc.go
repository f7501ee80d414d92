// Package checker decides, from a recorded history alone, whether mutual
// exclusion held. What each verdict means is docs/correctness.md; this
// doc keeps the rules the package owns beyond it.
//
// It reads histories, never a live system: it imports package history and
// porcupine and nothing that talks to Redis, so a saved run can be
// re-checked offline years later. Two porcupine models, partitioned per
// key, give the safety verdicts: lease (lease.go) and resource
// (resource.go). An independent sweep cross-checks the lease verdict on
// every history; a disagreement is a bug, reported as such. A porcupine
// timeout gives [Unknown], never a pass.
//
// # Holds
//
// Per key, a client holds the lock (a [Hold]) from the Time of its
// acquire's ok until the earliest of the invoke of its next release of
// that token, its validity, and a loss notice of that token
// (history.Lost; [Stats.LossNotices]). The validity is the acquire ok's
// ValidUntil, replaced by an extend ok's if the extend was invoked before
// the current validity. A lock that renews itself claims a validity a
// century away: its hold ends at its release or its notice. An acquire
// that failed, is unknown (info) or never completed creates no hold.
// Holds overlap when one starts strictly before the other ends.
//
// A token fixed per client (Redisson's client id and thread): a release
// or an extend acts on the client's latest grant of that token, and a new
// grant ends the client's earlier hold of it at the new ok. A lapsed
// grant is never stretched to the release of a later one.
//
// A late extend (invoked at or after the current validity) finds the hold
// ended there; if it returns ok, the client goes on as holder, so its ok
// starts a new hold of the same token and fence until the extend's
// ValidUntil ([Stats.LateExtends]). A correct lock grants one only while
// its own key is still set, so that hold overlaps nothing.
//
// Fence order: the fencing tokens of a key's holds, by Start, must
// strictly increase (a late extend's new hold is the same grant; holds
// without a token are not judged); a [FenceViolation] makes Lease Invalid.
//
// # Size and streaming
//
// Porcupine's memory grows with the square of a partition's size, so each
// key is cut further, exactly, into parts of a few hundred holds or
// sections (leaseChunks, resourceChunks). [Stream] (and [CheckDecoder])
// checks a history as it is read and keeps per key only holds, sections
// and acquire attempts: 10⁶ operations check in about 150–250 MiB
// (BENCHMARKS.md, part 2). [Stream.Watch] notices, as events come, the
// first violation they already show (cmd/bench's detection runs).
// [Analyze] derives, in the same pass, an [Analysis] (leases, ok
// sections, node observations, lost updates) that package explain and
// the report read instead of the raw events.
//
// # Other verdicts
//
// Liveness ([Result.Liveness], liveness.go), holds kept ([Result.Holds],
// cuts.go), truthful answers ([Result.Answers], answers.go), starvation
// and split votes (starve.go, which says why each bound) do not count in
// [Result.Outcome], which folds the two safety verdicts (see [Fold]). A
// verdict about nothing is Unknown with its reason ([ReasonNoAcquire],
// [ReasonNoHold], [ReasonNoSection]); why a run produced such a history
// is for the layer that knows its configuration to add.
//
// # Malformed histories
//
// [Check] returns an error wrapping [ErrMalformed] for an event that fails
// history.Event.Validate, a completion with no open invoke of its process
// (or of another f or key), an invoke while its process has an operation
// open, a completion earlier than its invoke, an invoke earlier than the
// previous completion of its process or a lost notice earlier than the
// grant it ends (either would end a hold before it began and hide it), a
// section ok that did not write read+1, and a history without events.
package checker
