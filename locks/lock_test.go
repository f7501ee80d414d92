package locks_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
)

// realLocks are the correct locks, the reference ones and the two
// libraries, with the node counts they are tested on; every case of
// TestLocks runs over each of them.
var realLocks = []struct {
	lock    string
	nodes   int
	fencing bool
}{
	{"setnx", 1, false},
	{"setnx", 1, true},
	{"redlock", 3, false},
	{"redlock", 5, true},
	{"redsync", 3, false},
	{"redsync", 5, false},
	{"redislock", 1, false},
}

// TestLocks checks the contract of the real locks against real Redis
// nodes, one shared 5-node cluster, distinct keys per case.
func TestLocks(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	for _, rl := range realLocks {
		name := fmt.Sprintf("%s/%d-nodes/fencing=%v", rl.lock, rl.nodes, rl.fencing)
		cfg := func(ttl time.Duration) locks.Config {
			cfg := config(c, rl.nodes, ttl)
			cfg.Fencing = rl.fencing
			return cfg
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("lifecycle", func(t *testing.T) {
				t.Parallel()
				testLifecycle(t, c, rl.nodes, rl.lock, cfg(10*time.Second))
			})
			t.Run("expiry", func(t *testing.T) {
				t.Parallel()
				testExpiry(t, c, rl.nodes, rl.lock, cfg(300*time.Millisecond))
			})
			t.Run("fencing", func(t *testing.T) {
				t.Parallel()
				testFencing(t, rl.lock, cfg(10*time.Second))
			})
		})
	}
}

// testLifecycle: acquire sets the token with a TTL on every node; a second
// client cannot acquire; extend keeps the token and pushes the validity;
// release deletes the token everywhere; a second release and an extend
// of the released lease say ErrNotHeld; the key can be acquired again.
func testLifecycle(t *testing.T, c *cluster.Cluster, nodes int, name string, cfg locks.Config) {
	a, b := newLock(t, name, cfg), newLock(t, name, cfg)
	key := testKey(t)

	lease := mustAcquire(t, a, key)
	for i := range nodes {
		if got := get(t, c, i, key); got != lease.Token {
			t.Errorf("node %d holds %q, want the token %q", i, got, lease.Token)
		}
		pttl, err := c.Node(i).Client().PTTL(t.Context(), key).Result()
		if err != nil || pttl <= 0 || pttl > cfg.TTL {
			t.Errorf("node %d: PTTL = %v, %v; want in (0, %v]", i, pttl, err, cfg.TTL)
		}
	}
	if _, err := b.Acquire(t.Context(), key); !errors.Is(err, locks.ErrNotAcquired) {
		t.Errorf("second acquire while held: error = %v, want ErrNotAcquired", err)
	}

	ext, err := a.Extend(t.Context(), lease)
	if err != nil {
		t.Fatalf("extend: %v", err)
	}
	if ext.Key != lease.Key || ext.Token != lease.Token || ext.Fence != lease.Fence {
		t.Errorf("extend changed the lease: %+v -> %+v", lease, ext)
	}
	if ext.Validity.Before(lease.Validity) {
		t.Errorf("extend moved the validity back: %v -> %v", lease.Validity, ext.Validity)
	}

	if err := a.Release(t.Context(), ext); err != nil {
		t.Fatalf("release: %v", err)
	}
	for i := range nodes {
		if got := get(t, c, i, key); got != "" {
			t.Errorf("node %d still holds %q after release", i, got)
		}
	}
	if err := a.Release(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("second release: error = %v, want ErrNotHeld", err)
	}
	if _, err := a.Extend(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend after release: error = %v, want ErrNotHeld", err)
	}
	again := mustAcquire(t, b, key)
	if again.Token == lease.Token {
		t.Errorf("two acquisitions got the same token %q", again.Token)
	}
	if err := b.Release(t.Context(), again); err != nil {
		t.Errorf("release: %v", err)
	}
}

// testExpiry: after the TTL another client acquires, and not before the
// first lease's validity ended; the first lease, now stale, can neither
// release nor extend (ErrNotHeld, whether refused locally or by the
// nodes), and the new holder's key is untouched. The new holder's TTL is
// 10 s, so that its key outlives the checks however slow the machine.
func testExpiry(t *testing.T, c *cluster.Cluster, nodes int, name string, cfg locks.Config) {
	long := cfg
	long.TTL = 10 * time.Second
	a, b := newLock(t, name, cfg), newLock(t, name, long)
	key := testKey(t)

	stale := mustAcquire(t, a, key)
	fresh, err := acquireWithin(t, b, key, 5*time.Second)
	if err != nil {
		t.Fatalf("after a %v TTL: %v", cfg.TTL, err)
	}
	if acquired := time.Now(); stale.Valid(acquired) {
		t.Errorf("a second client acquired at %v, %v before the first lease's validity ended",
			acquired, stale.Validity.Sub(acquired))
	}
	// RedLock may have acquired on a quorum while the old key had not yet
	// expired on some other node: remember where the new token is.
	var holding []int
	for i := range nodes {
		if get(t, c, i, key) == fresh.Token {
			holding = append(holding, i)
		}
	}
	if len(holding) < nodes/2+1 {
		t.Fatalf("the new holder's token is on nodes %v only, fewer than a quorum of %d", holding, nodes)
	}

	if err := a.Release(t.Context(), stale); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("release of a stale lease: error = %v, want ErrNotHeld", err)
	}
	if _, err := a.Extend(t.Context(), stale); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend of a stale lease: error = %v, want ErrNotHeld", err)
	}
	forged := stale
	forged.Validity = time.Now().Add(time.Hour) // get past the local check: the nodes must refuse
	if _, err := a.Extend(t.Context(), forged); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend of a stale token: error = %v, want ErrNotHeld", err)
	}
	for _, i := range holding {
		if got := get(t, c, i, key); got != fresh.Token {
			t.Errorf("node %d holds %q, want the new holder's token %q", i, got, fresh.Token)
		}
	}
	if err := b.Release(t.Context(), fresh); err != nil {
		t.Errorf("release by the new holder: %v", err)
	}
}

// testFencing: with Fencing, successive acquisitions of a key get strictly
// increasing fencing tokens; without, the token is 0.
func testFencing(t *testing.T, name string, cfg locks.Config) {
	l := newLock(t, name, cfg)
	key := testKey(t)
	var prev int64
	for i := range 4 {
		lease := mustAcquire(t, l, key)
		switch {
		case !cfg.Fencing && lease.Fence != 0:
			t.Errorf("acquisition %d: fencing token %d without Fencing", i, lease.Fence)
		case cfg.Fencing && lease.Fence <= prev:
			t.Errorf("acquisition %d: fencing token %d after %d, want increasing", i, lease.Fence, prev)
		}
		prev = lease.Fence
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatalf("release: %v", err)
		}
	}
}

// TestAcquireCancelledDuringBackoff: a cancelled ctx ends an Acquire that
// is backing off between attempts with an error wrapping
// context.Canceled, not ErrNotAcquired. The back-off is an hour long, so a
// back-off that ignored ctx would hang the test.
func TestAcquireCancelledDuringBackoff(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	for _, rl := range []struct {
		lock  string
		nodes int
	}{{"setnx", 1}, {"redlock", 3}, {"redsync", 3}, {"redislock", 1}} {
		t.Run(rl.lock, func(t *testing.T) {
			t.Parallel()
			cfg := config(c, rl.nodes, 10*time.Second)
			holder := newLock(t, rl.lock, cfg)
			cfg.Tries, cfg.RetryDelay = 1000, time.Hour
			waiter := newLock(t, rl.lock, cfg)
			key := testKey(t)
			mustAcquire(t, holder, key)

			// Warm the waiter's connections up, so that its first attempt
			// is over long before the cancellation.
			warm := mustAcquire(t, waiter, testKey(t, "warm-up"))
			if err := waiter.Release(t.Context(), warm); err != nil {
				t.Fatalf("release: %v", err)
			}

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			time.AfterFunc(100*time.Millisecond, cancel) // the cancellation under test, not a synchronisation
			_, err := waiter.Acquire(ctx, key)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want one wrapping context.Canceled", err)
			}
			if errors.Is(err, locks.ErrNotAcquired) {
				t.Errorf("error = %v wraps ErrNotAcquired; a cancellation is not a refusal", err)
			}
		})
	}
}

// TestValidityCountsAcquireTime: when a latency toxic slows the replies,
// the validity left when Acquire returns is at most TTL − latency: the
// time spent waiting for the nodes comes off the lease. (For redislock
// that is the adapter's doing: the library promises no deadline, and the
// adapter counts from before Obtain.)
func TestValidityCountsAcquireTime(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	for _, rl := range []struct {
		lock  string
		nodes int
	}{{"setnx", 1}, {"redlock", 5}, {"redsync", 5}, {"redislock", 1}} {
		t.Run(rl.lock, func(t *testing.T) {
			// Not parallel: both share the toxics of checkValidity.
			if err := checkValidity(t, c, rl.lock, rl.nodes); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkValidity delays the replies of a majority of the nodes (node 0
// included) by 100 ms, acquires, and returns an error if the validity left
// when Acquire returned is more than TTL − 100 ms. The lock's connections
// (and the libraries' cached scripts) are warmed up first, so the slowed
// acquire is one round trip: redsync bounds its round by 5% of the TTL,
// 150 ms here, less than a new connection's two slowed round trips.
func checkValidity(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	const (
		ttl     = 3 * time.Second
		latency = 100 * time.Millisecond
	)
	l := newLock(t, name, config(c, nodes, ttl))
	warm := mustAcquire(t, l, testKey(t, name, "warm-up"))
	if err := l.Release(t.Context(), warm); err != nil {
		t.Fatalf("%s: release: %v", name, err)
	}
	for i := range len(c.Nodes())/2 + 1 {
		defer addLatency(t, c, i, latency)()
	}
	key := testKey(t, name)
	lease := mustAcquire(t, l, key)
	left := time.Until(lease.Validity)
	defer func() {
		if err := l.Release(context.WithoutCancel(t.Context()), lease); err != nil {
			t.Errorf("release: %v", err)
		}
	}()
	if left > ttl-latency {
		return fmt.Errorf("%s: %v of validity left after an acquire slowed by %v, want at most TTL − latency = %v",
			name, left, latency, ttl-latency)
	}
	return nil
}
