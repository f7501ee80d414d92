package nemesis

import (
	"context"
	"time"
)

// View is the run's live holds, implemented by the harness. It is a log
// of changes with a cursor, as etcd's watch follows a revision: a fault
// that must not miss a grant reads the snapshot (Holds), then follows
// Next from its cursor, without polling.
type View interface {
	// Holds returns the holds open now, oldest grant first, and the
	// sequence number of the last change they include.
	Holds() (holds []Hold, seq uint64)
	// Next returns the changes with a sequence number above after, in
	// order, waiting until there is one or ctx is done. The view keeps
	// the most recent changes only (harness: 4096): a caller that fell
	// further behind sees a gap in their sequence numbers.
	Next(ctx context.Context, after uint64) ([]Change, error)
}

// Hold is one client's hold of one key, from the acquire that returned
// ok until the client gave the lease up. Times are nanoseconds from the
// run's base, the clock of the history.
type Hold struct {
	// Client is the client that holds (the history's process).
	Client int
	// Group is the holder's client group (cluster.Node.GroupLink).
	Group int
	Key   string
	Token string
	Fence int64
	// Granted are the nodes whose grant made the hold (or its last
	// extend), as the history's "nodes"; meaningless unless Reported.
	Granted  []int
	Reported bool
	Acquired int64
	// ValidUntil is the end of the lease's validity; Deadline the same
	// instant with a monotonic reading, to wait for.
	ValidUntil int64
	Deadline   time.Time
	// InSection: between its first validity check and its write or
	// giving up.
	InSection bool
	// Checked is when the holder last checked its validity (0: not yet),
	// Checks how often this hold; a section's second check is its last
	// before the write.
	Checked int64
	Checks  int
	// Ended is when the client invoked its release (or gave the lease up);
	// 0 while open.
	Ended int64
}

type ChangeKind string

// The changes of a hold, in order: HoldGranted, any number of
// HoldExtended and of sections (HoldEntered, HoldChecked, HoldLeft), then
// HoldEnded.
const (
	HoldGranted  ChangeKind = "granted"
	HoldExtended ChangeKind = "extended" // a new validity and Granted
	// HoldEntered: the holder checked its validity and entered its
	// critical section.
	HoldEntered ChangeKind = "entered"
	// HoldChecked: its last check before its write (a stalled holder
	// stalls right after it).
	HoldChecked ChangeKind = "checked"
	// HoldLeft: it wrote, or gave up (a failed check, an interruption).
	HoldLeft  ChangeKind = "left"
	HoldEnded ChangeKind = "ended"
)

type Change struct {
	// Seq numbers the changes of the run from 1, consecutively.
	Seq  uint64
	Kind ChangeKind
	Time int64
	// Hold is the hold right after the change.
	Hold Hold
}

// WaitFor follows v from the cursor after until a change that matches,
// or ctx's error.
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
