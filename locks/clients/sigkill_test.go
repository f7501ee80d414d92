package clients_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// harnessChildEnv makes the test binary run the harness (TestMain) with
// the lock named in harnessChildEnv_LOCK, three clients, for two minutes,
// into the directory it names, as TestHarnessSIGKILL's victim: what
// `torture run` does, in a process the test can kill.
const harnessChildEnv = "LOCKS_CLIENTS_TEST_HARNESS_CHILD"

func TestMain(m *testing.M) {
	// `client --lock NAME`: serve a Go lock as `torture client` does
	// (serveName).
	if len(os.Args) == 4 && os.Args[1] == "client" && os.Args[2] == "--lock" {
		if err := locks.Serve(context.Background(), os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if dir := os.Getenv(harnessChildEnv); dir != "" {
		lock := os.Getenv(harnessChildEnv + "_LOCK")
		_, err := harness.Run(context.Background(), harness.Config{Workload: harness.Workload{Lock: lock, Clients: 3, Duration: 2 * time.Minute, Seed: 1}, Output: harness.Output{Dir: dir}})
		fmt.Fprintln(os.Stderr, "harness child: run ended:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// forkedPids reads the pid file of hostile_client.py's fork mode: per
// client process, its pid and those of the three processes it forked.
func forkedPids(tb testing.TB, path string) (clients, forked []int) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue // being written
		}
		for i, s := range f {
			pid, err := strconv.Atoi(s)
			if err != nil {
				tb.Fatalf("pid file %s: %q", path, line)
			}
			if i == 0 {
				clients = append(clients, pid)
			} else {
				forked = append(forked, pid)
			}
		}
	}
	return clients, forked
}

// killRunning sends SIGKILL to those of pids that are running: what a
// failed test must not leave behind.
func killRunning(pids []int) {
	for _, pid := range pids {
		if testutil.Running(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// waitNoneRunning polls until none of pids is running, or fails the test
// after a deadline for a loaded machine, killing what is left.
func waitNoneRunning(tb testing.TB, what string, pids []int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []int
		for _, pid := range pids {
			if testutil.Running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			killRunning(left)
			tb.Fatalf("%s: processes %v of %v still running after 20s", what, left, pids)
		}
		time.Sleep(pollEvery)
	}
}

// TestHarnessSIGKILL: a harness run with client processes whose clients
// fork (one child stays in the client's process group, one calls setsid,
// one is an orphaned daemon), killed with SIGKILL (no deferred clean-up
// runs), leaves nothing behind: no client, no descendant of one, no
// redis-server, no process at all that the run started.
func TestHarnessSIGKILL(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), harnessChildEnv+"="+filepath.Join(t.TempDir(), "run"),
		harnessChildEnv+"_LOCK="+hostile(t, "fork", pidFile))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		clients, forked := forkedPids(t, pidFile)
		killRunning(append(clients, forked...)) // whatever the test found
	})
	var clients, forked, nodes []int
	deadline := time.Now().Add(60 * time.Second)
	for len(clients) < 3 || len(nodes) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s the harness child runs clients %v and nodes %v; stderr: %s", clients, nodes, stderr.String())
		}
		time.Sleep(pollEvery)
		clients, forked = forkedPids(t, pidFile)
		nodes = testutil.Children(cmd.Process.Pid, "redis-server")
	}
	all := testutil.Descendants(cmd.Process.Pid)
	t.Cleanup(func() { killRunning(all) })
	for _, pid := range append(clients, forked...) {
		if !slices.Contains(all, pid) {
			t.Fatalf("client or forked process %d is not below the harness (descendants %v)", pid, all)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitNoneRunning(t, "after SIGKILL of the harness", all)
}

// TestHarnessEndsClientTrees: when a harness run ends, no client process
// is left, nor any descendant of one, in its process group or not: none
// is running when Run returns.
func TestHarnessEndsClientTrees(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	_, err := harness.Run(t.Context(), harness.Config{
		Workload: harness.Workload{Lock: hostile(t, "fork", pidFile), Clients: 2, Duration: time.Second, Seed: 1},
		Output:   harness.Output{Dir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	clients, forked := forkedPids(t, pidFile)
	t.Cleanup(func() { killRunning(forked) })
	if len(clients) < 2 || len(forked) != 3*len(clients) {
		t.Fatalf("pid file: clients %v, forked %v; want at least 2 clients, 3 forked each", clients, forked)
	}
	var left []int
	for _, pid := range append(clients, forked...) {
		if testutil.Running(pid) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("processes %v (clients %v, forked %v) running after the run ended", left, clients, forked)
	}
}
