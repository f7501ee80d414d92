package nemesis_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestConnectionKinds: each connection fault breaks a connection opened
// before it as it says — a reset or a cut on the replies loses the reply
// of a command that ran; on the commands, the command never runs; sliced
// replies still arrive whole; a connection dropped hangs — and Heal leaves
// every proxy clean.
func TestConnectionKinds(t *testing.T) {
	for _, tc := range []struct {
		name, kind, params string
		fails              bool // the SET through the fault fails
		ran                bool // and the node has the key after it
	}{
		{"reset on replies", "reset-peer", `{"nodes": [0], "stream": "downstream", "reset": "0s"}`, true, true},
		{"reset on commands", "reset-peer", `{"nodes": [0], "stream": "upstream", "reset": "0s"}`, true, false},
		{"cut mid-reply", "limit-data", `{"nodes": [0], "stream": "downstream", "bytes": 3}`, true, true},
		{"sliced replies", "slicer", `{"nodes": [0], "stream": "downstream", "size": 1, "variation": 0, "delay": "100µs"}`, false, true},
		{"every connection dropped", "conn-drop", `{"nodes": [0], "share": 1}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, 1, 1)
			ctx := testutil.Context(t, 30*time.Second)
			k, err := nemesis.Lookup(tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			f, err := k.Decode(json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if why := f.(nemesis.RefusingFault).Refuse(setnx); why != "" {
				t.Fatal(why)
			}
			rc := testutil.Client(t, c.Node(0).Addr(), c.Password())
			if err := rc.Ping(ctx).Err(); err != nil { // the connection, open before the fault
				t.Fatal(err)
			}
			tg := &nemesis.Target{Cluster: c}
			if err := f.Start(ctx, tg); err != nil {
				t.Fatal(err)
			}
			healed := false
			t.Cleanup(func() {
				if !healed {
					f.Heal(context.Background(), tg)
				}
			})
			sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			err = rc.Set(sctx, "k0", strings.Repeat("v", 64), time.Minute).Err()
			cancel()
			if (err != nil) != tc.fails {
				t.Errorf("SET through %s: %v; want it to fail: %v", f, err, tc.fails)
			}
			if !tc.fails {
				if v, err := rc.Get(ctx, "k0").Result(); err != nil || v != strings.Repeat("v", 64) {
					t.Errorf("GET through %s: %q, %v", f, v, err)
				}
			}
			healed = true
			if err := f.Heal(ctx, tg); err != nil {
				t.Fatal(err)
			}
			n, err := c.Node(0).Client().Exists(ctx, "k0").Result()
			if err != nil || (n == 1) != tc.ran {
				t.Errorf("after %s the node has the key: %d (%v); want %v", f, n, err, tc.ran)
			}
			assertHealthy(t, c)
		})
	}
}
