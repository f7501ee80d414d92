package nemesis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// cutTimeout bounds each command sent across a cut.
const cutTimeout = 300 * time.Millisecond

// TestPartitionShapes applies every shape to 5 nodes and 2 client groups
// and checks, for each group and node, that commands cross the proxy
// exactly when the pair is not cut: on a connection opened before the
// partition and on a new one; that a cut command hangs (a black hole, not
// a refusal) and its write never lands, even after the heal; and that the
// heal leaves every proxy clean and every pair reachable again.
func TestPartitionShapes(t *testing.T) {
	c := startCluster(t, 5, 2)
	for _, tc := range []struct {
		p   nemesis.Partition
		cut [2][]int // per group, the nodes it must not reach
	}{
		{nemesis.Partition{Shape: "one", Isolated: []int{1}}, [2][]int{{1}, {1}}},
		{nemesis.Partition{Shape: "minority", Isolated: []int{0, 3}}, [2][]int{{0, 3}, {0, 3}}},
		{nemesis.Partition{Shape: "majority", Isolated: []int{1, 2, 4}}, [2][]int{{1, 2, 4}, {1, 2, 4}}},
		{nemesis.Partition{Shape: "halves", Sides: [][]int{{0, 1}, {2, 3, 4}}}, [2][]int{{2, 3, 4}, {0, 1}}},
		{nemesis.Partition{Shape: "split", Sides: [][]int{{0, 1, 2}, {2, 3, 4}}}, [2][]int{{3, 4}, {0, 1}}},
	} {
		t.Run(tc.p.Shape, func(t *testing.T) { checkPartition(t, c, &tc.p, tc.cut) })
	}
}

// probe is what one group saw of one node during a partition.
type probe struct {
	g, i           int
	key            string
	setErr, newErr error
	setTook        time.Duration
	newTook        time.Duration
}

func checkPartition(t *testing.T, c *cluster.Cluster, p *nemesis.Partition, cut [2][]int) {
	ctx := t.Context()
	target := &nemesis.Target{Cluster: c}
	if why := p.Refuse(nemesis.Setup{MultiNode: true, Nodes: 5, Groups: 2}); why != "" {
		t.Fatalf("Refuse: %s", why)
	}

	// One connection per group and node, open before the partition.
	var probes []*probe
	open := map[*probe]*redis.Client{}
	for g := range c.Groups() {
		for i, n := range c.Nodes() {
			pr := &probe{g: g, i: i, key: fmt.Sprintf("%s-g%d", p.Shape, g)}
			rc := testutil.Client(t, n.GroupAddr(g), c.Password())
			if err := rc.Ping(ctx).Err(); err != nil {
				t.Fatalf("before the partition, group %d to %s: %v", g, n.Name(), err)
			}
			probes, open[pr] = append(probes, pr), rc
		}
	}

	healed := false
	heal := func() {
		if !healed {
			healed = true
			if err := p.Heal(context.Background(), target); err != nil {
				t.Errorf("Heal: %v", err)
			}
		}
	}
	t.Cleanup(heal)
	if err := p.Start(ctx, target); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var wg sync.WaitGroup
	for _, pr := range probes {
		timeout := 5 * time.Second // ample for a reachable node
		if slices.Contains(cut[pr.g], pr.i) {
			timeout = cutTimeout
		}
		wg.Go(func() {
			start := time.Now() // before the deadline is set, so a hang lasts timeout from start
			tctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			pr.setErr = open[pr].Set(tctx, pr.key, "written during the partition", 0).Err()
			pr.setTook = time.Since(start)
			start = time.Now()
			pr.newErr = pingFresh(c.Node(pr.i).GroupAddr(pr.g), c.Password(), timeout)
			pr.newTook = time.Since(start)
		})
	}
	wg.Wait()
	for _, pr := range probes {
		if slices.Contains(cut[pr.g], pr.i) {
			if pr.setErr == nil || pr.newErr == nil {
				t.Errorf("group %d to cut n%d: SET on an open connection %v, PING on a new one %v; want both to fail", pr.g, pr.i+1, pr.setErr, pr.newErr)
			}
			if pr.setTook < cutTimeout || pr.newTook < cutTimeout {
				t.Errorf("group %d to cut n%d: failed after %v and %v, want a hang until the %v deadline (a black hole, not a refusal)", pr.g, pr.i+1, pr.setTook, pr.newTook, cutTimeout)
			}
		} else if pr.setErr != nil || pr.newErr != nil {
			t.Errorf("group %d to reachable n%d: SET on an open connection %v, PING on a new one %v", pr.g, pr.i+1, pr.setErr, pr.newErr)
		}
	}

	heal()
	assertHealthy(t, c)
	for _, pr := range probes {
		testutil.Eventually(t, 5*time.Second, fmt.Sprintf("the open client of group %d to reconnect to n%d", pr.g, pr.i+1), func() error {
			return open[pr].Ping(ctx).Err()
		})
		got, err := c.Node(pr.i).Client().Get(ctx, pr.key).Result()
		switch {
		case slices.Contains(cut[pr.g], pr.i) && !errors.Is(err, redis.Nil):
			t.Errorf("n%d: the SET group %d sent across the cut landed: %q, %v", pr.i+1, pr.g, got, err)
		case !slices.Contains(cut[pr.g], pr.i) && err != nil:
			t.Errorf("n%d: the SET group %d sent during the partition is missing: %v", pr.i+1, pr.g, err)
		}
	}
}

// TestPartitionNeedsGroups checks that a shape between client groups does
// not start on a cluster with one group, and leaves nothing behind.
func TestPartitionNeedsGroups(t *testing.T) {
	c := startCluster(t, 2, 1)
	target := &nemesis.Target{Cluster: c}
	p := &nemesis.Partition{Shape: "halves", Sides: [][]int{{0}, {1}}}
	if err := p.Start(t.Context(), target); err == nil {
		t.Error("halves started on a cluster with one client group")
	}
	if err := p.Heal(t.Context(), target); err != nil {
		t.Error(err)
	}
	assertHealthy(t, c)
}
