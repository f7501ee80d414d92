package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
)

// TestReplayCommand: the replay command is the run's own with --replay
// and --duration in place of its, whatever form they took.
func TestReplayCommand(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"torture run --lock redlock --nodes 5 --nemesis clock --duration 8s --seed 1",
			"torture run --lock redlock --nodes 5 --nemesis clock --seed 1 --replay m.json --duration 4s"},
		{"torture run --lock setnx --duration=8s --replay old.json --out /tmp/x --seed 2",
			"torture run --lock setnx --seed 2 --replay m.json --duration 4s"},
		{"", "torture run --replay m.json --duration 4s"},
	} {
		if got := replayCommand(tc.in, "m.json", 4*time.Second); got != tc.want {
			t.Errorf("replayCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestShrinkRefuses: shrink wants a run with a violation and a fault
// schedule, and says in one line what is missing.
func TestShrinkRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]any{"lock": "setnx", "seed": 1, "duration": int64(time.Second), "ttl": int64(time.Second)}
	safe := report.Results{RunID: "x", Config: cfg, Check: checker.Result{Lease: checker.Valid, Resource: checker.Valid}}
	if err := report.WriteResults(dir, safe); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "no fault step") {
		t.Errorf("no step: exit %d, %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[{"kind":"kill","at":"1s","for":"1s","desc":"kill n1","params":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "found no violation") {
		t.Errorf("no violation: exit %d, %s", code, stderr)
	}
}
