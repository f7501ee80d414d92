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
// pins), a lock that renews itself, on Config.Addrs[0], through the
// library's own rueidis client with the library's defaults but for the
// node's address and password, and KeyValidity = Config.TTL. Every Redis
// command is the library's:
//
//   - Acquire: Locker.TryWithContext, Config.Tries attempts in all, the
//     delay between two drawn from [RetryDelay/2, RetryDelay) by the
//     lock's seeded generator (TryWithContext tries once; the library's
//     WithContext waits without a bound other than its context, which is
//     also the lock's life). The library sets KeyMajority*2−1 = 3 keys
//     (rueidislock:0:KEY, …:1:KEY, …:2:KEY) with SET NX PXAT on the one
//     node, each bounded by its TryNextAfter (20 ms), and holds when 2 of
//     them are set.
//   - While held, the library extends each key every ExtendInterval
//     (KeyValidity/2) to now + KeyValidity, and cancels the context it
//     handed its holder when the extends of a majority of its keys failed
//     (refused, or not answered by the new deadline). The adapter closes
//     Lease.Lost then: the holder is told.
//   - Release: the cancel function the library returned, which deletes
//     the keys it still holds and waits for it; it tells nothing of what
//     it found, so Release returns nil, or ErrNotHeld when the holder had
//     already been told it lost the lease.
//   - Extend: none; the library extends by itself. Extend returns an
//     error (outcome unknown) without asking Redis.
//
// Validity. The library promises none: its holder holds until it
// cancels, or until its context is cancelled. The lease's Validity is
// UntilRelease ahead, and Lost is closed when the library cancels the
// context; the checker ends the hold at the earlier of the release and
// the notice. The context given to TryWithContext is the caller's without
// its deadline or cancellation (the library makes its keys' validity no
// longer than the time left before the context's deadline, and ends the
// lock with the context), so the lock lives until its release.
//
// Lease.Token is the adapter's (128 random bits): the library's own
// value in the keys is private to it. The node observer does not see the
// library's keys (they are not named as the run's keys), so an
// explanation has no node evidence of them. No fencing tokens, no
// per-node evidence.
type rueidisLock struct {
	name    string
	cfg     Config
	locker  rueidislock.Locker
	backoff *Backoff

	mu     sync.Mutex
	held   map[string]*rueidisHold // by token
	closed bool
	tries  sync.WaitGroup // TryWithContext calls under way
}

var _ Lock = (*rueidisLock)(nil)

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
	cfg, err := validConfig(name, cfg)
	if err != nil {
		return nil, err
	}
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
	return &rueidisLock{name: name, cfg: cfg, locker: locker, backoff: NewBackoff(cfg), held: map[string]*rueidisHold{}}, nil
}

// Acquire implements [Lock].
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
			// Not a definite "no": a key may be set unseen, which the
			// library deletes itself (its monitors) before it returns.
			return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
		}
	}
	return Lease{}, fmt.Errorf("%s: acquire %q: %w: %v", l.name, key, ErrNotAcquired, last)
}

// try is one TryWithContext, given ctx without its deadline or
// cancellation, waited for until ctx ends: the library waits for its
// clean-up of keys it may have set (a compare-and-delete on a context of
// its own) before it returns, which a partition holds up to its
// connections' timeout (10 s by default). A try abandoned that way that
// does acquire is released as soon as it returns.
func (l *rueidisLock) try(ctx context.Context, key string) (context.Context, context.CancelFunc, error) {
	type tried struct {
		ctx    context.Context
		cancel context.CancelFunc
		err    error
	}
	ch := make(chan tried, 1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, nil, ErrClosed
	}
	l.tries.Add(1) // under mu, before Close's Wait
	l.mu.Unlock()
	go func() {
		defer l.tries.Done()
		lctx, cancel, err := l.locker.TryWithContext(context.WithoutCancel(ctx), key)
		ch <- tried{lctx, cancel, err}
	}()
	select {
	case t := <-ch:
		return t.ctx, t.cancel, t.err
	case <-ctx.Done():
		l.tries.Add(1)
		go func() {
			defer l.tries.Done()
			if t := <-ch; t.err == nil {
				t.cancel()
			}
		}()
		return nil, nil, fmt.Errorf("gave up waiting for TryWithContext: %w", ctx.Err())
	}
}

// hold records the lease the library granted and watches its context.
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

// Release implements [Lock]. The library's cancel deletes the keys it
// still holds and waits for that: Release waits until ctx ends (then the
// outcome is unknown, and the deletion goes on).
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

// Extend implements [Lock]: rueidislock extends by itself and offers no
// extend.
func (l *rueidisLock) Extend(_ context.Context, lease Lease) (Lease, error) {
	return Lease{}, fmt.Errorf("%s: extend %q: rueidislock extends its keys by itself and has no extend", l.name, lease.Key)
}

// Close waits for the tries under way, releases what is still held (the
// library's cancel) and closes the library's client.
func (l *rueidisLock) Close() error {
	l.mu.Lock()
	l.closed = true
	held := l.held
	l.held = map[string]*rueidisHold{}
	l.mu.Unlock()
	l.tries.Wait()
	for _, h := range held {
		h.released.Store(true)
		h.cancel()
		<-h.watched
	}
	l.locker.Close()
	return nil
}
