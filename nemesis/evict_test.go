package nemesis_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestEvict: under allkeys-lru a lock key set before the fault is evicted
// by the fillers; under noeviction it stays, and writes are refused
// (OOM) instead. Heal puts maxmemory and the policy back and leaves no
// filler.
func TestEvict(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		evicted bool
	}{{"evict", true}, {"noeviction", false}} {
		t.Run(tc.kind, func(t *testing.T) {
			c := startCluster(t, 1, 1)
			rc := c.Node(0).Client()
			ctx := testutil.Context(t, 30*time.Second)
			if err := rc.Set(ctx, "k0", "token", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			f := planFaults(t, tc.kind, setnx, 1, 1)[0]
			tg := &nemesis.Target{Cluster: c}
			healed := false
			t.Cleanup(func() {
				if !healed {
					f.Heal(ctx, tg)
				}
			})
			if err := f.Start(ctx, tg); err != nil {
				t.Fatal(err)
			}
			if tc.evicted {
				testutil.Eventually(t, 20*time.Second, "the lock key evicted", func() error {
					if n, err := rc.Exists(ctx, "k0").Result(); err != nil || n != 0 {
						return fmt.Errorf("exists %d, %v", n, err)
					}
					return nil
				})
			} else {
				testutil.Eventually(t, 20*time.Second, "a write refused", func() error {
					err := rc.Set(ctx, "probe", strings.Repeat("p", 4096), 0).Err()
					if err == nil || !strings.Contains(err.Error(), "OOM") {
						return fmt.Errorf("SET: %v", err)
					}
					return nil
				})
				if n, err := rc.Exists(ctx, "k0").Result(); err != nil || n != 1 {
					t.Fatalf("noeviction: the lock key exists %d, %v", n, err)
				}
			}
			healed = true
			if err := f.Heal(ctx, tg); err != nil {
				t.Fatal(err)
			}
			cfg, err := rc.ConfigGet(ctx, "maxmemory*").Result()
			if err != nil || cfg["maxmemory"] != "0" || cfg["maxmemory-policy"] != "noeviction" {
				t.Errorf("after heal: %v, %v; want maxmemory 0 and policy noeviction", cfg, err)
			}
			if keys, err := rc.Keys(ctx, "locktorture-filler:*").Result(); err != nil || len(keys) != 0 {
				t.Errorf("after heal: %d fillers left, %v", len(keys), err)
			}
			if err := rc.Set(ctx, "probe", "ok", 0).Err(); err != nil {
				t.Errorf("after heal: SET: %v", err)
			}
		})
	}
}
