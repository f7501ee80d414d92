package harness

import (
	"context"
	"errors"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// Recorder stamps events with one monotonic base shared by every client
// and the nemesis, and appends them to a history.
type Recorder struct {
	base    time.Time
	w       *history.Writer
	observe func(history.Event) // see WithStop; nil for none
}

// NewRecorder records to w with offsets from base (which must carry a
// monotonic reading, i.e. come from time.Now).
func NewRecorder(base time.Time, w *history.Writer) *Recorder {
	return &Recorder{base: base, w: w}
}

// Offset returns t as nanoseconds since the base.
func (r *Recorder) Offset(t time.Time) int64 { return t.Sub(r.base).Nanoseconds() }

// Now returns the current offset.
func (r *Recorder) Now() int64 { return r.Offset(time.Now()) }

// Append stamps e with the current offset when e.Time is zero and writes
// it.
func (r *Recorder) Append(e history.Event) error {
	if e.Time == 0 {
		e.Time = r.Now()
	}
	if err := r.w.Append(e); err != nil {
		return err
	}
	if r.observe != nil {
		r.observe(e)
	}
	return nil
}

// completion maps the error of a lock call to the type of its completion
// event: nil is ok; an error wrapping locks.ErrNotAcquired or
// locks.ErrNotHeld is a definite fail; anything else (a timeout, a lost
// connection, a cancelled context) leaves the outcome unknown: info.
func completion(err error) history.Type {
	switch {
	case err == nil:
		return history.Ok
	case errors.Is(err, locks.ErrNotAcquired), errors.Is(err, locks.ErrNotHeld):
		return history.Fail
	default:
		return history.Info
	}
}

// client is one simulated client: a process number and the recorder. One
// client never has two operations open at once.
type client struct {
	id  int
	rec *Recorder
}

func (c *client) acquire(ctx context.Context, lk locks.Lock, key string) (locks.Lease, error) {
	if err := c.rec.Append(history.Event{Type: history.Invoke, F: history.Acquire, Process: c.id, Key: key}); err != nil {
		return locks.Lease{}, err
	}
	lease, err := lk.Acquire(ctx, key)
	done := history.Event{Type: completion(err), F: history.Acquire, Process: c.id, Key: key}
	if err != nil {
		done.Error = err.Error()
	} else {
		done.Token, done.Fence, done.ValidUntil = lease.Token, lease.Fencing, c.rec.Offset(lease.Validity)
	}
	if werr := c.rec.Append(done); werr != nil {
		return locks.Lease{}, werr
	}
	return lease, err
}

func (c *client) release(ctx context.Context, lk locks.Lock, l locks.Lease) error {
	if err := c.rec.Append(history.Event{Type: history.Invoke, F: history.Release, Process: c.id, Key: l.Key, Token: l.Token, Fence: l.Fencing}); err != nil {
		return err
	}
	err := lk.Release(ctx, l)
	done := history.Event{Type: completion(err), F: history.Release, Process: c.id, Key: l.Key, Token: l.Token, Fence: l.Fencing}
	if err != nil {
		done.Error = err.Error()
	}
	if werr := c.rec.Append(done); werr != nil {
		return werr
	}
	return err
}
