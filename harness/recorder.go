package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// Recorder stamps events with one monotonic base, shared by the clients and
// the nemesis, and appends them to a history.
type Recorder struct {
	base    time.Time
	w       *history.Writer
	observe func(history.Event) // see WithStop; nil for none
}

// NewRecorder records to w with offsets from base (from time.Now: monotonic).
func NewRecorder(base time.Time, w *history.Writer) *Recorder {
	return &Recorder{base: base, w: w}
}

// Offset returns t as nanoseconds since the base.
func (r *Recorder) Offset(t time.Time) int64 { return t.Sub(r.base).Nanoseconds() }

// Now returns the current offset.
func (r *Recorder) Now() int64 { return r.Offset(time.Now()) }

// Append stamps e with the current offset when e.Time is zero, and writes it.
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

// completion maps a lock call's error to its completion: ok; fail for
// locks.ErrNotAcquired or ErrNotHeld; else info (unknown: a timeout, a lost
// connection).
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

// client is one simulated client; it never has two operations open at once.
type client struct {
	id    int
	group int // the client group whose lock and proxies it uses
	rec   *Recorder
	lock  string         // the lock's registry name, for errors
	view  *view          // the live holds; nil records none
	ev    locks.Evidence // the per-node evidence of the open call (see traced)
	// ctx ends a loss notice's watch (the run's, not the cycle's); watching
	// is the watch.
	ctx      context.Context
	watching *lossWatch
}

// lossWatch is the watch of one lease's loss notice.
type lossWatch struct {
	stop chan struct{} // closed by unwatch
	done chan struct{} // closed when the watch returned
}

// watchLoss records the lock's notice that the holder lost lease (Lease.Lost)
// as a history.Lost event stamped with Notice.At (not when this goroutine
// woke), ending the view's hold; unwatch ends it (the release's invoke, a
// crash, the client's end).
func (c *client) watchLoss(lease locks.Lease) {
	if lease.Lost == nil {
		return
	}
	w := &lossWatch{stop: make(chan struct{}), done: make(chan struct{})}
	c.watching = w
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	id, rec, v := c.id, c.rec, c.view
	go func() {
		defer close(w.done)
		select {
		case <-lease.Lost.Done():
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
		e := history.Event{Type: history.Info, F: history.Lost, Process: id, Time: max(rec.Offset(lease.Lost.At()), 1), Key: lease.Key, Token: lease.Token, Fence: lease.Fence}
		if err := lease.Lost.Err(); err != nil {
			e.Error = err.Error()
		}
		// A write error reaches the client's own next event too.
		_ = rec.Append(e)
		v.ended(id, e.Time)
	}()
}

// unwatch ends the current lease's watch, if any, and waits for it.
func (c *client) unwatch() {
	if w := c.watching; w != nil {
		close(w.stop)
		<-w.done
		c.watching = nil
	}
}

// crashed replaces c, crashed holding a lease it never releases
// (client-crash), with a fresh client: the slot's next process number (id +
// clients), so no process does two things, and no lease; the view forgets the
// abandoned hold.
func (c *client) crashed(clients int) {
	c.view.ended(c.id, c.rec.Now())
	c.id += clients
}

// ErrBadLease stops a run at the first lease that breaks locks.Lock's
// contract (an empty token, another key, a validity not from time.Now): no
// verdict about such a lock would mean anything.
var ErrBadLease = errors.New("harness: bad lease")

// checkLease checks a lease of a successful acquire of key (locks.Lock).
func checkLease(lock string, client int, l locks.Lease, key string) error {
	var why string
	switch {
	case l.Token == "":
		why = "an empty token; a lease must carry a non-empty token unique to it"
	case l.Key != key:
		why = fmt.Sprintf("a lease of key %q; a lease must carry the key it locks", l.Key)
	case l.Validity.IsZero():
		why = "no validity; a lease must carry the end of its validity"
	case l.Validity == l.Validity.Round(0): // Round(0) strips only a monotonic reading
		why = "a validity without a monotonic clock reading; a lease's validity must come from time.Now"
	default:
		return nil
	}
	return fmt.Errorf("%w: lock %s, client %d: acquire %q returned ok with %s (see locks.Lock)", ErrBadLease, lock, client, key, why)
}

func (c *client) acquire(ctx context.Context, lk locks.Lock, key string) (locks.Lease, error) {
	if err := c.rec.Append(history.Event{Type: history.Invoke, F: history.Acquire, Process: c.id, Key: key}); err != nil {
		return locks.Lease{}, err
	}
	ctx, ev := c.traced(locks.WithCaller(ctx, c.id), lk)
	lease, err := lk.Acquire(ctx, key)
	if err == nil {
		if err = checkLease(c.lock, c.id, lease, key); err != nil {
			// An unknown outcome: acquired, but with nothing to hold.
			lease = locks.Lease{}
		}
	}
	done := history.Event{Type: completion(err), F: history.Acquire, Process: c.id, Time: c.rec.Now(), Key: key, Nodes: nodesOf(ev)}
	if err != nil {
		done.Error = err.Error()
	} else {
		done.Token, done.Fence, done.ValidUntil = lease.Token, lease.Fence, c.rec.Offset(lease.Validity)
	}
	if werr := c.rec.Append(done); werr != nil {
		return locks.Lease{}, werr
	}
	if err == nil {
		c.view.granted(c.id, c.group, lease, done.Time, done.Nodes)
		c.watchLoss(lease)
	}
	return lease, err
}

func (c *client) release(ctx context.Context, lk locks.Lock, l locks.Lease) error {
	c.unwatch() // a notice after the release's invoke changes nothing
	inv := history.Event{Type: history.Invoke, F: history.Release, Process: c.id, Time: c.rec.Now(), Key: l.Key, Token: l.Token, Fence: l.Fence}
	if err := c.rec.Append(inv); err != nil {
		return err
	}
	c.view.ended(c.id, inv.Time) // the client stops acting as the holder
	ctx, ev := c.traced(ctx, lk)
	err := lk.Release(ctx, l)
	done := history.Event{Type: completion(err), F: history.Release, Process: c.id, Key: l.Key, Token: l.Token, Fence: l.Fence, Nodes: nodesOf(ev)}
	if err != nil {
		done.Error = err.Error()
	}
	if werr := c.rec.Append(done); werr != nil {
		return werr
	}
	return err
}

// traced returns ctx carrying the client's locks.Evidence, reset, and it,
// when lk reports per-node evidence (locks.NodeReporter); else ctx and nil.
// Every acquire, release and extend goes through it, so its completion
// carries what the nodes answered (nodesOf).
func (c *client) traced(ctx context.Context, lk locks.Lock) (context.Context, *locks.Evidence) {
	if r, ok := lk.(locks.NodeReporter); ok && r.ReportsNodes() {
		c.ev.Reset()
		return locks.WithEvidence(ctx, &c.ev), &c.ev
	}
	return ctx, nil
}

// nodesOf is ev in the history's form: nil when nothing was reported.
func nodesOf(ev *locks.Evidence) *history.Nodes {
	if ev == nil {
		return nil
	}
	n := ev.Nodes()
	if !n.Reported() {
		return nil
	}
	return &history.Nodes{Attempt: n.Attempt, Granted: n.Granted, Refused: n.Refused, Silent: n.Silent, Unlocked: n.Unlocked}
}
