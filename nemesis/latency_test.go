package nemesis_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestLatency checks that a PING on an open connection through any
// group's proxy to a slowed node takes at least the latency (twice with
// Upstream) less the jitter, that other nodes are left alone, and that the
// heal removes the toxics and PINGs get fast again.
func TestLatency(t *testing.T) {
	c := startCluster(t, 2, 2)
	ctx := t.Context()
	target := &nemesis.Target{Cluster: c}
	clients := make([][]*redis.Client, c.Groups())
	for g := range clients {
		for _, n := range c.Nodes() {
			rc := testutil.Client(t, n.GroupAddr(g), c.Password())
			if err := rc.Ping(ctx).Err(); err != nil { // connect before the toxics
				t.Fatal(err)
			}
			clients[g] = append(clients[g], rc)
		}
	}
	for _, l := range []nemesis.Latency{
		{Nodes: []int{0}, Latency: nemesis.Duration(200 * time.Millisecond)},
		{Nodes: []int{0, 1}, Latency: nemesis.Duration(120 * time.Millisecond), Jitter: nemesis.Duration(20 * time.Millisecond), Upstream: true},
	} {
		t.Run(l.String(), func(t *testing.T) {
			if why := l.Refuse(nemesis.Setup{MultiNode: true, Nodes: 2, Groups: 2}); why != "" {
				t.Fatalf("Refuse: %s", why)
			}
			if err := l.Start(ctx, target); err != nil {
				t.Fatal(err)
			}
			healed := false
			t.Cleanup(func() {
				if !healed {
					l.Heal(ctx, target)
				}
			})
			least := time.Duration(l.Latency - l.Jitter)
			if l.Upstream {
				least *= 2
			}
			for g := range clients {
				for i, rc := range clients[g] {
					start := time.Now()
					if err := rc.Ping(ctx).Err(); err != nil {
						t.Fatalf("group %d, n%d: %v", g, i+1, err)
					}
					took := time.Since(start)
					t.Logf("group %d, n%d: PING under the fault took %v", g, i+1, took)
					if slices.Contains(l.Nodes, i) && took < least {
						t.Errorf("group %d, n%d: PING took %v, want at least %v", g, i+1, took, least)
					}
				}
			}
			healed = true
			if err := l.Heal(ctx, target); err != nil {
				t.Fatal(err)
			}
			assertHealthy(t, c)
			for g := range clients {
				for i, rc := range clients[g] {
					testutil.Eventually(t, 5*time.Second, fmt.Sprintf("a PING under %v from group %d to n%d", time.Duration(l.Latency)/2, g, i+1), func() error {
						start := time.Now()
						if err := rc.Ping(ctx).Err(); err != nil {
							return err
						}
						if took := time.Since(start); took >= time.Duration(l.Latency)/2 {
							return fmt.Errorf("took %v", took)
						}
						return nil
					})
				}
			}
		})
	}
}
