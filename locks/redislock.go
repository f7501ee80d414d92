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

// redislockLock is github.com/bsm/redislock (the version go.mod pins), a
// single-instance lock on one NewUniversalClient. Every Redis command is
// the library's:
//
//   - Acquire: Obtain(ctx, key, TTL), Config.Tries attempts (LimitRetry)
//     with the seeded Backoff; per attempt one script, SET NX PX, or SET
//     again when the key starts with the same token (v0.9.4). The first
//     Redis error returns at once, without retry or clean-up.
//   - Release: Lock.Release (compare-and-delete). Extend: Lock.Refresh
//     (compare-and-pexpire).
//
// Validity: the library promises none; the adapter gives start + TTL,
// start before Obtain (or Refresh), with no drift allowance.
//
// Release and Extend need Obtain's *redislock.Lock (its fields are
// unexported), kept by token until Release succeeds or finds it not held
// (about 100 bytes each); a token without one is ErrNotHeld, Redis not
// asked. ErrNotObtained is ErrNotAcquired (Obtain) or ErrNotHeld
// (Refresh); ErrLockNotHeld is ErrNotHeld; any other error, and a done
// ctx (which Obtain returns as is), leaves the outcome unknown.
//
// Unlike the reference setnx: no drift allowance; an Acquire with an
// unknown outcome does not delete its token
// (TestLibrariesLeaveCancelledGrants); Refresh ignores the validity;
// Lock.TTL, unused here, reports the PTTL as the server saw it, not
// shortened by the reply's travel (TestRedislockTTLIgnoresReplyLatency).
// No fencing tokens. Evidence (libhook.go): node 0's answer to each
// obtain (the k-th in an Acquire is attempt k), release and refresh.
type redislockLock struct {
	base
	reports // through libhook.go
	client  redis.UniversalClient
	locker  *redislock.Client

	mu   sync.Mutex
	held map[string]*redislock.Lock // token → the library's lock
}

// NewRedislock builds "redislock": cfg.Timeout bounds Release, Extend and
// every go-redis call; Fencing is refused.
func NewRedislock(cfg Config) (Lock, error) {
	return asLock(newRedislock("redislock", cfg))
}

func newRedislock(name string, cfg Config) (*redislockLock, error) {
	b, err := newBase(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := refuseFencing(name, b.cfg); err != nil {
		return nil, err
	}
	c := NewUniversalClient(b.cfg)
	c.AddHook(libHook{node: 0, scripts: redislockScripts})
	return &redislockLock{base: b, client: c, locker: redislock.New(c), held: map[string]*redislock.Lock{}}, nil
}

// jitter is a redislock.RetryStrategy of the lock's seeded back-off.
type jitter struct{ b *Backoff }

// NextBackoff is at least 1ns: 0 means "stop" to redislock.
func (j jitter) NextBackoff() time.Duration { return max(j.b.Next(), 1) }

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

// Extend implements [Lock], even past the validity, as Refresh does.
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

func (l *redislockLock) Close() error { return l.client.Close() }
