package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
)

// TestPublishCmd: publish wants two folders, refuses a folder that is not
// a matrix's output in one line with exit 2, and writes the bundle.
func TestPublishCmd(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "publish"}, "want MATRIXDIR and OUT"},
		{[]string{"matrix", "publish", dir, filepath.Join(dir, "out")}, "summary.json"},
	} {
		_, stderr, code := torture(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "runs.tar.xz")); err == nil {
		t.Error("a failed publish left a bundle")
	}
}

// TestPublishFindings: --findings rewrites the findings table of a page
// from the bundle just published, linking the bundle relative to the
// page, and leaves the rest of the page as it was.
func TestPublishFindings(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "matrix")
	m := report.Matrix{Seeds: []int64{1}, Duration: "8s", Cells: []report.Cell{
		{Name: "setnx/client-pause", Lock: "setnx", Matches: true, Runs: []report.CellRun{{Seed: 1, RunID: "r1", Dir: "runs/r1", Lease: checker.Valid, Resource: checker.Invalid}}},
		{Name: "setnx-get-set/none", Lock: "setnx-get-set", Matches: true, Runs: []report.CellRun{{Seed: 1, RunID: "r2", Dir: "runs/r2", Lease: checker.Invalid, Resource: checker.Invalid}}},
	}}
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMatrix(src, m); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "README.md")
	const before, after = "# x\n\nintro\n", "\nrest\n"
	if err := os.WriteFile(page, []byte(before+"<!-- begin findings -->\n<!-- end findings -->\n"+after), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(root, "results", "2026-12-02")
	if _, stderr, code := torture(t, "matrix", "publish", "--findings", page, src, bundle); code != exitValid {
		t.Fatalf("publish --findings: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		before + "<!-- begin findings: rendered by report.Findings from results/2026-12-02/summary.json",
		"| `client-pause` | – | setnx 1/1 | – |",
		"setnx-get-set/none (lease 1/1)", // a mutant: apart
		"<!-- end findings -->\n" + after,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
	// A page without the markers is refused, and left as it was.
	plain := filepath.Join(root, "plain.md")
	if err := os.WriteFile(plain, []byte("no table\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := torture(t, "matrix", "publish", "--findings", plain, src, filepath.Join(root, "results", "again"))
	if b, _ := os.ReadFile(plain); code != exitError || !strings.Contains(stderr, "findings") || string(b) != "no table\n" {
		t.Errorf("publish --findings on a page without markers: exit %d, %q; page %q", code, stderr, b)
	}
}
