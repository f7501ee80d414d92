package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFolderPrivate: `torture run` creates its output folder (and the
// missing parents), the run folder and everything in it — history,
// schedule, results.json, report.html, the nodes' folders, configuration
// files and logs — with mode 0700 for a folder and 0600 for a file, and
// writes the nodes' password into no file but the nodes' own redis.conf.
func TestRunFolderPrivate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results", "runs")
	stdout, stderr, code := torture(t, "run", "--lock", "setnx", "--duration", "1s", "--clients", "2", "--seed", "5", "--out", out)
	if code != exitValid {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var conf string
	files := map[string]bool{}
	err := filepath.WalkDir(filepath.Dir(out), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		if !d.IsDir() {
			files[filepath.Base(path)] = true
			if filepath.Base(path) == "redis.conf" {
				conf = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"history.jsonl", "schedule.json", "results.json", "report.html", "redis.conf", "redis.log"} {
		if !files[f] {
			t.Errorf("no %s in the run folder", f)
		}
	}
	password := requirepass(t, conf)
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == "redis.conf" {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(password)) {
			t.Errorf("the nodes' password is in %s", path)
		}
		return nil
	})
}

// requirepass returns the password in a node's redis.conf.
func requirepass(tb testing.TB, conf string) string {
	tb.Helper()
	f, err := os.Open(conf)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for s := bufio.NewScanner(f); s.Scan(); {
		if v, ok := strings.CutPrefix(s.Text(), "requirepass "); ok && len(strings.Trim(v, `"`)) >= 16 {
			return strings.Trim(v, `"`)
		}
	}
	tb.Fatalf("no requirepass in %s", conf)
	return ""
}
