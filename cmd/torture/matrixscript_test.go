package main

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMatrixScript runs scripts/matrix (make matrix) as a user would, on
// two cells and one short seed, in one job and in two shards side by
// side: each publishes a bundle with its runs and regenerates the README
// beside it from the bundle, with the commit and each cell's rate, and the
// findings table of the README at the root; a
// second publication on the same day goes to a folder of its own.
func TestMatrixScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small matrices")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "torture")
	// As make build does: ask for the VCS stamp, which a GOFLAGS of
	// -buildvcs=false would drop. In a linked git worktree Go finds no
	// repository and the binary has none: its summaries record the commit
	// as unknown, and the script merges its shards all the same (one
	// binary ran them all).
	if out, err := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	wantCommit := "an unknown commit"
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				wantCommit = "commit `" + s.Value + "`"
			}
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "matrix"))
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(tmp, "results")
	// A README with the findings table's markers, as the repository's.
	if err := os.WriteFile(filepath.Join(tmp, "README.md"), []byte("# x\n\n<!-- begin findings -->\n<!-- end findings -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobList := []string{"1", "2"}
	for i, jobs := range jobList {
		cmd := exec.CommandContext(ctx, script)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "BIN="+bin, "MATRIX_JOBS="+jobs, "MATRIX_CELLS=^(setnx/none|setnx-get-set/none)$",
			"MATRIX_SEEDS=1", "MATRIX_DURATION=2s", "MATRIX_OUT="+filepath.Join(tmp, "work"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("MATRIX_JOBS=%s: %v\n%s", jobs, err, out)
		}
		pub := filepath.Join(results, time.Now().UTC().Format(time.DateOnly))
		if i > 0 {
			pub += "-2"
		}
		for _, f := range []string{"summary.json", "summary.md", "index.html", "runs.tar.xz"} {
			if _, err := os.Stat(filepath.Join(pub, f)); err != nil {
				t.Errorf("MATRIX_JOBS=%s: %v\n%s", jobs, err, out)
			}
		}
		readme, err := os.ReadFile(filepath.Join(results, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"](" + filepath.Base(pub) + "/summary.md)", "- code: " + wantCommit, "| setnx-get-set/none | Go | none | lease violation, resource possible | 1/1 = 1.00", "| setnx/none | Go | none | safe, answers truthful | 0/1 = 0.00"} {
			if !strings.Contains(string(readme), want) {
				t.Errorf("MATRIX_JOBS=%s: README lacks %q:\n%s", jobs, want, readme)
			}
		}
		top, err := os.ReadFile(filepath.Join(tmp, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"from results/" + filepath.Base(pub) + "/summary.json", "No lock showed a violation, on any run, in the only row of the table: `none`.", "setnx-get-set/none (lease 1/1)"} {
			if !strings.Contains(string(top), want) {
				t.Errorf("MATRIX_JOBS=%s: README.md's findings lack %q:\n%s", jobs, want, top)
			}
		}
	}
}
