package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locktorture/locktorture/internal/wait"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// rueidisLock is github.com/redis/rueidis/rueidislock (the version go.mod
// pins), a lock that renews itself, on Config.Addrs[0] through the
// library's own client (its defaults but address, password and
// KeyValidity = Config.TTL). Every Redis command is the library's:
//
//   - Acquire: TryWithContext (once; WithContext would wait unbounded),
//     Config.Tries attempts with the seeded Backoff. It sets 3 keys
//     (rueidislock:0:KEY, …) with SET NX PXAT, each bounded by
//     TryNextAfter (20 ms), and holds on 2.
//   - While held it extends each key every KeyValidity/2 and cancels its
//     holder's context when a majority of extends failed: Lease.Lost.
//   - Release: the library's cancel, which deletes the keys and tells
//     nothing; ErrNotHeld if the holder was told already.
//   - Extend: none (outcome unknown, Redis not asked).
//
// No validity (UntilRelease). The library gets ctx without its deadline
// or cancellation (it bounds its keys by the deadline and ends the lock
// with the context). The token is the adapter's (the library's value is
// private), and the node observer does not see the library's keys. No
// fencing tokens, no per-node evidence.
type rueidisLock struct {
	base
	locker rueidislock.Locker

	mu     sync.Mutex
	held   map[string]*rueidisHold // by token
	closed bool
	tries  sync.WaitGroup // TryWithContext calls under way
}

// rueidisHold is one lease the library holds.
type rueidisHold struct {
	cancel   context.CancelFunc // the library's: releases
	lost     *Notice            // told when the library cancels on its own
	released atomic.Bool
	watched  chan struct{} // closed when the watcher returned
}

// newRueidisLock builds "rueidislock".
func newRueidisLock(cfg Config) (Lock, error) {
	const name = "rueidislock"
	if err := refuseFencing(name, cfg); err != nil {
		return nil, err
	}
	b, err := newBase(name, cfg)
	if err != nil {
		return nil, err
	}
	cfg = b.cfg
	if len(cfg.Sentinels) > 0 {
		return nil, fmt.Errorf("locks: %s: Sentinels are not supported by this adapter; it uses Addrs[0]", name)
	}
	locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: cfg.Addrs[:1], Password: cfg.Password},
		KeyValidity:  cfg.TTL,
	})
	if err != nil {
		return nil, fmt.Errorf("locks: %s: %w", name, err)
	}
	return &rueidisLock{base: b, locker: locker, held: map[string]*rueidisHold{}}, nil
}

func (l *rueidisLock) Acquire(ctx context.Context, key string) (Lease, error) {
	var last error
	for try := range l.cfg.Tries {
		if try > 0 {
			if err := wait.Sleep(ctx, l.backoff.Next()); err != nil {
				return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
			}
		}
		if err := ctxErr(ctx); err != nil {
			return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
		}
		start := time.Now()
		lctx, cancel, err := l.try(ctx, key)
		if err == nil {
			return l.hold(key, lctx, cancel, start)
		}
		last = err
		if !errors.Is(err, rueidislock.ErrNotLocked) {
			// Not a definite "no": the library deletes unseen keys itself.
			return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
		}
	}
	return Lease{}, fmt.Errorf("%s: acquire %q: %w: %v", l.name, key, ErrNotAcquired, last)
}

// try is one TryWithContext on ctx without its deadline or cancellation,
// waited for until ctx ends: the library's clean-up of keys it may have
// set can hold it up to its connections' timeout (10 s) in a partition. A
// try abandoned that way that acquires is released when it returns.
func (l *rueidisLock) try(ctx context.Context, key string) (context.Context, context.CancelFunc, error) {
	type tried struct {
		ctx    context.Context
		cancel context.CancelFunc
		err    error
	}
	t, err := awaitOrLeave(ctx, "gave up waiting for TryWithContext", &l.mu, &l.closed, &l.tries, func() tried {
		lctx, cancel, err := l.locker.TryWithContext(context.WithoutCancel(ctx), key)
		return tried{lctx, cancel, err}
	}, func(t tried) {
		if t.err == nil {
			t.cancel()
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return t.ctx, t.cancel, t.err
}

// hold records a granted lease and watches its context.
func (l *rueidisLock) hold(key string, lctx context.Context, cancel context.CancelFunc, start time.Time) (Lease, error) {
	h := &rueidisHold{cancel: cancel, lost: NewNotice(), watched: make(chan struct{})}
	token := newToken()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cancel()
		return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, ErrClosed)
	}
	l.held[token] = h
	l.mu.Unlock()
	go func() {
		defer close(h.watched)
		<-lctx.Done()
		if !h.released.Load() {
			// The library cancelled: the holder is told.
			h.lost.Tell(errors.New("rueidislock cancelled the lock's context: the extends of a majority of its keys failed"))
		}
	}()
	return Lease{Key: key, Token: token, Validity: start.Add(UntilRelease), Lost: h.lost}, nil
}

// Release implements [Lock]: the library's cancel, waited for until ctx
// ends (then the outcome is unknown and the deletion goes on).
func (l *rueidisLock) Release(ctx context.Context, lease Lease) error {
	l.mu.Lock()
	h := l.held[lease.Token]
	delete(l.held, lease.Token)
	l.mu.Unlock()
	if h == nil {
		return fmt.Errorf("%s: release %q: no lease of this lock has this token: %w", l.name, lease.Key, ErrNotHeld)
	}
	h.released.Store(true)
	done := make(chan struct{})
	go func() {
		h.cancel()
		<-h.watched
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, ctx.Err())
	}
	select {
	case <-h.lost.Done():
		return fmt.Errorf("%s: release %q: the library had cancelled the lease: %w", l.name, lease.Key, ErrNotHeld)
	default:
		return nil
	}
}

// Extend implements [Lock]: rueidislock offers none.
func (l *rueidisLock) Extend(_ context.Context, lease Lease) (Lease, error) {
	return Lease{}, fmt.Errorf("%s: extend %q: rueidislock extends its keys by itself and has no extend", l.name, lease.Key)
}

// Close waits for the tries under way, releases what is held and closes
// the library's client.
func (l *rueidisLock) Close() error {
	held := closeAndTake(&l.mu, &l.closed, &l.held)
	l.tries.Wait()
	for _, h := range held {
		h.released.Store(true)
		h.cancel()
		<-h.watched
	}
	l.locker.Close()
	return nil
}
