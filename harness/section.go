package harness

import (
	"context"
	"errors"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// Errors with which a critical section gives up without writing.
var (
	ErrLeaseExpired = errors.New("harness: lease expired")
	// ErrLeaseLost: the lock told the holder it lost the lease
	// (locks.Lease.Lost).
	ErrLeaseLost   = errors.New("harness: the lock told the holder it lost the lease")
	ErrInterrupted = errors.New("harness: interrupted")
)

// invalid is why a lease is not valid at now: ErrLeaseLost when its lock said
// so, else ErrLeaseExpired.
func invalid(l locks.Lease) error {
	if l.Told() {
		return ErrLeaseLost
	}
	return ErrLeaseExpired
}

// criticalSection is the lock-protected read-modify-write: check the lease,
// read, hold, check again, write read+1. It returns what it read and wrote;
// on an error nothing was written.
//
// A client-pause or pause-holder fault stalls the client between the second
// check and the write for what stall returns given the validity left (0:
// none): the GC pause that outlives the lease. mark tells the view each
// passed check (nemesis.HoldEntered, HoldChecked) and the end (HoldLeft).
// await holds the client before each check while its process is stopped
// (client-stop): a check passed before the stop is the one it acts on after,
// as a real process does.
func criticalSection(ctx context.Context, st *Store, l locks.Lease, hold time.Duration, stall func(left time.Duration) time.Duration, mark func(nemesis.ChangeKind, time.Time), await func() error) (read, wrote int64, err error) {
	if await() != nil {
		return 0, 0, ErrInterrupted
	}
	now := time.Now()
	if !l.Valid(now) {
		return 0, 0, invalid(l)
	}
	mark(nemesis.HoldEntered, now)
	defer func() { mark(nemesis.HoldLeft, time.Now()) }()
	read, err = st.Read(l.Key, l.Fence)
	if err != nil {
		return 0, 0, err
	}
	if wait.Sleep(ctx, hold) != nil || await() != nil {
		return read, 0, ErrInterrupted
	}
	if now = time.Now(); !l.Valid(now) {
		return read, 0, invalid(l)
	}
	mark(nemesis.HoldChecked, now)
	if d := stall(l.Validity.Sub(now)); d > 0 && wait.Sleep(ctx, d) != nil {
		return read, 0, ErrInterrupted
	}
	if err := st.Write(l.Key, l.Fence, read+1); err != nil {
		return read, 0, err
	}
	return read, read + 1, nil
}

// section runs and records one critical section, and reports whether it
// wrote; one that gave up is a fail.
func (c *client) section(ctx context.Context, st *Store, l locks.Lease, hold time.Duration, stalls *staller) (bool, error) {
	inv := history.Event{Type: history.Invoke, F: history.Section, Process: c.id, Key: l.Key, Token: l.Token, Fence: l.Fence}
	// A client stopped right after its grant (client-stop) records the
	// section when it runs again.
	if err := stalls.step(ctx, c.id, func() error { return c.rec.Append(inv) }); err != nil {
		if errors.Is(err, ErrInterrupted) {
			return false, nil
		}
		return false, err
	}
	mark := func(k nemesis.ChangeKind, now time.Time) { c.view.section(c.id, k, now) }
	stall := func(left time.Duration) time.Duration { return stalls.take(c.id, left) }
	await := func() error { return stalls.await(ctx, c.id) }
	read, wrote, err := criticalSection(ctx, st, l, hold, stall, mark, await)
	done := inv
	done.Time = 0
	if err != nil {
		done.Type, done.Error = history.Fail, err.Error()
	} else {
		done.Type, done.Read, done.Wrote = history.Ok, history.Int64(read), history.Int64(wrote)
	}
	return err == nil, c.rec.Append(done)
}
