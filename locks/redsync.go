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
// pins; results.json records it) over go-redis v9, through redsync's own
// goredis/v9 pool, one go-redis client per node of Config.Addrs, built
// with this package's safe options (NewClient). It is a RedLock: N
// independent masters, quorum ⌊N/2⌋+1. What the adapter adds is only the
// mapping to [Lock]; every Redis command is the library's.
//
//   - Acquire: a fresh redsync Mutex per call, LockContext. redsync sets
//     the key on every node in parallel (SET NX PX expiry), the whole
//     round bounded by expiry × timeout factor; it succeeds on a quorum if
//     the validity left, expiry − elapsed − expiry × drift factor, is
//     positive; otherwise it deletes its value on every node (Lua
//     compare-and-delete, best effort, bounded the same way by the
//     caller's ctx) and retries after a back-off drawn from
//     [RetryDelay/2, RetryDelay) and seeded with Config.Seed, like the
//     other locks of this package (redsync's own draws from [50ms, 250ms)
//     with the global math/rand), up to Config.Tries rounds (redsync's own
//     default is 32). Lease.Token is Mutex.Value() (16 random bytes,
//     base64), Lease.Validity is Mutex.Until().
//   - Release: a Mutex rebuilt with redsync.WithValue(token), so no state
//     is kept between calls; UnlockContext (compare-and-delete on every
//     node, bounded here by Config.Timeout).
//   - Extend: the same rebuilt Mutex, ExtendContext (compare-and-pexpire
//     on every node, bounded by Config.Timeout); the new validity is
//     start + expiry − drift, start taken before the round, as in Lock.
//
// Until and the monotonic clock. Mutex.Until is computed in v4.18.1 as
// time.Now().Add(expiry − elapsed − drift), which keeps the monotonic
// clock reading of time.Now (TestRedsyncUntilIsMonotonic pins this), so
// comparing it with time.Now is immune to wall-clock jumps on the client.
// The adapter still re-anchors it on time.Now right after the call
// (see monotonic): exact for a monotonic time, and should a later version
// strip the reading, the wall-clock deadline is turned into a monotonic
// one before the client's clock can move.
//
// Results are mapped from what redsync returns, keeping its error text:
//
//   - Acquire: ErrNotAcquired when redsync says ErrFailed, ErrTaken, or
//     only "node taken" errors (every node answered: no quorum, and redsync
//     has deleted its partial grants). When the last round had node
//     errors (a timeout, a refused connection), redsync returns them
//     instead of ErrFailed, and so does the adapter: outcome unknown (the
//     failing node's SET may have landed, and redsync's clean-up of it is
//     best effort). The reference redlock reports ErrNotAcquired there,
//     having decided by quorum; the difference is a "fail" or an "info" in
//     the history, never a hold. A done ctx gives ctx.Err(), wrapped:
//     redsync itself turns a cancellation during its back-off into
//     ErrFailed.
//   - Release and Extend: redsync reports only "fewer than a quorum"
//     (false), joining a per-node error for every node that did not
//     succeed: ErrLockAlreadyExpired (the key was gone), "node taken"
//     (the key held another value, or, for Extend, was gone), or a
//     RedisError (no answer). The adapter counts them (redsyncTally):
//     ErrNotHeld, wrapped with the library's text, when fewer than a
//     quorum could have held the value even counting every failed node
//     as a success; otherwise the joined node errors, outcome unknown, as
//     the reference redlock does. Extend's ErrExtendFailed (a quorum
//     extended but the round took longer than the validity) is
//     ErrNotHeld.
//
// Where redsync differs from the reference redlock (redlock.go):
//
//   - Extend does not look at the lease's validity: it extends whenever a
//     quorum still holds the value, even after Until has passed; the
//     reference refuses a lease past its validity without asking the
//     nodes (TestRedsyncExtendsPastValidity).
//   - Drift is expiry × drift factor (default 1%), without the reference's
//     extra 2 ms for the milliseconds resolution of PX.
//   - An Acquire cut short by its ctx cleans up with that same ctx, which
//     is done, so the clean-up fails and a SET that landed holds the key
//     until its TTL (TestLibrariesLeaveCancelledGrants); the reference
//     cleans up with a context of its own.
//   - The acquire round is bounded by expiry × timeout factor (default 5%
//     of the TTL) rather than a per-node timeout.
//
// Fencing: none (redsync issues no fencing tokens).
//
// Evidence ([NodeReporter]): a go-redis hook on every node's client
// reports the answer to each SET NX (an attempt of Acquire: the k-th SET a
// node answers in one call is attempt k), each run of the delete script
// (Release; in Acquire, the clean-up of the node's last attempt) and of
// the touch script (Extend), as the library sends them (libhook.go).
type redsyncLock struct {
	name    string
	cfg     Config
	opts    redsyncOptions
	clients []*redis.Client
	rs      *redsync.Redsync
	backoff *Backoff
}

var (
	_ Lock         = (*redsyncLock)(nil)
	_ NodeReporter = (*redsyncLock)(nil)
)

// ReportsNodes implements [NodeReporter], through the hook on every
// node's client (libhook.go).
func (l *redsyncLock) ReportsNodes() bool { return true }

// RedsyncOption configures a lock built by NewRedsync.
type RedsyncOption func(*redsyncOptions)

type redsyncOptions struct {
	driftFactor   float64
	timeoutFactor float64
}

// RedsyncDriftFactor sets the clock drift factor (redsync.WithDriftFactor):
// a lease's validity ends expiry × factor before the keys expire. The
// default is redsync's, 0.01.
func RedsyncDriftFactor(f float64) RedsyncOption {
	return func(o *redsyncOptions) { o.driftFactor = f }
}

// RedsyncTimeoutFactor sets the timeout factor (redsync.WithTimeoutFactor):
// one acquire round, on all nodes in parallel, and its clean-up are each
// bounded by expiry × factor. The default is redsync's, 0.05.
func RedsyncTimeoutFactor(f float64) RedsyncOption {
	return func(o *redsyncOptions) { o.timeoutFactor = f }
}

// NewRedsync builds a lock on github.com/go-redsync/redsync/v4 over every
// address of cfg.Addrs (see the registry's "redsync"). The expiry of the
// keys is cfg.TTL (redsync's default would be 8s); cfg.Timeout bounds
// Release and Extend and every go-redis call; cfg.Fencing and
// cfg.Sentinels are refused. It is exported so that a variant with other
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
	cfg, err := validConfig(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := refuseFencing(name, cfg); err != nil {
		return nil, err
	}
	if len(cfg.Sentinels) > 0 {
		return nil, fmt.Errorf("locks: %s needs independent masters in Addrs, not a primary found through Sentinels", name)
	}
	o := redsyncOptions{driftFactor: 0.01, timeoutFactor: 0.05}
	for _, opt := range opts {
		opt(&o)
	}
	if o.driftFactor < 0 || o.driftFactor >= 1 || o.timeoutFactor <= 0 {
		return nil, fmt.Errorf("locks: %s: bad drift factor %v or timeout factor %v", name, o.driftFactor, o.timeoutFactor)
	}
	l := &redsyncLock{name: name, cfg: cfg, opts: o, backoff: NewBackoff(cfg)}
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

// mutex returns a new redsync Mutex for key with the lock's options, and
// value already set when it is not empty.
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

// Acquire implements [Lock].
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

// Release implements [Lock].
func (l *redsyncLock) Release(ctx context.Context, lease Lease) error {
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	ok, err := l.mutex(lease.Key, lease.Token).UnlockContext(libTrace(ctx, opRelease))
	if ok {
		return nil
	}
	if err != nil && l.couldHaveSucceeded(redsyncTally(err)) {
		return fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
	}
	return fmt.Errorf("%s: release %q: %w: %w", l.name, lease.Key, ErrNotHeld, orFalse(err))
}

// Extend implements [Lock]. Unlike the reference locks, it asks the nodes
// even when the lease's validity has passed: so does redsync.
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
	case err != nil && l.couldHaveSucceeded(redsyncTally(err)):
		return Lease{}, fmt.Errorf("%s: extend %q: outcome unknown: %w", l.name, lease.Key, err)
	default:
		return Lease{}, fmt.Errorf("%s: extend %q: %w: %w", l.name, lease.Key, ErrNotHeld, orFalse(err))
	}
}

// couldHaveSucceeded reports whether a failed Release or Extend might
// still have reached a quorum: the nodes that succeeded (those without an
// error) plus the nodes whose outcome is unknown make a quorum.
func (l *redsyncLock) couldHaveSucceeded(t redsyncErrors) bool {
	if t.quorumTaken {
		return false // a quorum held another value, or none
	}
	n := len(l.clients)
	succeeded := n - t.failed - t.taken - t.expired
	return succeeded+t.failed >= n/2+1
}

// Close implements [Lock].
func (l *redsyncLock) Close() error { return closeClients(l.clients) }

// redsyncErrors counts the per-node errors that redsync joined into one.
type redsyncErrors struct {
	failed      int  // RedisError: no answer, outcome unknown
	taken       int  // ErrNodeTaken: the key held another value (or none)
	expired     int  // ErrLockAlreadyExpired: the key was gone
	quorumTaken bool // ErrTaken: a quorum answered "taken"; redsync then drops the other errors
}

// redsyncTally walks the tree of errors.Join that redsync builds. redsync
// joins pointers (&RedisError{…}, &ErrNodeTaken{…}) whose Error methods
// have value receivers, so errors.As needs a **RedisError target; a
// type switch over both forms says plainly what is matched.
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

// orFalse returns err, or an error saying that redsync answered false
// without one.
func orFalse(err error) error {
	if err == nil {
		return errors.New("redsync: false")
	}
	return err
}

// monotonic returns the deadline t re-anchored on the monotonic clock: now
// + (t − now). If t carries a monotonic reading the result is the same
// instant; if it carries only a wall-clock reading, the wall-clock time
// left is converted at once.
func monotonic(t time.Time) time.Time {
	now := time.Now()
	return now.Add(t.Sub(now))
}
