package locks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// TestSetNXSeed: the seed article's lock tells its holder no validity:
// after its key expired and a second client took it, the first lease
// still reads as valid (two holders at once), where setnx's lease has
// ended; its release, the Lua compare-and-delete, spares the new holder.
func TestSetNXSeed(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	for _, tc := range []struct {
		lock          string
		validAfterTTL bool
	}{
		{"setnx-seed", true},
		{"setnx", false},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			l := newLock(t, tc.lock, config(c, 1, 300*time.Millisecond))
			key := testKey(t, tc.lock)
			first := mustAcquire(t, l, key)
			if v := time.Until(first.Validity); tc.validAfterTTL && v < locks.UntilRelease-time.Minute {
				t.Fatalf("validity %v, want about locks.UntilRelease", v)
			}
			second, err := acquireWithin(t, l, key, 5*time.Second)
			if err != nil {
				t.Fatalf("after the TTL: %v", err)
			}
			if got := first.Valid(time.Now()); got != tc.validAfterTTL {
				t.Errorf("first lease valid after a second client acquired: %v, want %v", got, tc.validAfterTTL)
			}
			if err := l.Release(t.Context(), first); !errors.Is(err, locks.ErrNotHeld) {
				t.Errorf("release of the expired lease: %v, want ErrNotHeld", err)
			}
			if got := get(t, c, 0, key); got != second.Token {
				t.Errorf("the stale release left %q, want the new holder's token %q", got, second.Token)
			}
			ext, err := l.Extend(t.Context(), second)
			if err != nil {
				t.Fatalf("extend: %v", err)
			}
			if err := l.Release(t.Context(), ext); err != nil {
				t.Errorf("release: %v", err)
			}
		})
	}
}

// TestSetNXWait: setnx with WaitReplicas 1 holds only once the replica
// has the key; with the replica stopped, WAIT 1 times out and the lock,
// having deleted its key from the primary, reports ErrNotAcquired.
// Without a replica (no sentinels) it is refused, and so is any other
// lock.
func TestSetNXWait(t *testing.T) {
	t.Parallel()
	if _, err := locks.New("setnx", locks.Config{Addrs: []string{"127.0.0.1:1"}, WaitReplicas: 1}); err == nil || !strings.Contains(err.Error(), "topology failover") {
		t.Errorf("setnx with WAIT on a lone node: %v, want a refusal naming topology failover", err)
	}
	if _, err := locks.New("redislock", locks.Config{Addrs: []string{"127.0.0.1:1"}, WaitReplicas: 1}); err == nil || !strings.Contains(err.Error(), "takes no WAIT") {
		t.Errorf("redislock with WAIT: %v, want a refusal", err)
	}
	f := startFailover(t)
	ctx := t.Context()
	primary, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var replica *cluster.Node
	for _, n := range f.Cluster().Nodes() {
		if n != primary {
			replica = n
		}
	}
	cfg := sentinelConfig(f, 10*time.Second)
	cfg.WaitReplicas = 1
	l := newLock(t, "setnx", cfg)
	key := testKey(t, "acked")
	lease := mustAcquire(t, l, key)
	if got := testutil.Value(t, replica, key); got != lease.Token {
		t.Errorf("key on the replica right after the acquire = %q, want the token", got)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("release: %v", err)
	}
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	key = testKey(t, "unacked")
	_, err = l.Acquire(ctx, key)
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, locks.ErrNotAcquired) {
		t.Errorf("acquire with the replica stopped: %v, want ErrNotAcquired", err)
	}
	if got := testutil.Value(t, primary, key); got != "" {
		t.Errorf("key left on the primary after an unacknowledged SET: %q", got)
	}
}
