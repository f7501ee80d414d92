package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/report"
)

func TestBackendFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		nodes    int
		external []string
		bad      bool
	}{
		{[]string{"--nodes", "3"}, 3, nil, false},
		{[]string{"--nodes", "10.0.0.1:6379,10.0.0.2:6380"}, 2, []string{"10.0.0.1:6379", "10.0.0.2:6380"}, false},
		{[]string{"--nodes", "[::1]:6379"}, 1, []string{"[::1]:6379"}, false},
		{[]string{"--nodes", "redis.example"}, 0, nil, true},
		{[]string{"--nodes", "10.0.0.1:6379,"}, 0, nil, true},
	} {
		cfg := harness.Defaults() // as runCmd's flags start
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		addBackendFlags(fs, &cfg)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.bad {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !tc.bad && (cfg.Nodes != tc.nodes || !slices.Equal(cfg.External, tc.external) || cfg.Backend != "process") {
			t.Errorf("%q: nodes %d, external %q, backend %q", tc.args, cfg.Nodes, cfg.External, cfg.Backend)
		}
	}
	t.Setenv(passwordEnv, "from-env")
	cfg := harness.Defaults()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	addBackendFlags(fs, &cfg)
	if err := fs.Parse(nil); err != nil || cfg.Password != "from-env" {
		t.Errorf("password %q, %v; want it from $%s", cfg.Password, err, passwordEnv)
	}
}

func TestRedactArgs(t *testing.T) {
	got := redactArgs([]string{"--password", "s3cret", "--lock", "redlock", "-password=s3cret", "--passwords", "x"})
	want := []string{"--password", "REDACTED", "--lock", "redlock", "-password=REDACTED", "--passwords", "x"}
	if !slices.Equal(got, want) {
		t.Errorf("redactArgs = %q, want %q", got, want)
	}
}

// TestRunExternal: torture run against nodes and a toxiproxy server that
// the test starts as if on another machine; results.json records the
// backend and every node's version, and not the password.
func TestRunExternal(t *testing.T) {
	ext := testutil.External(t, 3)
	remote := ext.Cluster
	out := t.TempDir()
	_, stderr, code := torture(t, "run", "--backend", "external", "--nodes", strings.Join(ext.Addrs, ","),
		"--toxiproxy", ext.URL, "--password", remote.Password(), "--lock", "redlock", "--clients", "4",
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
	if cfg["backend"] != "external" || !slices.Equal(r.RedisVersions, remote.Versions()) {
		t.Errorf("results.json: backend %v, redis_versions %q; want external and %q", cfg["backend"], r.RedisVersions, remote.Versions())
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), remote.Password()) || !strings.Contains(r.Command, "REDACTED") {
		t.Errorf("results.json holds the password (command %q)", r.Command)
	}
}
