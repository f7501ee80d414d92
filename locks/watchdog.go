package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// watchdog is "setnx-watchdog": setnx with Redisson's watchdog. While a
// lease is held a goroutine renews it every TTL/3 (compare-and-pexpire);
// it claims no validity (UntilRelease) and tells the holder through
// Lease.Lost when a renewal is refused, or none succeeded within the
// lease's last validity (the last successful start + TTL − drift, as setnx
// counts: the key cannot have expired earlier, so a holder cut off its
// node is told before another can be granted the key). Other renewal
// errors are tried again at the next tick. A process stopped whole stops
// its watchdog too, and learns of the loss only when it runs again: too
// late, which fencing guards against.
//
// Release stops the watchdog, then releases as setnx. Extend renews at
// once and moves the deadline; its ErrNotHeld also tells the holder.
// With ignoreLoss it is "setnx-watchdog-no-notice": it renews whatever the
// answer and never tells.
type watchdog struct {
	*setnx
	every      time.Duration
	ignoreLoss bool

	mu     sync.Mutex
	dogs   map[string]*dog // by token
	closed bool
}

// dog is one lease's renewal goroutine.
type dog struct {
	key, token string
	lost       *Notice       // told when the lease is lost
	stop       chan struct{} // closed by Release and Close
	done       chan struct{} // closed when the goroutine returned
	renewed    chan time.Time

	mu       sync.Mutex
	deadline time.Time // the lease's last validity
}

// watchdogLock returns the New of the watchdog called name; the mutant
// (ignoreLoss) issues no fencing tokens.
func watchdogLock(name string, ignoreLoss bool) func(Config) (Lock, error) {
	return func(cfg Config) (Lock, error) {
		if ignoreLoss {
			if err := refuseFencing(name, cfg); err != nil {
				return nil, err
			}
		}
		if cfg.WaitReplicas != 0 {
			return nil, fmt.Errorf("locks: %s takes no WAIT", name)
		}
		s, err := newSetNX(name, cfg, setnxBug{})
		if err != nil {
			return nil, err
		}
		return &watchdog{setnx: s, every: s.cfg.TTL / 3, ignoreLoss: ignoreLoss, dogs: map[string]*dog{}}, nil
	}
}

// Acquire implements [Lock]: setnx's, then a watchdog.
func (w *watchdog) Acquire(ctx context.Context, key string) (Lease, error) {
	lease, err := w.setnx.Acquire(ctx, key)
	if err != nil {
		return Lease{}, err
	}
	d := &dog{key: key, token: lease.Token, lost: NewNotice(), stop: make(chan struct{}), done: make(chan struct{}), renewed: make(chan time.Time, 1), deadline: lease.Validity}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Lease{}, fmt.Errorf("%s: acquire %q: %w", w.name, key, ErrClosed)
	}
	w.dogs[lease.Token] = d
	w.mu.Unlock()
	go w.watch(d)
	lease.Validity = time.Now().Add(UntilRelease)
	lease.Lost = d.lost
	return lease, nil
}

// watch renews d's lease every w.every until stopped or, unless the lock
// ignores losses, until it tells the holder of a loss.
func (w *watchdog) watch(d *dog) {
	defer close(d.done)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	expiry := time.NewTimer(time.Until(d.deadlineNow()))
	defer expiry.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-d.renewed: // an Extend moved the deadline
			resetTimer(expiry, time.Until(d.deadlineNow()))
			continue
		case <-expiry.C:
		case <-tick.C:
		}
		// A stopped process wakes with both due: the deadline first.
		if now := time.Now(); !now.Before(d.deadlineNow()) {
			if w.tell(d, fmt.Sprintf("no renewal succeeded within the lease's validity (it ended %v ago)", now.Sub(d.deadlineNow()).Round(time.Millisecond))) {
				return
			}
		}
		start := time.Now()
		n, err := w.renew(context.Background(), d.key, d.token)
		switch {
		case err == nil && n > 0:
			d.extendTo(start.Add(w.validity()))
			resetTimer(expiry, time.Until(d.deadlineNow()))
		case err == nil:
			if w.tell(d, "renewal refused: the key no longer holds the token") {
				return
			}
		}
	}
}

// renew is setnx's compare-and-pexpire of token on key: 1 if held.
func (w *watchdog) renew(ctx context.Context, key, token string) (int64, error) {
	ctx, cancel := nodeCtx(ctx, w.cfg)
	defer cancel()
	return extendScript.Run(ctx, w.client, []string{key}, token, w.cfg.TTL.Milliseconds()).Int64()
}

// tell gives d's notice, once, and reports whether the watchdog is done;
// the mutant tells nothing and goes on.
func (w *watchdog) tell(d *dog, why string) bool {
	if w.ignoreLoss {
		return false // the bug: the failed renewal is ignored
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lost.Tell(errors.New(why))
	return true
}

func (d *dog) deadlineNow() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deadline
}

// extendTo moves the deadline to t, unless the holder was told already.
func (d *dog) extendTo(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.lost.came() && t.After(d.deadline) {
		d.deadline = t
	}
}

// resetTimer makes t fire after d, draining a pending tick.
func resetTimer(t *time.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(max(d, 0))
}

// Extend implements [Lock]: a renewal at once.
func (w *watchdog) Extend(ctx context.Context, lease Lease) (Lease, error) {
	w.mu.Lock()
	d := w.dogs[lease.Token]
	w.mu.Unlock()
	if d != nil && lease.Told() {
		return Lease{}, fmt.Errorf("%s: extend %q: the lock told the holder it lost the lease: %w", w.name, lease.Key, ErrNotHeld)
	}
	start := time.Now()
	n, err := w.renew(ctx, lease.Key, lease.Token)
	Report(ctx, NodeAnswer{Attempt: 1, Answer: answerOf(n > 0, err), Err: err})
	if err != nil {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", w.name, lease.Key, err)
	}
	if n == 0 {
		if d != nil {
			w.tell(d, "extend refused: the key no longer holds the token")
		}
		return Lease{}, fmt.Errorf("%s: extend %q: %w", w.name, lease.Key, ErrNotHeld)
	}
	if d != nil {
		d.extendTo(start.Add(w.validity()))
		select {
		case d.renewed <- start:
		default:
		}
	}
	return lease, nil
}

// Release implements [Lock], the watchdog stopped first.
func (w *watchdog) Release(ctx context.Context, lease Lease) error {
	w.mu.Lock()
	d := w.dogs[lease.Token]
	delete(w.dogs, lease.Token)
	w.mu.Unlock()
	if d != nil {
		close(d.stop)
		<-d.done
	}
	return w.setnx.Release(ctx, lease)
}

// closeAndTake sets closed and takes every entry of m, under mu.
func closeAndTake[V any](mu *sync.Mutex, closed *bool, m *map[string]V) map[string]V {
	mu.Lock()
	defer mu.Unlock()
	*closed = true
	all := *m
	*m = map[string]V{}
	return all
}

// Close stops every watchdog; held leases are left to their TTL.
func (w *watchdog) Close() error {
	dogs := closeAndTake(&w.mu, &w.closed, &w.dogs)
	for _, d := range dogs {
		close(d.stop)
	}
	for _, d := range dogs {
		<-d.done
	}
	return w.setnx.Close()
}
