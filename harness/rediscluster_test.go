package harness_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/nemesis"
)

// TestClusterReplay: each kind of the cluster topology strikes the
// master of the held key's slot in a setnx run on a 3×2 Redis Cluster,
// and a replay of its schedule.json makes the same decisions: a strike
// at the same offset, on the same nodes, for the same key. (Whether a
// grant then came under the cut is the live run's; the replay says so.)
func TestClusterReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs on a Redis Cluster per kind")
	}
	for _, kind := range []string{"cluster-failover-unreplicated", "cluster-partition-master", "cluster-kill-master", "cluster-migrate"} {
		t.Run(kind, func(t *testing.T) {
			cfg := harness.Config{
				Workload: harness.Workload{Lock: "setnx", Clients: 4, Keys: 1, Duration: 7 * time.Second, TTL: 2 * time.Second, Hold: 1500 * time.Millisecond, Seed: 3},
				Cluster:  harness.Cluster{Topology: cluster.TopologyCluster},
				Faults:   harness.Faults{Nemesis: []string{kind}, NemesisInterval: time.Second},
			}
			dir := runDir(t, cfg)
			want, err := nemesis.Strikes(filepath.Join(dir, "schedule.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || !want[0].Struck {
				t.Fatalf("%s struck nothing in the run; its schedule: %s", kind, readFile(t, filepath.Join(dir, "schedule.json")))
			}
			replay := cfg
			replay.Nemesis, replay.Seed = nil, 99
			replay.Replay = filepath.Join(dir, "schedule.json")
			rdir := runDir(t, replay)
			got, err := nemesis.Strikes(filepath.Join(rdir, "schedule.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("replay: %d strikes, want %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Struck != w.Struck || g.At != w.At || !slices.Equal(g.Targets, w.Targets) || g.Trigger.Key != w.Trigger.Key {
					t.Errorf("replayed %s\nrecorded %s", g, w)
				}
				if g.Struck && g.Replay == "" {
					t.Errorf("replayed strike %s says nothing of the live state", g)
				}
			}
		})
	}
}

// TestClusterRefused: a RedLock lock, or a lock without a cluster
// client, is refused on the cluster topology in one line, before
// anything starts.
func TestClusterRefused(t *testing.T) {
	for lock, want := range map[string]string{
		"redlock":         "needs independent masters",
		"setnx-plain-del": "does not speak Redis Cluster",
	} {
		cfg := harness.Config{Workload: harness.Workload{Lock: lock, Duration: time.Second}, Cluster: harness.Cluster{Topology: cluster.TopologyCluster}}
		cfg.Dir = filepath.Join(t.TempDir(), "run")
		_, err := harness.Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s on a cluster: %v; want one line saying %q", lock, err, want)
		}
	}
}
