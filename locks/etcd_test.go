package locks_test

import (
	"errors"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// TestEtcdMutex: etcd-mutex against three real etcd members: one holder
// at a time, fencing tokens that grow, a release that frees the key, an
// extend of a held lease; a lease its members forget (its member killed
// and the cluster's majority too, so the lease cannot be renewed) tells
// its holder; a second release is ErrNotHeld.
func TestEtcdMutex(t *testing.T) {
	c := testutil.Cluster(t, cluster.Spec{Nodes: 3, Server: cluster.ServerEtcd})
	cfg := config(c, 3, time.Second)
	cfg.Fencing = true
	cfg.Timeout = 2 * time.Second
	l := newLock(t, "etcd-mutex", cfg)
	ctx := testutil.Context(t, time.Minute)

	a, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if a.Fence <= 0 || a.Token == "" || a.Lost == nil {
		t.Fatalf("lease %+v", a)
	}
	if _, err := l.Acquire(ctx, "k"); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("second acquire of a held key: %v, want ErrNotAcquired", err)
	}
	if _, err := l.Extend(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, a); !errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("second release: %v, want ErrNotHeld", err)
	}
	b, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if b.Fence <= a.Fence {
		t.Errorf("fence %d after %d: tokens must grow", b.Fence, a.Fence)
	}
	// Stop two of the three members: no keep-alive can be committed, and
	// the holder must be told within about a TTL.
	for _, i := range []int{1, 2} {
		if err := c.Node(i).Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Node(i).Resume() })
	}
	select {
	case <-b.Lost.Done():
	case <-ctx.Done():
		t.Fatal("holder never told after its members lost their quorum")
	}
	if b.Lost.Err() == nil {
		t.Error("notice without a reason")
	}
}
