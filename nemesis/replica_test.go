package nemesis_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestReplicaLinkKinds: replica-partition keeps the primary's writes off
// its replica (WAIT 1 acknowledges none) while the sentinels keep it the
// primary; replica-latency slows the link; each heals to a healthy
// topology whose replica has every write.
func TestReplicaLinkKinds(t *testing.T) {
	c := testutil.Cluster(t, cluster.Spec{Topology: cluster.TopologyFailover})
	fo := c.Failover()
	ctx := testutil.Context(t, 2*time.Minute)
	tg := &nemesis.Target{Cluster: c}
	for _, tc := range []struct {
		kind, params string
		cut          bool
	}{
		{"replica-partition", `{}`, true},
		{"replica-latency", `{"latency": "20ms", "jitter": "0s"}`, false},
	} {
		k, err := nemesis.Lookup(tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		f, err := k.Decode(json.RawMessage(tc.params))
		if err != nil {
			t.Fatal(err)
		}
		p, err := fo.WaitPrimary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Start(ctx, tg); err != nil {
			t.Fatal(err)
		}
		rc := p.Client()
		if err := rc.Set(ctx, tc.kind, "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if tc.cut {
			if n, err := rc.Wait(ctx, 1, 300*time.Millisecond).Result(); err != nil || n != 0 {
				t.Errorf("%s: WAIT 1 = %d, %v; want no replica to acknowledge", f, n, err)
			}
			if got, err := fo.Primary(ctx); err != nil || got != p {
				t.Errorf("%s: the sentinels name %v (%v), want %s", f, got, err, p.Name())
			}
		}
		if err := f.Heal(ctx, tg); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, time.Minute, "the replica to acknowledge the write", func() error {
			return rc.Wait(ctx, 1, 100*time.Millisecond).Err()
		})
		if n, err := rc.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
			t.Errorf("%s healed: WAIT 1 = %d, %v", f, n, err)
		}
	}
}
