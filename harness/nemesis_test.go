package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
)

// TestClientPause: the GC-pause scenario of Kleppmann 2016. A holder
// stalled past its TTL between its validity check and its write loses
// another client's update: resource invalid while the lease itself was
// honoured; with fencing the stale write is refused and nothing is lost.
func TestClientPause(t *testing.T) {
	for _, tc := range []struct {
		lock     string
		fencing  bool
		store    string
		resource checker.Verdict
	}{
		{"setnx", false, "", checker.Invalid},
		{"setnx", true, "", checker.Valid},
		{"setnx", true, harness.StoreWriteOnly, checker.Valid},
		{"redlock", false, "", checker.Invalid},
	} {
		name := tc.lock
		if tc.fencing {
			name += "+fencing"
		}
		if tc.store != "" {
			name += "+" + tc.store
		}
		t.Run(name, func(t *testing.T) {
			_, evs, res, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: tc.lock, Clients: 6, Keys: 1, Duration: 5 * time.Second, TTL: 500 * time.Millisecond, Seed: 4, Fencing: tc.fencing, Store: tc.store},
				Cluster:  harness.Cluster{Nodes: nodesFor(tc.lock)},
				Faults:   harness.Faults{Nemesis: []string{"client-pause"}, NemesisInterval: time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != checker.Valid || res.Resource != tc.resource {
				t.Fatalf("verdicts lease %s resource %s, want valid and %s", res.Lease, res.Resource, tc.resource)
			}
			starts, stops := faultEvents(evs)
			if starts == 0 || starts != stops {
				t.Fatalf("%d fault starts and %d stops recorded", starts, stops)
			}
		})
	}
}

func nodesFor(lock string) int {
	if strings.HasPrefix(lock, "redlock") {
		return 3
	}
	return 1
}

func faultEvents(evs []history.Event) (starts, stops int) {
	for _, e := range evs {
		switch e.F {
		case history.FaultStart:
			starts++
		case history.FaultStop:
			stops++
		}
	}
	return starts, stops
}

// TestScheduleReplay: one seed expands into schedule.json; the same seed
// gives the same schedule, and --replay runs exactly that schedule.
func TestScheduleReplay(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "redlock", Clients: 2, Duration: 3 * time.Second, Seed: 11},
		Cluster:  harness.Cluster{Nodes: 3},
		Faults:   harness.Faults{Nemesis: []string{"kill", "pause", "client-pause"}, NemesisInterval: 500 * time.Millisecond},
	}
	a := runDir(t, cfg)
	b := runDir(t, cfg)
	sa, sb := readFile(t, filepath.Join(a, "schedule.json")), readFile(t, filepath.Join(b, "schedule.json"))
	if sa != sb {
		t.Fatalf("same seed, different schedules:\n%s\n%s", sa, sb)
	}
	var parsed struct{ Steps []json.RawMessage }
	if err := json.Unmarshal([]byte(sa), &parsed); err != nil || len(parsed.Steps) == 0 {
		t.Fatalf("schedule has no steps (%v): %s", err, sa)
	}
	other := cfg
	other.Seed = 15 // 12 draws a client-pause first, which needs more than the 3s run (refused: no fault fits)
	if readFile(t, filepath.Join(runDir(t, other), "schedule.json")) == sa {
		t.Fatal("seeds 11 and 15 drew the same schedule")
	}
	replay := cfg
	replay.Seed = 99
	replay.Nemesis = nil
	replay.Replay = filepath.Join(a, "schedule.json")
	c := runDir(t, replay)
	var want, got struct{ Steps []struct{ Desc string } }
	json.Unmarshal([]byte(sa), &want)
	json.Unmarshal([]byte(readFile(t, filepath.Join(c, "schedule.json"))), &got)
	if len(want.Steps) != len(got.Steps) {
		t.Fatalf("replay ran %d steps, schedule has %d", len(got.Steps), len(want.Steps))
	}
	evs, err := history.ReadFile(filepath.Join(c, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var descs []string
	for _, e := range evs {
		if e.F == history.FaultStart {
			descs = append(descs, e.Value)
		}
	}
	for i, s := range want.Steps {
		if i >= len(descs) || descs[i] != s.Desc {
			t.Fatalf("replayed faults %q, want the steps of the schedule %+v", descs, want.Steps)
		}
	}
}

func runDir(t *testing.T, cfg harness.Config) string {
	t.Helper()
	cfg.Dir = filepath.Join(t.TempDir(), "run")
	if _, err := harness.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNemesisRefused(t *testing.T) {
	for _, tc := range []struct {
		cfg  harness.Config
		want string
	}{
		{harness.Config{Workload: harness.Workload{Lock: "setnx"}, Faults: harness.Faults{Nemesis: []string{"earthquake"}}, Output: harness.Output{Dir: "x"}}, "unknown fault kind"},
	} {
		_, err := tc.cfg.WithDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one line containing %q", tc.cfg.Nemesis, err, tc.want)
		}
	}
}
