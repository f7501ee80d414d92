package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/report"
)

// maxTreeFile is the largest file the tree may hold: published archives
// travel apart (report.ManifestFile), and a clone stays light.
const maxTreeFile = 1 << 20

// TestTreeFilesSmall: no file git tracks is over 1 MB.
func TestTreeFilesSmall(t *testing.T) {
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		st, err := os.Lstat(filepath.Join(repoRoot, name))
		if err != nil {
			continue // deleted in the work tree
		}
		if st.Mode().IsRegular() && st.Size() > maxTreeFile {
			t.Errorf("%s: %.1f MB; no tracked file may be over 1 MB (a published archive travels apart, named in its bundle's %s)", name, float64(st.Size())/1e6, report.ManifestFile)
		}
	}
}

// TestPublishedBundles: every bundle of results/ with a manifest re-checks
// with the documented command: its archive fetched from its git source,
// its sha256 verified and every run of its summary found with the same
// verdicts.
func TestPublishedBundles(t *testing.T) {
	if out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "--is-shallow-repository").Output(); err != nil || strings.TrimSpace(string(out)) == "true" {
		t.Skip("not a whole git checkout: the archives' blobs are not here")
	}
	manifests, err := filepath.Glob(filepath.Join(repoRoot, "results", "*", report.ManifestFile))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no published bundle in results/: %v", err)
	}
	for _, m := range manifests {
		bundle := filepath.Dir(m)
		stdout, stderr, code := torture(t, "matrix", "fetch", "--keep=false", "--from", "git", bundle)
		if code != exitValid || !strings.Contains(stdout, "verified") {
			t.Errorf("torture matrix fetch %s: exit %d\n%s%s", bundle, code, stdout, stderr)
		}
	}
}

// TestFetchBadInput: a folder without a manifest, an unknown kind of
// source and a manifest whose archive leaves the bundle are one-line
// errors, exit 2.
func TestFetchBadInput(t *testing.T) {
	hostile := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostile, "summary.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostile, report.ManifestFile), []byte(`{"archives":[{"name":"../x","sha256":"00"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"matrix", "fetch"},
		{"matrix", "fetch", t.TempDir()},
		{"matrix", "fetch", "--from", "ftp", t.TempDir()},
		{"matrix", "fetch", hostile},
	} {
		_, stderr, code := torture(t, args...)
		if code != exitError || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("torture %v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
}
