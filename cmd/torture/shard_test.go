package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/report"
)

// TestMatrixShards runs a two-cell matrix as two shards and merges them:
// each shard exits 0 and says the merge judges, the merge judges both
// cells, records the whole matrix's command, and refuses a second merge
// into the same folder and a merge with a shard missing.
func TestMatrixShards(t *testing.T) {
	out := t.TempDir()
	for _, sh := range []string{"1/2", "2/2"} {
		stdout, stderr, code := torture(t, "matrix", "--cells", "^(setnx/none|setnx-get-set/none)$", "--duration", "2s",
			"--shard", sh, "--out", out)
		if code != exitValid || !strings.Contains(stdout, "shard "+sh+" ran every run it was given") {
			t.Fatalf("shard %s: exit %d\nstdout:\n%s\nstderr:\n%s", sh, code, stdout, stderr)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-shard*of2"))
	if len(dirs) != 2 {
		t.Fatalf("shard folders: %v", dirs)
	}
	merged := filepath.Join(out, "merged")
	// A test binary carries no VCS stamp: its shards record no commit,
	// and the merge refuses them unless told one binary ran them all.
	_, stderr, code := torture(t, append([]string{"matrix", "merge", merged}, dirs...)...)
	if last := strings.TrimSpace(stderr); code != exitError || strings.Contains(last, "\n") || !strings.Contains(last, "records no commit") || !strings.Contains(last, "--allow-unknown-commit") {
		t.Fatalf("merge of shards without a commit: exit %d, stderr %q; want exit 2 and one line naming --allow-unknown-commit", code, stderr)
	}
	if _, err := os.Lstat(merged); !os.IsNotExist(err) {
		t.Fatalf("a refused merge created %s: %v", merged, err)
	}
	stdout, stderr, code := torture(t, append([]string{"matrix", "merge", "--allow-unknown-commit", merged}, dirs...)...)
	if code != exitValid || !strings.Contains(stderr, "warning: the shards record no commit") {
		t.Fatalf("merge --allow-unknown-commit: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "setnx/none ") || !strings.Contains(stdout, "setnx-get-set/none ") {
		t.Errorf("merge: stdout lacks a cell:\n%s", stdout)
	}
	m, err := report.ReadMatrix(merged)
	if err != nil {
		t.Fatal(err)
	}
	if want := "torture matrix --cells ^(setnx/none|setnx-get-set/none)$ --duration 2s --out " + out; m.Command != want || m.Shard != nil || m.Commit != report.UnknownCommit {
		t.Errorf("merged: command %q (want %q), shard %+v, commit %q", m.Command, want, m.Shard, m.Commit)
	}
	b, _ := json.Marshal(m)
	if strings.Contains(string(b), "shard") {
		t.Errorf("merged summary.json speaks of shards: %s", b)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"matrix", "merge", "--allow-unknown-commit", merged}, dirs...), "exists and is not empty"},
		{[]string{"matrix", "merge", "--allow-unknown-commit", filepath.Join(out, "other"), dirs[0]}, "shard 2 of 2 missing"},
		{append([]string{"matrix", "merge", "--allow-unknown-commit", filepath.Join(dirs[0], "merged")}, dirs...), "is inside the shard"},
		{[]string{"matrix", "merge", filepath.Join(out, "other")}, "want OUT and at least one shard directory"},
		{[]string{"matrix", "--shard", "0/4", "--list"}, `--shard "0/4": want i/n`},
		{[]string{"matrix", "--shard", "two", "--list"}, `--shard "two": want i/n`},
		{[]string{"matrix", "--seeds", "3..1", "--list"}, "not a range"},
		{[]string{"matrix", "--seeds", "-1..1", "--list"}, "holds 0"},
		{[]string{"matrix", "--seeds", "1,1", "--list"}, "seed 1 given twice"},
	} {
		_, stderr, code := torture(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if last := lines[len(lines)-1]; code != exitError || !strings.HasPrefix(last, "torture: ") || !strings.Contains(last, tc.want) {
			t.Errorf("torture %q: exit %d, last stderr line %q; want exit 2 and %q", tc.args, code, last, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "other")); !os.IsNotExist(err) {
		t.Errorf("a refused merge created its output: %v", err)
	}
}

func TestWithoutFlag(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"--seeds 1..3 --shard 2/4 --duration 8s", "--seeds 1..3 --duration 8s"},
		{"--shard=2/4 --quick", "--quick"},
		{"-shard 1/2", ""},
		{"--quick", "--quick"},
	} {
		if got := strings.Join(withoutFlag(strings.Fields(tc.in), "shard"), " "); got != tc.want {
			t.Errorf("withoutFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
