package locks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// redsyncLock is github.com/go-redsync/redsync/v4 (the version go.mod
// pins) through its goredis/v9 pool, one NewClient per node: a RedLock,
// quorum ⌊N/2⌋+1. Every Redis command is the library's.
//
//   - Acquire: a fresh Mutex, LockContext: SET NX PX on every node in
//     parallel, the round bounded by expiry × timeout factor, held on a
//     quorum if expiry − elapsed − expiry × drift factor is positive; else
//     a best-effort compare-and-delete on every node (with the caller's
//     ctx) and a retry after the seeded Backoff (redsync's own: [50ms,
//     250ms) from the global math/rand), up to Config.Tries rounds
//     (redsync's default 32). Token is Mutex.Value(), Validity
//     Mutex.Until(), which (v4.18.1) carries a monotonic reading
//     (TestRedsyncUntilIsMonotonic), re-anchored anyway (monotonic).
//   - Release and Extend: a Mutex rebuilt WithValue(token), no state
//     kept; UnlockContext or ExtendContext, bounded by Config.Timeout.
//
// Results keep redsync's text. Acquire: ErrNotAcquired for ErrFailed,
// ErrTaken or only "node taken" errors; with node errors in the last
// round redsync returns them, and so does the adapter: outcome unknown
// (the reference redlock decides by quorum: a "fail" or an "info", never
// a hold). A done ctx gives ctx.Err() (redsync makes a cancelled back-off
// ErrFailed). Release and Extend: ErrNotHeld unless the failed nodes could
// have made up a quorum (redsyncTally), then the node errors, outcome
// unknown; ErrExtendFailed (the round outlasted the validity) is
// ErrNotHeld.
//
// Unlike the reference redlock: Extend ignores the validity
// (TestRedsyncExtendsPastValidity); the drift lacks 2 ms for PX; an
// Acquire cut short cleans up with its done ctx, so a SET that landed
// holds the key until its TTL (TestLibrariesLeaveCancelledGrants); the
// round is bounded by 5% of the TTL, not per node. No fencing tokens.
//
// Evidence (libhook.go): each SET NX (a node's k-th in a call is attempt
// k), each delete script (Release; in Acquire, the clean-up of the node's
// last attempt) and touch script (Extend).
type redsyncLock struct {
	base
	reports // through libhook.go
	opts    redsyncOptions
	clients []*redis.Client
	rs      *redsync.Redsync
}

// RedsyncOption configures a lock built by NewRedsync.
type RedsyncOption func(*redsyncOptions)

type redsyncOptions struct {
	driftFactor   float64
	timeoutFactor float64
}

// RedsyncDriftFactor sets redsync.WithDriftFactor: the validity ends
// expiry × f before the keys expire. Default redsync's 0.01.
func RedsyncDriftFactor(f float64) RedsyncOption {
	return func(o *redsyncOptions) { o.driftFactor = f }
}

// RedsyncTimeoutFactor sets redsync.WithTimeoutFactor: an acquire round
// and its clean-up are each bounded by expiry × f. Default 0.05.
func RedsyncTimeoutFactor(f float64) RedsyncOption {
	return func(o *redsyncOptions) { o.timeoutFactor = f }
}

// NewRedsync builds "redsync" over cfg.Addrs: the keys' expiry is cfg.TTL
// (redsync's default 8s), cfg.Timeout bounds Release, Extend and every
// go-redis call; Fencing and Sentinels are refused. A variant with other
// options can be registered under a name of its own:
//
//	locks.Register(locks.Spec{Name: "redsync-drift5", MultiNode: true,
//		New: func(c locks.Config) (locks.Lock, error) {
//			return locks.NewRedsync(c, locks.RedsyncDriftFactor(0.05))
//		}})
func NewRedsync(cfg Config, opts ...RedsyncOption) (Lock, error) {
	return asLock(newRedsync("redsync", cfg, opts...))
}

func newRedsync(name string, cfg Config, opts ...RedsyncOption) (*redsyncLock, error) {
	b, err := newBase(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := refuseFencing(name, b.cfg); err != nil {
		return nil, err
	}
	if err := independent(name, b.cfg); err != nil {
		return nil, err
	}
	cfg = b.cfg
	o := redsyncOptions{driftFactor: 0.01, timeoutFactor: 0.05}
	for _, opt := range opts {
		opt(&o)
	}
	if o.driftFactor < 0 || o.driftFactor >= 1 || o.timeoutFactor <= 0 {
		return nil, fmt.Errorf("locks: %s: bad drift factor %v or timeout factor %v", name, o.driftFactor, o.timeoutFactor)
	}
	l := &redsyncLock{base: b, opts: o}
	pools := make([]redsyncredis.Pool, len(cfg.Addrs))
	for i, addr := range cfg.Addrs {
		c := NewClient(addr, cfg)
		c.AddHook(libHook{node: i, scripts: redsyncScripts})
		l.clients = append(l.clients, c)
		pools[i] = goredis.NewPool(c)
	}
	l.rs = redsync.New(pools...)
	return l, nil
}

// mutex returns a redsync Mutex for key, with value when not empty.
func (l *redsyncLock) mutex(key, value string) *redsync.Mutex {
	opts := []redsync.Option{
		redsync.WithExpiry(l.cfg.TTL),
		redsync.WithTries(l.cfg.Tries),
		redsync.WithDriftFactor(l.opts.driftFactor),
		redsync.WithTimeoutFactor(l.opts.timeoutFactor),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return l.backoff.Next() }),
	}
	if value != "" {
		opts = append(opts, redsync.WithValue(value))
	}
	return l.rs.NewMutex(key, opts...)
}

func (l *redsyncLock) Acquire(ctx context.Context, key string) (Lease, error) {
	m := l.mutex(key, "")
	err := m.LockContext(libTrace(ctx, opAcquire))
	if err == nil {
		return Lease{Key: key, Token: m.Value(), Validity: monotonic(m.Until())}, nil
	}
	if cerr := ctxErr(ctx); cerr != nil {
		return Lease{}, fmt.Errorf("%s: acquire %q: %w (redsync: %v)", l.name, key, cerr, err)
	}
	t := redsyncTally(err)
	if errors.Is(err, redsync.ErrFailed) || t.quorumTaken || t.failed == 0 {
		return Lease{}, fmt.Errorf("%s: acquire %q: %w: %w", l.name, key, ErrNotAcquired, err)
	}
	return Lease{}, fmt.Errorf("%s: acquire %q: %d of %d nodes failed in the last round, outcome unknown: %w",
		l.name, key, t.failed, len(l.clients), err)
}

func (l *redsyncLock) Release(ctx context.Context, lease Lease) error {
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	ok, err := l.mutex(lease.Key, lease.Token).UnlockContext(libTrace(ctx, opRelease))
	if ok {
		return nil
	}
	return l.failed("release", lease.Key, err)
}

// Extend implements [Lock], even past the validity, as redsync does.
func (l *redsyncLock) Extend(ctx context.Context, lease Lease) (Lease, error) {
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	m := l.mutex(lease.Key, lease.Token)
	ok, err := m.ExtendContext(libTrace(ctx, opExtend))
	switch {
	case ok:
		lease.Validity = monotonic(m.Until())
		return lease, nil
	case errors.Is(err, redsync.ErrExtendFailed):
		return Lease{}, fmt.Errorf("%s: extend %q: %w: %w", l.name, lease.Key, ErrNotHeld, err)
	}
	return Lease{}, l.failed("extend", lease.Key, err)
}

// failed is the error of a Release or Extend redsync answered false to:
// outcome unknown when it could have succeeded, else ErrNotHeld.
func (l *redsyncLock) failed(op, key string, err error) error {
	if err != nil && l.couldHaveSucceeded(redsyncTally(err)) {
		return fmt.Errorf("%s: %s %q: outcome unknown: %w", l.name, op, key, err)
	}
	return fmt.Errorf("%s: %s %q: %w: %w", l.name, op, key, ErrNotHeld, orFalse(err))
}

// couldHaveSucceeded reports whether the nodes that succeeded plus those
// whose outcome is unknown make a quorum.
func (l *redsyncLock) couldHaveSucceeded(t redsyncErrors) bool {
	if t.quorumTaken {
		return false // a quorum held another value, or none
	}
	n := len(l.clients)
	return n-t.taken-t.expired >= n/2+1 // the succeeded and the failed
}

func (l *redsyncLock) Close() error { return closeClients(l.clients) }

// redsyncErrors counts the per-node errors that redsync joined into one.
type redsyncErrors struct {
	failed      int  // RedisError: no answer, outcome unknown
	taken       int  // ErrNodeTaken: the key held another value (or none)
	expired     int  // ErrLockAlreadyExpired: the key was gone
	quorumTaken bool // ErrTaken: a quorum answered "taken"; redsync then drops the other errors
}

// redsyncTally walks redsync's errors.Join tree. It joins pointers whose
// Error methods have value receivers (errors.As would need a
// **RedisError): a type switch over both forms says plainly what matches.
func redsyncTally(err error) redsyncErrors {
	var t redsyncErrors
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *redsync.RedisError, redsync.RedisError:
			t.failed++
		case *redsync.ErrNodeTaken, redsync.ErrNodeTaken:
			t.taken++
		case *redsync.ErrTaken:
			t.quorumTaken, t.taken = true, t.taken+len(e.Nodes)
		case redsync.ErrTaken:
			t.quorumTaken, t.taken = true, t.taken+len(e.Nodes)
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				walk(c)
			}
		default:
			if err == redsync.ErrLockAlreadyExpired {
				t.expired++
			}
		}
	}
	walk(err)
	return t
}

// orFalse returns err, or "redsync: false" for none.
func orFalse(err error) error {
	if err == nil {
		return errors.New("redsync: false")
	}
	return err
}

// monotonic re-anchors t on the monotonic clock: now + (t − now), the
// same instant for a monotonic t, the wall-clock time left converted at
// once for another.
func monotonic(t time.Time) time.Time {
	now := time.Now()
	return now.Add(t.Sub(now))
}
