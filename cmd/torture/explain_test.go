package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplain: `torture explain` names the cause of each violation
// of a recorded history, in text or JSON, exits 0, and says when there
// is nothing to explain.
func TestExplain(t *testing.T) {
	dir := filepath.Join("..", "..", "checker", "testdata")
	out, stderr, code := torture(t, "explain", filepath.Join(dir, "lease-invalid_resource-invalid_cause-clock-jump.jsonl"))
	if code != exitValid {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"1 overlaps of leases", "1. lease violation on k1 at 1.200 s: clock jump, fault #1", "n2 expired the key at 1.100 s", "2. resource violation"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = torture(t, "explain", "--json", "--limit", "1", filepath.Join(dir, "lease-invalid_resource-invalid_cause-restart.jsonl"))
	var got struct {
		Outcome      string `json:"outcome"`
		Violations   int    `json:"violations"`
		Explanations []struct {
			Cause string `json:"cause"`
			Fault int    `json:"fault"`
		} `json:"explanations"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitValid {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if got.Outcome != "violation" || got.Violations != 2 || len(got.Explanations) != 1 || got.Explanations[0].Cause != "restart without persistence" || got.Explanations[0].Fault != 1 {
		t.Errorf("JSON: %+v", got)
	}
	out, _, code = torture(t, "explain", filepath.Join(dir, "lease-valid_resource-unknown_serial.jsonl"))
	if code != exitValid || !strings.Contains(out, "nothing to explain: lease valid, resource unknown") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
