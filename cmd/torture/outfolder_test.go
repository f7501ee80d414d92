package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
)

// TestRefusedMakesNoFolder: a command refused for its flags says so
// before it creates anything: neither its own folder nor --out itself
// (results/envelope, results/matrix, results/runs by default) is left
// behind.
func TestRefusedMakesNoFolder(t *testing.T) {
	for _, args := range [][]string{
		{"envelope", "--lock", "setnx", "--fault", "pause", "--points", "1"},
		{"envelope", "--lock", "setnx", "--fault", "pause", "--clients", "1"},
		{"envelope", "--lock", "no-such-lock", "--fault", "pause"},
		{"envelope", "--lock", "", "--fault", "pause"},
		{"matrix", "--cells", "nothing-matches"},
		{"run", "--keys", "1000000000"},
	} {
		root := t.TempDir()
		_, stderr, code := torture(t, append(args, "--out", filepath.Join(root, "results", "out"))...)
		if code != exitError || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", args, code, stderr)
		}
		if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 {
			t.Errorf("%v: refused but left %v behind (%v)", args, ents, err)
		}
	}
}

// TestPublishSideBySide: two publishes started together with one OUT
// never mix their bundles: one writes it, the other is refused in one
// line (exit 2), and OUT holds one whole bundle.
func TestPublishSideBySide(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "matrix")
	m := report.Matrix{Seeds: []int64{1}, Duration: "8s", Cells: []report.Cell{
		{Name: "setnx/none", Lock: "setnx", Matches: true, Runs: []report.CellRun{{Seed: 1, RunID: "r1", Dir: "runs/r1", Lease: checker.Valid, Resource: checker.Valid}}},
	}}
	if err := os.MkdirAll(filepath.Join(src, "runs", "r1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMatrix(src, m); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "bundle")
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 2)
	for range 2 {
		go func() {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"matrix", "publish", src, out}, &stdout, &stderr)
			code := exitCode(err, &stderr)
			done <- result{stderr.String(), code}
		}()
	}
	codes := map[int]int{}
	for range 2 {
		r := <-done
		codes[r.code]++
		if r.code == exitError && (!strings.Contains(r.stderr, "not empty") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0) {
			t.Errorf("the second publish: %q; want one line saying OUT is taken", r.stderr)
		}
	}
	if codes[exitValid] != 1 || codes[exitError] != 1 {
		t.Fatalf("exit statuses %v; want one 0 and one 2", codes)
	}
	if _, err := report.ReadMatrix(out); err != nil {
		t.Errorf("the bundle: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, report.RunsArchive)); err != nil {
		t.Errorf("the bundle: %v", err)
	}
}
