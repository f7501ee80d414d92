package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/cluster/docker"
	"github.com/locktorture/locktorture/report"
)

func torture(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"run", "--lock", "nope"},
		{"run", "--no-such-flag"},
		{"run", "--clients", "many"},
		{"run", "--lock", "setnx", "--nodes", "3"},
		{"run", "--duration", "0s"},
		{"run", "extra-arg"},
		{"run", "--lock", "exec:"},
		{"run", "--lock", "exec:python3 'unterminated"},
		{"run", "--lock", "exec:/nonexistent/client", "--out", t.TempDir()},
		{"check"},
		{"check", "/does/not/exist"},
		{"explain"},
		{"explain", "/does/not/exist"},
		{"explain", "--limit", "0", "x"},
		{"shrink"},
		{"shrink", "/does/not/exist"},
		{"shrink", "--tries", "0", "x"},
	} {
		_, stderr, code := torture(t, args...)
		if code != exitError {
			t.Errorf("torture %q: exit %d, want %d", args, code, exitError)
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "torture: ") {
			t.Errorf("torture %q: last stderr line %q is not a one-line error", args, last)
		}
	}
	if _, _, code := torture(t, "run", "-h"); code != exitValid {
		t.Errorf("run -h: exit %d", code)
	}
}

// TestRunAndCheck: a fault-free setnx run exits 0, the check-then-act
// mutant exits 1, and `torture check` on each run directory gives the
// same verdict and exit status.
func TestRunAndCheck(t *testing.T) {
	for _, tc := range []struct {
		lock string
		want int
	}{
		{"setnx", exitValid},
		{"setnx-get-set", exitViolation},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			out := t.TempDir()
			stdout, stderr, code := torture(t, "run", "--lock", tc.lock, "--duration", "2s", "--keys", "1", "--seed", "2", "--out", out)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			dirs, err := os.ReadDir(out)
			if err != nil || len(dirs) != 1 {
				t.Fatalf("run directories: %v, %v", dirs, err)
			}
			dir := filepath.Join(out, dirs[0].Name())
			for _, f := range []string{"history.jsonl", "results.json", "report.html"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Fatalf("missing %s: %v", f, err)
				}
			}
			r, err := report.ReadResults(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.Seed != 2 || !strings.HasPrefix(r.Server, "redis ") || r.Versions["go"] == "" {
				t.Fatalf("results.json lacks seed or versions: seed %d server %q versions %v", r.Seed, r.Server, r.Versions)
			}
			checkOut, _, checkCode := torture(t, "check", dir)
			if checkCode != code {
				t.Fatalf("check exit %d, run exit %d\n%s", checkCode, code, checkOut)
			}
			if !strings.Contains(checkOut, "lease safety:    "+string(r.Lease)) {
				t.Fatalf("check printed a different lease verdict than results.json (%s):\n%s", r.Lease, checkOut)
			}
		})
	}
}

// TestCheckHandWritten: a history written by hand, with two holds of one
// key overlapping, is reported invalid; the same history with the holds
// apart is valid.
func TestCheckHandWritten(t *testing.T) {
	// Client 1 acquires at t1 and runs its section 10 later.
	history := func(t1 int) string {
		return fmt.Sprintf(`{"type":"invoke","f":"acquire","process":0,"time":100,"key":"k"}
{"type":"ok","f":"acquire","process":0,"time":200,"key":"k","token":"a","valid_until":10000}
{"type":"invoke","f":"section","process":0,"time":210,"key":"k","token":"a"}
{"type":"ok","f":"section","process":0,"time":250,"key":"k","token":"a","read":0,"wrote":1}
{"type":"invoke","f":"acquire","process":1,"time":%d,"key":"k"}
{"type":"ok","f":"acquire","process":1,"time":%d,"key":"k","token":"b","valid_until":10000}
{"type":"invoke","f":"section","process":1,"time":%d,"key":"k","token":"b"}
{"type":"ok","f":"section","process":1,"time":%d,"key":"k","token":"b","read":1,"wrote":2}
{"type":"invoke","f":"release","process":0,"time":500,"key":"k","token":"a"}
{"type":"ok","f":"release","process":0,"time":600,"key":"k","token":"a"}
`, t1-100, t1, t1+10, t1+20)
	}
	overlap, apart := history(400), history(800)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       int
	}{{"overlap", overlap, exitViolation}, {"apart", apart, exitValid}} {
		path := filepath.Join(dir, tc.name+".jsonl")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := torture(t, "check", path)
		if code != tc.want {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.want, out, stderr)
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"type\":\"ok\",\"f\":\"release\",\"process\":0,\"time\":1,\"key\":\"k\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := torture(t, "check", bad); code != exitError || !strings.Contains(stderr, "torture: ") {
		t.Errorf("malformed history: exit %d, stderr %q", code, stderr)
	}
}

func TestExitCode(t *testing.T) {
	var b bytes.Buffer
	for err, want := range map[error]int{
		nil:                exitValid,
		errViolation:       exitViolation,
		errUnknown:         exitUnknown,
		errors.New("boom"): exitError,
		context.Canceled:   exitError,
	} {
		if got := exitCode(err, &b); got != want {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestRelativeOut: runs started from another working directory, with a
// relative --out and with the default one, on every backend that runs
// its own nodes: every path that reaches redis-server, a sentinel or the
// Docker engine must still name the run's folder (a relative dir once
// killed every node at start-up).
func TestRelativeOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"process default out", []string{"--lock", "redlock", "--nodes", "3", "--nemesis", "clock", "--nemesis-interval", "500ms"}},
		{"process relative out", []string{"--lock", "setnx", "--out", "rel/out"}},
		{"failover relative out", []string{"--lock", "setnx", "--topology", "failover", "--out", "rel"}},
		{"docker relative out", []string{"--lock", "redlock", "--nodes", "3", "--backend", "docker", "--out", "rel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if slices.Contains(tc.args, "docker") {
				if err := docker.Ping(t.Context()); errors.Is(err, cluster.ErrNoDocker) {
					t.Skipf("docker backend not tested: %v", err)
				}
			}
			t.Chdir(t.TempDir())
			args := append([]string{"run", "--duration", "2s", "--clients", "4"}, tc.args...)
			stdout, stderr, code := torture(t, args...)
			// A run that could not start its nodes exits 2; redlock under
			// clock faults may well find a violation (exit 1), which is a
			// run that worked.
			if code == exitError || (code != exitValid && !slices.Contains(tc.args, "clock")) {
				t.Fatalf("torture %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
			}
			out := "results/runs"
			if i := slices.Index(tc.args, "--out"); i >= 0 {
				out = tc.args[i+1]
			}
			hist, err := filepath.Glob(filepath.Join(out, "*", "history.jsonl"))
			if err != nil || len(hist) != 1 {
				t.Fatalf("histories under %s: %v, %v", out, hist, err)
			}
		})
	}
}

// TestMissingRedisServer: without redis-server on the PATH, run and
// matrix say so in one line and exit 2, before they create anything.
func TestMissingRedisServer(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PATH", t.TempDir())
	for _, args := range [][]string{
		{"run", "--lock", "redlock"},
		{"run", "--lock", "setnx", "--topology", "failover", "--nemesis", "failover"},
		{"matrix", "--quick"},
	} {
		stdout, stderr, code := torture(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitError || len(lines) != 1 || !strings.Contains(lines[0], "redis-server is not on the PATH") || !strings.Contains(lines[0], "scripts/deps") {
			t.Errorf("torture %q: exit %d, stderr %q, stdout %q; want one line naming redis-server and how to install it", args, code, stderr, stdout)
		}
	}
	if entries, err := os.ReadDir("."); err != nil || len(entries) != 0 {
		t.Errorf("the working directory holds %v (%v); want nothing created", entries, err)
	}
}

// TestPathName: a registered lock name is its own path element; an exec:
// name, whatever its characters, becomes one safe element, told apart
// from another command's by its hash.
func TestPathName(t *testing.T) {
	for _, lock := range []string{"setnx", "redis-py-lock", "redlock-no-elapsed"} {
		if got := pathName(lock); got != lock {
			t.Errorf("pathName(%q) = %q", lock, got)
		}
	}
	seen := map[string]string{}
	for _, lock := range []string{
		"exec:python3 locks/clients/example/example_client.py",
		"exec:python3 locks/clients/example/example_client.py --x",
		"exec:'/usr/bin/python3' '../../a b/c.py'",
		"exec:../../../etc/passwd",
		"exec:" + strings.Repeat("x", 300),
		"..",
		"",
	} {
		got := pathName(lock)
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\ '\"") || len(got) > 60 {
			t.Errorf("pathName(%q) = %q: not one safe path element", lock, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("pathName(%q) = pathName(%q) = %q", lock, other, got)
		}
		seen[got] = lock
	}
}
