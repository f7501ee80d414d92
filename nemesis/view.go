package nemesis

import (
	"context"
	"time"
)

// View is the run's live state, for faults that strike at a moment of a
// hold rather than at a time drawn in advance: right after a grant by a
// bare majority, right after the holder's last validity check, while a
// hold is valid. The harness implements it and hands it over in
// Target.View; this package never imports the harness.
//
// It is a log of changes with a cursor, as etcd's watch follows a
// revision: Holds gives a consistent snapshot and the cursor it is
// current to, Next waits, without polling, for the changes after a
// cursor. A fault that must not miss a grant reads the snapshot, then
// follows Next from its cursor.
type View interface {
	// Holds returns the holds open now, oldest grant first, and the
	// sequence number of the last change they include.
	Holds() (holds []Hold, seq uint64)
	// Next returns the changes with a sequence number above after, in
	// order, waiting until there is at least one or ctx is done (then it
	// returns ctx's error). The view keeps the most recent changes only
	// (harness: 4096): a caller that fell further behind gets the oldest
	// it still has, and sees the gap in their sequence numbers, which
	// are otherwise consecutive.
	Next(ctx context.Context, after uint64) ([]Change, error)
}

// Hold is one client's hold of one key, as the client knows it: from the
// acquire that returned ok until the client gave the lease up. Times are
// offsets in nanoseconds from the run's base, the clock of the history
// (history.Event.Time).
type Hold struct {
	// Client is the client that holds (the history's process).
	Client int
	// Group is the client group of the holder: it reaches the nodes
	// through their proxies of that group (cluster.Node.GroupLink).
	Group int
	// Key, Token and Fence are the lease's.
	Key   string
	Token string
	Fence int64
	// Granted are the nodes whose grant made the hold (or its last
	// extend): the indices of the history's "nodes", as schedule.json
	// numbers the nodes. Reported is false when the lock reported no
	// per-node evidence: then Granted says nothing.
	Granted  []int
	Reported bool
	// Acquired is when the acquire returned ok.
	Acquired int64
	// ValidUntil is the end of the lease's validity, and Deadline the
	// same instant as a time.Time with a monotonic reading, to wait for.
	ValidUntil int64
	Deadline   time.Time
	// InSection is true while the holder is inside its critical section
	// (between its first validity check and its write or giving up).
	InSection bool
	// Checked is when the holder last checked its validity (0: not yet);
	// Checks how many times it has, this hold. A holder's second check
	// of a section is its last before it writes.
	Checked int64
	Checks  int
	// Ended is when the hold ended: the client invoked its release (or
	// gave the lease up otherwise); 0 while it is open.
	Ended int64
}

// Valid reports whether the hold is inside its validity at the run-clock
// time now.
func (h Hold) Valid(now int64) bool { return now < h.ValidUntil }

// ChangeKind says what happened to a hold.
type ChangeKind string

// The changes of a hold, in the order they happen to it: HoldGranted,
// then any number of HoldExtended and of sections (HoldEntered,
// HoldChecked, HoldLeft), then HoldEnded.
const (
	// HoldGranted: an acquire returned ok: a new hold.
	HoldGranted ChangeKind = "granted"
	// HoldExtended: an extend returned ok: a new validity, and the nodes that
	// extended it as Granted.
	HoldExtended ChangeKind = "extended"
	// HoldEntered: the holder checked its validity and entered its critical
	// section.
	HoldEntered ChangeKind = "entered"
	// HoldChecked: the holder checked its validity again, after its work and
	// before its write: its last check before it acts on the resource (a
	// stalled holder stalls right after it).
	HoldChecked ChangeKind = "checked"
	// HoldLeft: the holder left its critical section: it wrote, or gave up
	// (a failed check, an interruption).
	HoldLeft ChangeKind = "left"
	// HoldEnded: the hold ended (Hold.Ended is set).
	HoldEnded ChangeKind = "ended"
)

// Change is one change of one hold.
type Change struct {
	// Seq numbers the changes of the run from 1, consecutively.
	Seq  uint64
	Kind ChangeKind
	// Time is when it happened, on the run's clock.
	Time int64
	// Hold is the hold as it is right after the change.
	Hold Hold
}

// WaitFor follows v from the cursor after until a change for which match
// returns true, and returns it; or ctx's error. Pass the Seq of the
// returned change as the next after to go on from there.
func WaitFor(ctx context.Context, v View, after uint64, match func(Change) bool) (Change, error) {
	for {
		changes, err := v.Next(ctx, after)
		if err != nil {
			return Change{}, err
		}
		for _, c := range changes {
			if match(c) {
				return c, nil
			}
			after = c.Seq
		}
	}
}
