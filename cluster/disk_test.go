package cluster_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/lazyfs"
	"github.com/locktorture/locktorture/internal/testutil"
)

// lazyMounts lists the lazyfs mounts under dir.
func lazyMounts(t *testing.T, dir string) []string {
	t.Helper()
	m, err := lazyfs.Mounted()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for mp := range m {
		if strings.HasPrefix(mp, dir+string(filepath.Separator)) {
			out = append(out, mp)
		}
	}
	return out
}

// TestPowerLoss: on lazyfs a node with appendfsync always keeps, across a
// kill, a drop of its unsynced writes and a restart, every key it
// acknowledged; a key written while it does not fsync (appendfsync no,
// set at run time) is lost. Close unmounts every node's lazyfs.
func TestPowerLoss(t *testing.T) {
	if err := lazyfs.Available(); err != nil {
		t.Skipf("power loss not tested: %v", err)
	}
	dir := t.TempDir()
	ctx := testutil.Context(t, time.Minute)
	c, err := cluster.Open(ctx, cluster.Spec{Nodes: 2, Appendfsync: cluster.AppendfsyncAlways}, cluster.WithDir(dir), cluster.WithLazyFS())
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			c.Close()
		}
	})
	if got := lazyMounts(t, dir); len(got) != 2 {
		t.Fatalf("lazyfs mounts under the cluster's folder: %v, want one per node", got)
	}
	if !c.Abilities().PowerLoss {
		t.Error("a cluster opened WithLazyFS says it cannot cut power")
	}
	n := c.Node(0)
	rc := n.Client()
	if err := rc.Set(ctx, "kept", "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ConfigSet(ctx, "appendfsync", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "lost", "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if n.Unsynced() == 0 {
		t.Error("Unsynced = 0 after a write the node did not fsync")
	}
	if _, err := n.DropUnsynced(); err == nil {
		t.Error("DropUnsynced of a running node succeeded")
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	dropped, err := n.DropUnsynced()
	if err != nil || dropped == 0 {
		t.Fatalf("DropUnsynced = %d, %v; want the unsynced write dropped", dropped, err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Exists(ctx, "kept").Result(); err != nil || v != 1 {
		t.Errorf("the key written under appendfsync always: exists %d, %v; want kept", v, err)
	}
	if v, err := rc.Exists(ctx, "lost").Result(); err != nil || v != 0 {
		t.Errorf("the key never fsynced: exists %d, %v; want it lost", v, err)
	}
	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lazyMounts(t, dir); len(got) != 0 {
		t.Errorf("lazyfs mounts left after Close: %v", got)
	}
}

// TestLazyFSUnmountedOnFailure: a cluster whose node fails to start
// unmounts the lazyfs it mounted before it returns the error, and so does
// one whose context is cancelled.
func TestLazyFSUnmountedOnFailure(t *testing.T) {
	if err := lazyfs.Available(); err != nil {
		t.Skipf("power loss not tested: %v", err)
	}
	dir := t.TempDir()
	_, err := cluster.Open(t.Context(), cluster.Spec{Nodes: 2, Appendfsync: cluster.AppendfsyncAlways}, cluster.WithDir(dir), cluster.WithLazyFS(),
		cluster.WithExtraArgs("--no-such-directive", "x"))
	if err == nil {
		t.Fatal("a node with a bad directive started")
	}
	if got := lazyMounts(t, dir); len(got) != 0 {
		t.Errorf("lazyfs mounts left after a failed start: %v", got)
	}

	dir = t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	c, err := cluster.Open(ctx, cluster.Spec{Nodes: 1, Appendfsync: cluster.AppendfsyncEverysec}, cluster.WithDir(dir), cluster.WithLazyFS())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	testutil.Until(t, 30*time.Second, "the cancelled cluster's mounts gone", func() bool { return len(lazyMounts(t, dir)) == 0 })
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

// TestLazyFSRefused: the docker and external backends refuse lazyfs, and
// a node without it cannot drop unsynced writes.
func TestLazyFSRefused(t *testing.T) {
	for _, s := range []cluster.Spec{{Backend: cluster.BackendDocker}, {Backend: cluster.BackendExternal, External: []string{"127.0.0.1:1"}}} {
		if why := s.Abilities().Missing(cluster.Abilities{PowerLoss: true}); why == "" || strings.Contains(why, "\n") {
			t.Errorf("%s backend: Missing(PowerLoss) = %q, want one line saying why", s.Backend, why)
		}
	}
	c := testutil.Cluster(t, cluster.Spec{})
	if err := c.Node(0).Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Node(0).DropUnsynced(); !errors.Is(err, cluster.ErrNoLazyFS) {
		t.Errorf("DropUnsynced without lazyfs: %v, want ErrNoLazyFS", err)
	}
	if err := c.Node(0).Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
}
