package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// redislockLock is github.com/bsm/redislock (the version go.mod pins;
// results.json records it), a single-instance lock on Config.Addrs[0], or
// on the primary that Config.Sentinels name, through one go-redis client
// built with this package's safe options (NewSingleClient). Every Redis
// command is the library's:
//
//   - Acquire: Client.Obtain(ctx, key, TTL) with a retry strategy of
//     Config.Tries attempts in all (redislock.LimitRetry), the delay
//     between two drawn from [RetryDelay/2, RetryDelay) by the lock's
//     seeded generator. Obtain runs one Lua script per attempt: SET key
//     token NX PX ttl, or, if the key already starts with the same token,
//     SET it again (re-obtaining a lock by its token, v0.9.4). It returns
//     the first Redis error at once, without retrying and without
//     cleaning up. Lease.Token is Lock.Token() (16 random bytes,
//     base64).
//   - Release: Lock.Release, a Lua compare-and-delete.
//   - Extend: Lock.Refresh(ctx, TTL), a Lua compare-and-pexpire.
//
// Validity. redislock promises no deadline: Obtain returns a lock "with
// the given TTL" and Lock.TTL asks Redis for the key's remaining PTTL.
// The adapter gives the most the library can be read to promise: start +
// TTL, start being time.Now before Obtain (or Refresh) was called, so the
// time spent in the call, its retries included, comes off the lease. The
// library does no elapsed-time or drift accounting of its own: there is
// no allowance for the server's clock running faster than the client's,
// nor for PX's millisecond resolution (the reference setnx keeps TTL×1% +
// 2 ms back). Whether that matters is for the harness to show.
//
// The library's Lock holds the key, value and token length in unexported
// fields, so Release and Extend need the *redislock.Lock that Obtain
// returned: the adapter keeps them in a map from token to lock, guarded by
// a mutex. An entry is deleted when Release succeeds or finds the lease
// not held; it stays after a Release whose outcome is unknown, so that the
// caller may try again, and for a lease that is never released. Each
// entry costs about 100 bytes until Close. Release or Extend of a token
// that has no entry (released before, or acquired through another Lock)
// fails with ErrNotHeld without asking Redis.
//
// Results: Obtain's ErrNotObtained is ErrNotAcquired; Release's
// ErrLockNotHeld and Refresh's ErrNotObtained are ErrNotHeld (the library
// reuses ErrNotObtained for a failed refresh); any other error, and a done
// ctx (whose error Obtain returns as is), leaves the outcome unknown.
//
// Where redislock differs from the reference setnx (setnx.go):
//
//   - No drift allowance (above).
//   - An Acquire that fails with an unknown outcome (a timeout, a done
//     ctx) does not delete its token: a SET that landed unseen holds the
//     key until its TTL (TestLibrariesLeaveCancelledGrants).
//   - Refresh does not look at the lease's validity: it extends whenever
//     the key still holds the token; the reference refuses a lease past
//     its validity without asking.
//   - Lock.TTL, which the library offers to check that a lock is still
//     held, reports the key's PTTL as the server saw it, not shortened by
//     the reply's travel time (TestRedislockTTLIgnoresReplyLatency); the
//     adapter does not use it.
//
// Fencing: none; v0.9.4 issues no fencing tokens.
//
// Evidence ([NodeReporter]): a go-redis hook on the client reports node
// 0's answer to each run of the obtain script (the k-th in one Acquire is
// attempt k), of the release script and of the refresh script
// (libhook.go). A Release or Extend of a token without an entry asks no
// node and reports nothing.
type redislockLock struct {
	name    string
	cfg     Config
	client  redis.UniversalClient
	locker  *redislock.Client
	backoff *Backoff

	mu   sync.Mutex
	held map[string]*redislock.Lock // token → the library's lock
}

var (
	_ Lock         = (*redislockLock)(nil)
	_ NodeReporter = (*redislockLock)(nil)
)

// ReportsNodes implements [NodeReporter], through the hook on the node's
// client (libhook.go).
func (l *redislockLock) ReportsNodes() bool { return true }

// NewRedislock builds a lock on github.com/bsm/redislock (see the
// registry's "redislock"): the TTL of the keys is cfg.TTL; cfg.Tries and
// cfg.RetryDelay make its retry strategy; cfg.Timeout bounds Release,
// Extend and every go-redis call; cfg.Fencing is refused.
func NewRedislock(cfg Config) (Lock, error) {
	return asLock(newRedislock("redislock", cfg))
}

func newRedislock(name string, cfg Config) (*redislockLock, error) {
	cfg, err := validConfig(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := refuseFencing(name, cfg); err != nil {
		return nil, err
	}
	c := NewUniversalClient(cfg)
	c.AddHook(libHook{node: 0, scripts: redislockScripts})
	return &redislockLock{
		name:    name,
		cfg:     cfg,
		client:  c,
		locker:  redislock.New(c),
		backoff: NewBackoff(cfg),
		held:    map[string]*redislock.Lock{},
	}, nil
}

// jitter is a redislock.RetryStrategy that draws each delay from the
// lock's seeded back-off.
type jitter struct{ b *Backoff }

// NextBackoff implements redislock.RetryStrategy. A zero delay would
// mean "stop" to redislock: the least delay is one nanosecond.
func (j jitter) NextBackoff() time.Duration { return max(j.b.Next(), 1) }

// Acquire implements [Lock].
func (l *redislockLock) Acquire(ctx context.Context, key string) (Lease, error) {
	retry := redislock.LimitRetry(jitter{l.backoff}, l.cfg.Tries-1) // per call: it counts
	start := time.Now()
	lk, err := l.locker.Obtain(libTrace(ctx, opAcquire), key, l.cfg.TTL, &redislock.Options{RetryStrategy: retry})
	switch {
	case err == nil:
		l.mu.Lock()
		l.held[lk.Token()] = lk
		l.mu.Unlock()
		return Lease{Key: key, Token: lk.Token(), Validity: start.Add(l.cfg.TTL)}, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return Lease{}, fmt.Errorf("%s: acquire %q: %w: %w", l.name, key, ErrNotAcquired, err)
	}
	if cerr := ctxErr(ctx); cerr != nil && !errors.Is(err, cerr) {
		return Lease{}, fmt.Errorf("%s: acquire %q: %w (redislock: %v)", l.name, key, cerr, err)
	}
	return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
}

// lookup returns the library's lock for lease, or ErrNotHeld (wrapped).
func (l *redislockLock) lookup(op string, lease Lease) (*redislock.Lock, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lk, ok := l.held[lease.Token]
	if !ok || lk.Key() != lease.Key {
		return nil, fmt.Errorf("%s: %s %q: no open lease with this token on this lock (released before, or acquired elsewhere): %w",
			l.name, op, lease.Key, ErrNotHeld)
	}
	return lk, nil
}

// Release implements [Lock].
func (l *redislockLock) Release(ctx context.Context, lease Lease) error {
	lk, err := l.lookup("release", lease)
	if err != nil {
		return err
	}
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	err = lk.Release(libTrace(ctx, opRelease))
	if err == nil || errors.Is(err, redislock.ErrLockNotHeld) {
		l.mu.Lock()
		delete(l.held, lease.Token)
		l.mu.Unlock()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redislock.ErrLockNotHeld):
		return fmt.Errorf("%s: release %q: %w: %w", l.name, lease.Key, ErrNotHeld, err)
	default:
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, err)
	}
}

// Extend implements [Lock]. Like Refresh, it asks Redis even when the
// lease's validity has passed.
func (l *redislockLock) Extend(ctx context.Context, lease Lease) (Lease, error) {
	lk, err := l.lookup("extend", lease)
	if err != nil {
		return Lease{}, err
	}
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	start := time.Now()
	err = lk.Refresh(libTrace(ctx, opExtend), l.cfg.TTL, nil)
	switch {
	case err == nil:
		lease.Validity = start.Add(l.cfg.TTL)
		return lease, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return Lease{}, fmt.Errorf("%s: extend %q: %w: %w", l.name, lease.Key, ErrNotHeld, err)
	default:
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
	}
}

// Close implements [Lock].
func (l *redislockLock) Close() error { return l.client.Close() }
