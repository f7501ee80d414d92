package locks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/locktorture/locktorture/locks"
	"github.com/redis/go-redis/v9"
)

// The tests of this file document where the two lock libraries, redsync
// and redislock, behave differently from the reference locks (redlock and
// setnx), each next to the reference's behaviour; TestLocks,
// TestNodeFailures and the others check what they share.

// TestRedsyncUntilIsMonotonic pins a fact of the pinned redsync version
// that the adapter relies on (see monotonic in redsync.go): Mutex.Until
// carries a monotonic clock reading (redsync computes it as
// time.Now().Add(…)). It needs no Redis: a pool that grants every SET.
func TestRedsyncUntilIsMonotonic(t *testing.T) {
	m := redsync.New(grantingPool{}).NewMutex("k", redsync.WithExpiry(time.Second))
	if err := m.Lock(); err != nil {
		t.Fatalf("Lock on a pool that grants: %v", err)
	}
	// time.Time.String ends with "m=±<seconds>" when the time carries a
	// monotonic reading (documented in package time).
	if until := m.Until(); !strings.Contains(until.String(), " m=") {
		t.Errorf("redsync's Until() = %v carries no monotonic reading; the adapter's re-anchoring now converts a wall-clock deadline", until)
	}
	if left := time.Until(m.Until()); left <= 0 || left > time.Second {
		t.Errorf("Until() is %v away, want in (0, 1s]", left)
	}
}

// grantingPool is a redsync pool whose SET NX always succeeds.
type grantingPool struct{}

func (grantingPool) Get(context.Context) (redsyncredis.Conn, error) { return grantingConn{}, nil }

type grantingConn struct{ redsyncredis.Conn }

func (grantingConn) SetNX(string, string, time.Duration) (bool, error) { return true, nil }
func (grantingConn) Close() error                                      { return nil }

// TestExtendPastValidity: an Extend of a lease whose validity has passed
// while the keys still hold its token. The reference locks refuse it
// without asking the nodes (ErrNotHeld); both libraries extend it, since
// neither looks at the validity. Harmless to mutual exclusion as long as
// the keys still hold the token (no one else can), but a client that
// extends late acted without the lock in between. The first case is a
// real late extend: with a drift factor of 0.5, redsync's validity ends
// halfway through the TTL while the keys live on.
func TestExtendPastValidity(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)

	t.Run("redsync with drift factor 0.5", func(t *testing.T) {
		t.Parallel()
		l, err := locks.NewRedsync(config(c, 3, 2*time.Second), locks.RedsyncDriftFactor(0.5), locks.RedsyncTimeoutFactor(0.1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		if left := time.Until(lease.Validity); left > time.Second {
			t.Fatalf("validity %v away with a drift factor of 0.5 on a 2 s TTL, want at most 1 s", left)
		}
		time.Sleep(time.Until(lease.Validity) + 100*time.Millisecond) // past the validity, within the TTL
		ext, err := l.Extend(t.Context(), lease)
		if err != nil {
			t.Fatalf("redsync refused to extend a lease past its validity, with the keys held: %v", err)
		}
		if !ext.Valid(time.Now()) {
			t.Errorf("extended lease not valid: %v", ext.Validity)
		}
		if err := l.Release(t.Context(), ext); err != nil {
			t.Errorf("release: %v", err)
		}
	})

	for _, tc := range []struct {
		lock    string
		nodes   int
		extends bool
	}{
		{"setnx", 1, false},
		{"redislock", 1, true},
		{"redlock", 3, false},
		{"redsync", 3, true},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			l := newLock(t, tc.lock, config(c, tc.nodes, 10*time.Second))
			key := testKey(t)
			lease := mustAcquire(t, l, key)
			defer del(t, c, key)
			past := lease
			past.Validity = time.Now().Add(-time.Millisecond) // the keys still live for about 10 s
			_, err := l.Extend(t.Context(), past)
			switch {
			case tc.extends && err != nil:
				t.Errorf("extend past the validity: %v; the library extends whenever the key holds the token", err)
			case !tc.extends && !errors.Is(err, locks.ErrNotHeld):
				t.Errorf("extend past the validity: error = %v, want ErrNotHeld without asking", err)
			}
		})
	}
}

// TestLibrariesLeaveCancelledGrants: when ctx ends while a SET is in
// flight (it reached the node; the reply is slowed by a latency toxic),
// the reference locks delete their token with a clean-up context of their
// own (TestCleanupAfterCancel). The libraries do not: redislock returns
// the error at once and never cleans up; redsync cleans up with the
// caller's ctx, which is done, so its clean-up fails. The token then
// holds the key with no holder until the TTL ends, and another client
// cannot acquire meanwhile.
func TestLibrariesLeaveCancelledGrants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock  string
		nodes int
		slow  []int
	}{
		{"redislock", 1, []int{0}},
		{"redsync", 5, []int{2, 3, 4}},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			c := startCluster(t, tc.nodes)
			const ttl = 10 * time.Second
			l := newLock(t, tc.lock, config(c, tc.nodes, ttl))
			key := testKey(t)
			warm := mustAcquire(t, l, testKey(t, "warm-up"))
			if err := l.Release(t.Context(), warm); err != nil {
				t.Fatalf("release: %v", err)
			}
			var heal []func()
			for _, i := range tc.slow {
				heal = append(heal, addLatency(t, c, i, 300*time.Millisecond))
			}
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			_, err := l.Acquire(ctx, key)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, locks.ErrNotAcquired) {
				t.Fatalf("error = %v, want one wrapping context.DeadlineExceeded and not ErrNotAcquired", err)
			}
			for _, h := range heal {
				h()
			}
			time.Sleep(time.Second) // the reference locks have long cleaned up by now
			held := 0
			for i := range tc.nodes {
				if get(t, c, i, key) != "" {
					held++
				}
			}
			if held < tc.nodes/2+1 {
				t.Errorf("%d of %d nodes hold the key 1 s after the cancelled acquire; the library was expected to leave its token", held, tc.nodes)
			}
			other := newLock(t, tc.lock, config(c, tc.nodes, ttl))
			if _, err := other.Acquire(t.Context(), key); !errors.Is(err, locks.ErrNotAcquired) {
				t.Errorf("another client's acquire: error = %v, want ErrNotAcquired (the key is blocked until its TTL)", err)
			}
			del(t, c, key)
		})
	}
}

// TestRedislockTTLIgnoresReplyLatency: redislock's Lock.TTL, offered to
// check that a lock is still held, returns the key's PTTL as Redis saw it
// when it ran the script; the reply's travel time does not come off. With
// replies slowed by 300 ms, a client that trusts TTL() believes it holds
// the lock about 300 ms after the key has expired. (The adapter does not
// use TTL; its validity counts from before the call.)
func TestRedislockTTLIgnoresReplyLatency(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	const (
		ttl     = 2 * time.Second
		latency = 300 * time.Millisecond
	)
	client := redis.NewClient(&redis.Options{Addr: c.Addrs()[0], Password: c.Password(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { client.Close() })
	key := testKey(t)
	lock, err := redislock.New(client).Obtain(t.Context(), key, ttl, nil)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	if _, err := lock.TTL(t.Context()); err != nil { // loads the script while the replies are fast
		t.Fatalf("TTL: %v", err)
	}
	addLatency(t, c, 0, latency)
	left, err := lock.TTL(t.Context())
	if err != nil {
		t.Fatalf("TTL: %v", err)
	}
	believed := time.Now().Add(left)
	// With 100 ms still to go by TTL(), the key must already be gone.
	time.Sleep(time.Until(believed) - 100*time.Millisecond)
	if v := get(t, c, 0, key); v != "" {
		t.Errorf("the key is still there 100 ms before the end TTL() promised; the reply latency was expected to make TTL() over-promise by about %v", latency)
	}
}

// TestDriftAllowance: right after an acquire on a fast node, the
// reference locks and redsync keep a drift allowance back from the TTL
// (1% of it, + 2 ms for the reference); redislock keeps none.
func TestDriftAllowance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	const ttl = 10 * time.Second
	for _, tc := range []struct {
		lock   string
		nodes  int
		margin time.Duration // the allowance expected at least; 0: none
	}{
		{"setnx", 1, ttl/100 + 2*time.Millisecond},
		{"redlock", 3, ttl/100 + 2*time.Millisecond},
		{"redsync", 3, ttl / 100},
		{"redislock", 1, 0},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			l := newLock(t, tc.lock, config(c, tc.nodes, ttl))
			key := testKey(t)
			start := time.Now()
			lease := mustAcquire(t, l, key)
			defer del(t, c, key)
			kept := start.Add(ttl).Sub(lease.Validity) // validity kept back, measured from before the call
			switch {
			case tc.margin > 0 && kept < tc.margin-time.Millisecond: // the lock's start is a little after ours
				t.Errorf("validity ends %v before start + TTL, want at least %v", kept, tc.margin)
			case tc.margin == 0 && kept > ttl/100:
				t.Errorf("validity ends %v before start + TTL; redislock was expected to keep no allowance", kept)
			}
		})
	}
}

// TestLibraryErrors: the adapters map the libraries' answers to
// ErrNotAcquired and ErrNotHeld and keep the libraries' error text.
func TestLibraryErrors(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	for _, tc := range []struct {
		lock                      string
		nodes                     int
		taken, staleExt, staleRel string // text of the library's error
	}{
		{"redsync", 3, "lock already taken", "lock already taken", "lock already taken"},
		{"redislock", 1, "redislock: not obtained", "redislock: not obtained", "redislock: lock not held"},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			l := newLock(t, tc.lock, config(c, tc.nodes, 300*time.Millisecond))
			key := testKey(t)
			stale := mustAcquire(t, l, key)
			_, err := l.Acquire(t.Context(), key)
			checkErr(t, "acquire while held", err, locks.ErrNotAcquired, tc.taken)
			fresh, err := acquireWithin(t, l, key, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Extend(t.Context(), stale)
			checkErr(t, "extend of a stale lease", err, locks.ErrNotHeld, tc.staleExt)
			checkErr(t, "release of a stale lease", l.Release(t.Context(), stale), locks.ErrNotHeld, tc.staleRel)
			if err := l.Release(t.Context(), fresh); err != nil {
				t.Fatalf("release: %v", err)
			}
			if tc.lock == "redsync" {
				// Gone from every node: redsync's ErrLockAlreadyExpired.
				checkErr(t, "second release", l.Release(t.Context(), fresh), locks.ErrNotHeld, "lock was already expired")
			}
		})
	}
}

// checkErr fails the test unless err wraps want and its text contains
// text.
func checkErr(tb testing.TB, op string, err, want error, text string) {
	tb.Helper()
	if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
		tb.Errorf("%s: error = %v, want one wrapping %v with the library's %q", op, err, want, text)
	}
}
