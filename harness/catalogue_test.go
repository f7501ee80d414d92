package harness_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/lazyfs"
	"github.com/locktorture/locktorture/nemesis"
)

// TestCatalogueReplay: every kind of the rest of the catalogue (memory,
// lost writes, stalls, broken connections, the replication link) runs on
// a real cluster, and a replay of its schedule.json makes the same
// decisions: the same faults, with the same nodes and amounts (for the
// targeted kind, the same strike at the recorded offset), in the same
// order, each started and healed.
func TestCatalogueReplay(t *testing.T) {
	for _, tc := range []struct {
		kind string
		set  func(*harness.Config)
	}{
		{"evict", nil},
		{"noeviction", nil},
		{"power-loss", func(c *harness.Config) { c.Appendfsync = cluster.AppendfsyncEverysec }},
		{"power-loss-holder", func(c *harness.Config) { c.Appendfsync = cluster.AppendfsyncEverysec }},
		{"server-stall", nil},
		{"server-stall-holder", nil},
		{"reset-peer", nil},
		{"limit-data", nil},
		{"slicer", nil},
		{"conn-drop", nil},
		{"replica-partition", func(c *harness.Config) { c.Topology = cluster.TopologyFailover }},
		{"replica-latency", func(c *harness.Config) { c.Topology = cluster.TopologyFailover }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if strings.HasPrefix(tc.kind, "power-loss") {
				if err := lazyfs.Available(); err != nil {
					t.Skipf("power-loss not tested: %v", err)
				}
			}
			cfg := harness.Config{
				Workload: harness.Workload{Lock: "setnx", Clients: 4, Duration: 4 * time.Second, TTL: 500 * time.Millisecond, Seed: 7},
				Faults:   harness.Faults{Nemesis: []string{tc.kind}, NemesisInterval: 500 * time.Millisecond},
			}
			if tc.set != nil {
				tc.set(&cfg)
			}
			dir := runDir(t, cfg)
			want := faultHistory(t, dir)
			if len(want) == 0 {
				t.Fatalf("%s struck nothing in the run; its schedule: %s", tc.kind, readFile(t, filepath.Join(dir, "schedule.json")))
			}
			replay := cfg
			replay.Nemesis, replay.Seed = nil, 99
			replay.Replay = filepath.Join(dir, "schedule.json")
			// The replay plays only the recorded steps; a longer run lets
			// the last of them start and heal even when a loaded machine
			// starts the replay's cluster or a step late (one replay on
			// the failover topology ended before its fourth step).
			replay.Duration += 2 * time.Second
			rdir := runDir(t, replay)
			if got := faultHistory(t, rdir); !slices.Equal(got, want) {
				t.Fatalf("replayed faults:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			strikes, err := nemesis.Strikes(filepath.Join(rdir, "schedule.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range strikes {
				if s.Struck && s.Replay == "" {
					t.Errorf("replayed strike %s says nothing of the live state", s)
				}
			}
		})
	}
}
