package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/report"
)

// TestNoPasswordFlag: the nodes' password never goes on a command line,
// which every local user can read: there is no flag for it.
func TestNoPasswordFlag(t *testing.T) {
	_, stderr, code := torture(t, "run", "--password", "s3cret", "--out", t.TempDir())
	if code != exitError || !strings.Contains(stderr, "flag provided but not defined: -password") {
		t.Errorf("--password: exit %d, %s", code, stderr)
	}
}

// TestRunExternal: torture run against nodes and a toxiproxy server that
// the test starts as if on another machine; results.json records the
// backend and every node's version, and not the password.
func TestRunExternal(t *testing.T) {
	ext := testutil.External(t, 3)
	remote := ext.Cluster
	out := t.TempDir()
	t.Setenv(passwordEnv, remote.Password())
	_, stderr, code := torture(t, "run", "--backend", "external", "--nodes", strings.Join(ext.Addrs, ","),
		"--toxiproxy", ext.URL, "--lock", "redlock", "--clients", "4",
		"--duration", "3s", "--ttl", "500ms", "--nemesis", "partition,latency", "--nemesis-interval", "500ms", "--out", out)
	if code == exitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dirs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("run directories %v, %v", dirs, err)
	}
	r, err := report.ReadResults(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := r.Config.(map[string]any)
	if cfg["backend"] != "external" || !slices.Equal(r.NodeVersions, remote.Versions()) {
		t.Errorf("results.json: backend %v, node_versions %q; want external and %q", cfg["backend"], r.NodeVersions, remote.Versions())
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), remote.Password()) || !strings.Contains(r.Command, "--backend external") {
		t.Errorf("results.json holds the password (command %q)", r.Command)
	}
}
