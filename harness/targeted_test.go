package harness_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/nemesis"
)

// TestTargetedRun: a targeted kind strikes a real run's holder at its
// last check (pause-holder: the stall the harness sizes from the validity
// left), the history records the strike with its target, schedule.json
// keeps the decision, and a replay of that schedule strikes at the same
// offsets and says how the live state compared.
func TestTargetedRun(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "setnx", Clients: 4, Keys: 1, Duration: 3 * time.Second, TTL: 300 * time.Millisecond, Hold: 50 * time.Millisecond, Seed: 3},
		Faults:   harness.Faults{Nemesis: []string{"pause-holder"}, NemesisInterval: 500 * time.Millisecond},
	}
	dir := runDir(t, cfg)
	aimed, err := nemesis.Aimed(filepath.Join(dir, "schedule.json"))
	if err != nil || len(aimed) == 0 {
		t.Fatalf("Aimed: %q, %v; want the decisions", aimed, err)
	}
	evs, res := checked(t, filepath.Join(dir, "history.jsonl"))
	var starts []string
	for _, e := range evs {
		if e.F == history.FaultStart {
			starts = append(starts, e.Value)
		}
	}
	if len(starts) == 0 || !strings.Contains(starts[0], "stall client") || !strings.Contains(aimed[0], starts[0]) {
		t.Fatalf("fault starts %q, decisions %q: want the first strike named with its client", starts, aimed)
	}
	if res.Lease != checker.Valid {
		t.Errorf("lease %s: a stalled holder overlaps no one's lease", res.Lease)
	}
	replay := cfg
	replay.Nemesis, replay.Replay = nil, filepath.Join(dir, "schedule.json")
	rdir := runDir(t, replay)
	raimed, err := nemesis.Aimed(filepath.Join(rdir, "schedule.json"))
	if err != nil || len(raimed) != len(aimed) {
		t.Fatalf("replay: %q, %v; want %d decisions", raimed, err, len(aimed))
	}
	for _, a := range raimed {
		if strings.Contains(a, "stall client") && !strings.Contains(a, "; replay: ") {
			t.Errorf("replayed decision %q says nothing of the live state", a)
		}
	}
}
