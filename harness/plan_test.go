package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/nemesis"
)

// TestPlan: NewPlan validates a configuration without its directory and
// sets every default from harness.Defaults; the plan runs in the directory
// it is given and plays the schedule it drew.
func TestPlan(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "setnx", Duration: 3 * time.Second},
		Faults:   harness.Faults{Nemesis: []string{"kill"}, NemesisInterval: 500 * time.Millisecond},
	}
	p, err := harness.NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, d := p.Config(), harness.Defaults()
	if got.Clients != d.Clients || got.Keys != d.Keys || got.TTL != d.TTL || got.Hold != d.Hold || got.Seed != d.Seed ||
		got.Backend != d.Backend || got.Topology != d.Topology || got.Restart != d.Restart || got.AcquireTimeout != got.TTL ||
		got.Duration != 3*time.Second || got.NemesisInterval != 500*time.Millisecond || got.Nodes != 1 {
		t.Fatalf("plan's config %+v; defaults %+v", got, d)
	}
	if _, err := p.Run(t.Context(), ""); err == nil {
		t.Error("Run without a directory: no error")
	}
	dir := filepath.Join(t.TempDir(), "run")
	sum, err := p.Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc nemesis.Schedule
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if sum.Faults == 0 || len(sc.Steps) != sum.Faults || sum.Config.Dir != dir || sum.HistoryPath != filepath.Join(dir, "history.jsonl") {
		t.Errorf("summary %+v, schedule of %d steps", sum, len(sc.Steps))
	}
	// The same configuration draws the same schedule.
	q, err := harness.NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	qdir := filepath.Join(t.TempDir(), "again")
	if _, err := q.Run(context.Background(), qdir); err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(filepath.Join(qdir, "schedule.json"))
	if err != nil || string(b2) != string(b) {
		t.Errorf("a second plan of one configuration drew another schedule (%v):\n%s\n%s", err, b, b2)
	}
}
