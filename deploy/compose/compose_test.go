package compose

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster/docker"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/report"
)

func TestWriteConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	pw := NewPassword()
	if err := WriteConfig(path, pw); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("redis.conf: %v, mode %v; want 0600", err, fi.Mode())
	}
	if got, err := ReadPassword(path); err != nil || got != pw {
		t.Fatalf("ReadPassword = %q, %v; want %q", got, err, pw)
	}
	for _, bad := range []string{"", "a b", `a"b`, "a\nrequirepass x", `a\b`, "pässword"} {
		if err := WriteConfig(path, bad); err == nil {
			t.Errorf("WriteConfig accepted the password %q", bad)
		}
	}
}

// TestComposeCluster builds the images, starts the compose cluster (five
// nodes and a toxiproxy server on a network of their own), runs RedLock
// on the five nodes under partitions and under latency through the
// external backend, as the README says (torture run --backend external,
// the password in $LOCKTORTURE_PASSWORD), and expects valid verdicts
// with faults in the history; a client pause runs. The nodes are
// containers of this machine, so the external backend drives them too:
// kills with delayed restarts and pauses (RedLock safe under both), clock
// jumps of a majority of a hold's nodes (any verdict: the table expects a
// violation), after which every container runs, unpaused, its clock
// offset back to 0. It then takes the cluster down and finds no
// container, network or volume of it left.
func TestComposeCluster(t *testing.T) {
	ctx := t.Context()
	if err := docker.Ping(ctx); err != nil {
		t.Skipf("the compose cluster is not tested: %v", err)
	}
	cli, err := FindCLI(ctx)
	if err != nil {
		t.Fatal(err) // an engine without a compose CLI: install one
	}
	t.Logf("compose CLI: %s", strings.Join(cli, " "))
	start := time.Now()
	testutil.DockerImage(t)
	if err := BuildToxiproxyImage(ctx, ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("images ready in %.1f s", time.Since(start).Seconds())
	tmp := t.TempDir()
	torture := filepath.Join(tmp, "torture")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", torture, "github.com/locktorture/locktorture/cmd/torture").CombinedOutput(); err != nil {
		t.Fatalf("go build torture: %v\n%s", err, out)
	}

	pw := NewPassword()
	c := Cluster{Dir: ".", Project: "locktorture-test-" + NewPassword()[:8], Config: filepath.Join(tmp, ConfigFile), CLI: cli}
	if err := WriteConfig(c.Config, pw); err != nil {
		t.Fatal(err)
	}
	down := false
	t.Cleanup(func() {
		if down {
			return
		}
		// t.Context is done by now.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Down(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	up := time.Now()
	for try := 0; ; try++ {
		// Another test may take the free subnet first: try another.
		if c.Net, err = FreeNet(ctx, rand.IntN(256)); err != nil {
			t.Fatal(err)
		}
		err = c.Up(ctx, pw)
		if err == nil || try == 2 || !strings.Contains(err.Error(), "overlap") {
			break
		}
		t.Logf("subnet %s.0/24 taken: %v", c.Net, err)
		if err := c.Down(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster %s up on %s.0/24 in %.1f s", c.Project, c.Net, time.Since(up).Seconds())

	run := func(tb testing.TB, args ...string) (string, int) {
		tb.Helper()
		full := append([]string{"run", "--backend", "external", "--nodes", strings.Join(c.Addrs(), ","), "--toxiproxy", c.ToxiproxyURL(),
			"--lock", "redlock", "--out", filepath.Join(tmp, "runs")}, args...)
		cmd := exec.CommandContext(ctx, torture, full...)
		cmd.Env = append(os.Environ(), "LOCKTORTURE_PASSWORD="+pw)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			tb.Fatalf("torture %s: %v", strings.Join(full, " "), err)
		}
		if strings.Contains(out.String(), pw) || strings.Contains(strings.Join(full, " "), pw) {
			tb.Errorf("the password is on the command line or in the output")
		}
		return out.String(), code
	}
	for _, tc := range []struct {
		kind  string
		flags []string
		// valid: both verdicts must be valid. A client's pause is the
		// harness's own to make, and a paused holder writing late is a
		// violation RedLock cannot prevent: any verdict will do there.
		valid bool
	}{
		{"partition", nil, true},
		{"latency", nil, true},
		// A TTL of 1 s, not 500 ms: on a loaded machine the calls
		// through the containers' bridge outlasted the shorter TTL's
		// per-call timeout and no acquire succeeded (a run that
		// decides nothing, exit 3). The pause stays 3–5 TTLs, so the
		// run lasts 10 s.
		{"client-pause", []string{"--keys", "1", "--ttl", "1s", "--duration", "10s"}, false},
		{"kill", []string{"--restart", "delayed"}, true},
		{"pause", nil, true},
		{"clock-majority", []string{"--nemesis-interval", "0s"}, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			args := []string{"--nemesis", tc.kind, "--nemesis-interval", "1s", "--duration", "6s", "--seed", "1"}
			if len(tc.flags) > 0 && tc.flags[0] == "--nemesis-interval" {
				args = []string{"--nemesis", tc.kind, "--seed", "1"} // the targeted kind's own workload
			} else {
				args = append(args, tc.flags...)
			}
			out, code := run(t, args...)
			switch {
			case tc.valid && code != 0:
				t.Fatalf("exit %d, want 0 (valid):\n%s", code, out)
			case code != 0 && code != 1:
				t.Fatalf("exit %d, want a verdict (0 or 1):\n%s", code, out)
			}
			dirs, _ := filepath.Glob(filepath.Join(tmp, "runs", "*"))
			var dir string
			for _, d := range dirs {
				if b, err := os.ReadFile(filepath.Join(d, "schedule.json")); err == nil && strings.Contains(string(b), `"`+tc.kind+`"`) {
					dir = d
				}
			}
			if dir == "" {
				t.Fatalf("no run folder with a %s schedule among %v", tc.kind, dirs)
			}
			r, err := report.ReadResults(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.valid && (r.Lease != checker.Valid || r.Resource != checker.Valid) {
				t.Errorf("lease %s, resource %s; want both valid", r.Lease, r.Resource)
			}
			if len(r.NodeVersions) != Nodes {
				t.Errorf("node versions %v, want one per node", r.NodeVersions)
			}
			if n := faults(t, filepath.Join(dir, "history.jsonl")); n == 0 {
				t.Errorf("no fault started in the history")
			}
			if px := proxies(t, c.ToxiproxyURL()); px != "{}" {
				t.Errorf("proxies left on the toxiproxy server: %s", px)
			}
		})
	}
	for i := range Nodes {
		name := fmt.Sprintf("%s_n%d_1", c.Project, i+1)
		st, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Running}} {{.State.Paused}}", name).Output()
		if err != nil {
			// docker compose v2 names containers with dashes.
			name = fmt.Sprintf("%s-n%d-1", c.Project, i+1)
			st, err = exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Running}} {{.State.Paused}}", name).Output()
		}
		if err != nil || strings.TrimSpace(string(st)) != "true false" {
			t.Errorf("node n%d's container after the runs: %q, %v; want running, not paused", i+1, st, err)
		}
		off, err := os.ReadFile(filepath.Join(tmp, "clock", fmt.Sprintf("n%d", i+1), "clock.offset"))
		if err != nil || !bytes.Equal(off, make([]byte, 8)) {
			t.Errorf("node n%d's clock offset after the runs: %x, %v; want 0", i+1, off, err)
		}
	}

	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	down = true
	left, err := c.Leftovers(ctx)
	if err != nil || len(left) > 0 {
		t.Fatalf("left after down: %v, %v", left, err)
	}
	t.Logf("whole test %.1f s", time.Since(start).Seconds())
}

// faults counts the fault-start events in a history.
func faults(tb testing.TB, path string) int {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		var e struct {
			F string `json:"f"`
		}
		if json.Unmarshal(s.Bytes(), &e) == nil && e.F == "fault-start" {
			n++
		}
	}
	return n
}

// proxies returns the toxiproxy server's list of proxies, as JSON.
func proxies(tb testing.TB, url string) string {
	tb.Helper()
	resp, err := http.Get(url + "/proxies")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}
