package etcdlock_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/locks/etcdlock"
)

// TestRegistered: importing the package registers etcd-mutex once, after
// the built-in locks, with what the matrix and the gate read of it.
func TestRegistered(t *testing.T) {
	s, err := locks.Lookup(etcdlock.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !s.MultiNode || !s.Fencing || s.Server != cluster.ServerEtcd || s.DefaultNodes() != 3 || s.Promises == nil || !s.Promises.Consensus {
		t.Errorf("spec %+v", s)
	}
	if names := locks.Names(); slices.Index(names, etcdlock.Name) != len(names)-1 {
		t.Errorf("Names() = %v: etcd-mutex must come after every built-in lock", names)
	}
	if err := locks.Register(s); !errors.Is(err, locks.ErrDuplicateLock) {
		t.Errorf("a second registration: %v, want ErrDuplicateLock", err)
	}
}

// TestEtcdMutex: etcd-mutex against three real etcd members: one holder
// at a time, fencing tokens that grow, a release that frees the key, an
// extend of a held lease; a lease its members forget (its member killed
// and the cluster's majority too, so the lease cannot be renewed) tells
// its holder; a second release is ErrNotHeld.
func TestEtcdMutex(t *testing.T) {
	c := testutil.Cluster(t, cluster.Spec{Nodes: 3, Server: cluster.ServerEtcd})
	l, err := locks.New(etcdlock.Name, locks.Config{Addrs: c.Addrs(), TTL: time.Second, Fencing: true, Timeout: 2 * time.Second, Tries: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
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
