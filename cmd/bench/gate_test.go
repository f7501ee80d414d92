package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadGate: the gate part reads a gate.json's promise cells (not the
// expected violations, which stop at their first) for their trials a
// minute and those short of the trials the power target needs.
func TestReadGate(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "redsync-20261207T000000")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	js := `{"duration":"8s","rate":0.25,"trials_needed":11,"status":"inconclusive","cells":[
	 {"name":"a/none","outcome":"safe","runs":1,"trials":60,"matches":true},
	 {"name":"a/partition","outcome":"safe","runs":3,"trials":6,"matches":false},
	 {"name":"a/conn","outcome":"safe","runs":2,"trials":12,"matches":true},
	 {"name":"a/clock","outcome":"violation","runs":1,"runs_with_violation":1,"trials":1,"matches":true}]}`
	if err := os.WriteFile(filepath.Join(sub, "gate.json"), []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	var g gateRun
	if err := readGate(dir, &g); err != nil {
		t.Fatal(err)
	}
	// Trials a minute of 8 s runs: none 450, partition 15, conn 45.
	if g.Runs != 7 || g.Need != 11 || len(g.Short) != 1 || g.Short[0] != "a/partition" || g.PerMinute != 45 || g.Slowest != "a/partition (15)" {
		t.Errorf("read %+v", g)
	}
	if len(g.Violated) != 1 || len(g.Mismatched) != 1 {
		t.Errorf("violated %v, mismatched %v", g.Violated, g.Mismatched)
	}
	if err := readGate(t.TempDir(), &g); err == nil {
		t.Error("a folder without gate.json read")
	}
}
