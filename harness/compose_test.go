package harness_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/nemesis"
)

// faultHistory is the nemesis's part of a history: each fault start and
// heal, in order, by what it says.
func faultHistory(t *testing.T, dir string) []string {
	t.Helper()
	evs, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.F == history.FaultStart || e.F == history.FaultStop {
			out = append(out, string(e.F)+" "+e.Value)
		}
	}
	return out
}

// TestComposeReplay: with --nemesis-compose 2 a redlock run draws steps
// that hold a partition and a clock jump at once; schedule.json keeps
// them, and a replay of it gives the same history of faults, event for
// event.
func TestComposeReplay(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "redlock", Clients: 4, Duration: 6 * time.Second, TTL: 500 * time.Millisecond, Seed: 2},
		Cluster:  harness.Cluster{Nodes: 3},
		Faults:   harness.Faults{Nemesis: []string{"partition", "clock"}, NemesisInterval: 500 * time.Millisecond, NemesisCompose: 2},
	}
	dir := runDir(t, cfg)
	sc, err := nemesis.ReadSchedule(filepath.Join(dir, "schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	composedSteps := 0
	for _, st := range sc.Steps {
		if len(st.With) > 0 {
			composedSteps++
			if kinds := []string{st.Kind, st.With[0].Kind}; !slices.Contains(kinds, "partition") || !slices.Contains(kinds, "clock") {
				t.Errorf("composed step of %v, want a partition and a clock jump", kinds)
			}
		}
	}
	if composedSteps == 0 {
		t.Fatalf("seed %d composed no step of %d; pick another seed", cfg.Seed, len(sc.Steps))
	}
	want := faultHistory(t, dir)
	replay := cfg
	replay.Nemesis, replay.NemesisCompose, replay.Seed = nil, 0, 99
	replay.Replay = filepath.Join(dir, "schedule.json")
	got := faultHistory(t, runDir(t, replay))
	if !slices.Equal(got, want) {
		t.Fatalf("replayed faults:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
