package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/report"
)

// writeBundle writes a hand-made bundle (summary.json alone) with one
// cell of k violations in 10 runs, and returns its folder.
func writeBundle(t *testing.T, name string, day, k int, redsync string) string {
	t.Helper()
	r := report.NewRate(k, 10)
	m := report.Matrix{
		Started:  time.Date(2026, 12, day, 2, 0, 0, 0, time.UTC),
		Seeds:    []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		Versions: map[string]string{"github.com/go-redsync/redsync/v4": redsync},
		Cells:    []report.Cell{{Name: "redsync/client-pause", Rate: &r}},
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrendCmd: a cell whose rate left the interval of the bundle before
// fails the command (exit 1) with the cell, both intervals and both
// bundles named, and the page flags it; a steady one exits 0.
func TestTrendCmd(t *testing.T) {
	night1 := writeBundle(t, "night1", 1, 0, "v4.18.1")
	moved := writeBundle(t, "night2", 2, 6, "v4.19.0")
	steady := writeBundle(t, "night2-steady", 2, 1, "v4.18.1")

	out := t.TempDir()
	stdout, stderr, code := torture(t, "matrix", "trend", "--out", out, night1, moved)
	if code != exitViolation {
		t.Fatalf("moved rate: exit %d, want %d; stdout %q stderr %q", code, exitViolation, stdout, stderr)
	}
	for _, want := range []string{"redsync/client-pause", "0/10 = 0.00 [0.00, 0.28]", "6/10 = 0.60 [0.31, 0.83]", night1, moved} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q: %q", want, stderr)
		}
	}
	if !strings.Contains(stdout, "version: github.com/go-redsync/redsync/v4 v4.18.1 → v4.19.0") {
		t.Errorf("stdout does not show the version change: %q", stdout)
	}
	page, err := os.ReadFile(filepath.Join(out, report.TrendHTML))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `class="moved"`) {
		t.Error("the HTML page does not flag the moved cell")
	}
	if md, err := os.ReadFile(filepath.Join(out, report.TrendMarkdown)); err != nil || !strings.Contains(string(md), "⚠") {
		t.Errorf("the markdown page does not flag the moved cell (%v)", err)
	}

	out = t.TempDir()
	stdout, stderr, code = torture(t, "matrix", "trend", "--out", out, night1, steady)
	if code != exitValid || !strings.Contains(stdout, "no cell's rate moved") {
		t.Fatalf("steady rate: exit %d, stdout %q, stderr %q; want 0", code, stdout, stderr)
	}
	if page, err := os.ReadFile(filepath.Join(out, report.TrendHTML)); err != nil || strings.Contains(string(page), `class="moved"`) {
		t.Errorf("steady trend: page flags a cell or is missing (%v)", err)
	}
}

func TestTrendCmdBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "trend", dir}, "want at least two bundles"},
		{[]string{"matrix", "trend", dir, filepath.Join(dir, "missing")}, "summary.json"},
	} {
		_, stderr, code := torture(t, tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, stderr, exitError, tc.want)
		}
	}
}
