package cluster

import (
	"errors"
	"net"
	"testing"
	"time"
)

// TestReplicationLink: the replica replicates through the primary's
// replication proxy and the sentinels do not: black-holed, the link keeps
// a write off the replica (WAIT 1 acknowledges none) while the sentinels
// still name the primary; lifted, the replica catches up. Close closes
// the fronts.
func TestReplicationLink(t *testing.T) {
	f := startFailoverTB(t)
	ctx := waitCtx(t, time.Minute)
	if !f.Cluster().Abilities().Links {
		t.Fatal("the failover topology on the process backend says it has no replication link")
	}
	p, err := f.WaitPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var replica *Node
	for _, n := range f.Nodes() {
		if n != p {
			replica = n
		}
	}
	link := f.ReplicationLink(p)
	if link == nil || link.Name() != p.Name()+replSuffix {
		t.Fatalf("ReplicationLink(%s) = %v", p.Name(), link)
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if err := link.AddToxic(ctx, Toxic{Name: "cut_" + stream, Type: "timeout", Stream: stream, Toxicity: 1, Attributes: map[string]int64{"timeout": 0}}); err != nil {
			t.Fatal(err)
		}
	}
	rc := p.Client()
	if err := rc.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rc.Wait(ctx, 1, 300*time.Millisecond).Result(); err != nil || n != 0 {
		t.Errorf("WAIT 1 under the cut: %d replicas, %v; want 0", n, err)
	}
	if got, err := f.Primary(ctx); err != nil || got != p {
		t.Errorf("the sentinels name %v (%v) under the replication cut, want %s: they reach it by another path", got, err, p.Name())
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if err := link.RemoveToxic(ctx, "cut_"+stream); err != nil {
			t.Fatal(err)
		}
	}
	for {
		n, err := rc.Wait(ctx, 1, 100*time.Millisecond).Result()
		if err == nil && n == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the replica did not catch up after the cut: WAIT 1 = %d, %v", n, err)
		}
	}
	if v, err := replica.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("the replica has %q, %v after the cut; want the write", v, err)
	}
	fronts := f.fronts
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, fr := range fronts {
		if _, err := fr.ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("front %s after Close: Accept = %v, want closed", fr.addr(), err)
		}
	}
}
