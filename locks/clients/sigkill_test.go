package clients_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
)

// harnessChildEnv makes the test binary run the harness (TestMain) with
// the example client for two minutes, into the directory it names, as
// TestHarnessSIGKILL's victim.
const harnessChildEnv = "LOCKS_CLIENTS_TEST_HARNESS_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(harnessChildEnv); dir != "" {
		lock := os.Getenv(harnessChildEnv + "_LOCK")
		_, err := harness.Run(context.Background(), harness.Config{Workload: harness.Workload{Lock: lock, Clients: 3, Duration: 2 * time.Minute, Seed: 1}, Output: harness.Output{Dir: dir}})
		fmt.Fprintln(os.Stderr, "harness child: run ended:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// children returns the pids of the processes whose parent is ppid and
// whose command line contains match.
func children(ppid int, match string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, …
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), match) {
			out = append(out, pid)
		}
	}
	return out
}

// running reports whether pid is a process that is neither gone nor a
// zombie (a dead process its new parent has not reaped yet).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestHarnessSIGKILL: a harness run with client processes, killed with
// SIGKILL (no deferred clean-up runs), leaves no client process and no
// redis-server behind.
func TestHarnessSIGKILL(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), harnessChildEnv+"="+filepath.Join(t.TempDir(), "run"),
		harnessChildEnv+"_LOCK="+execName(t, "example/example_client.py"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var clients, nodes []int
	deadline := time.Now().Add(60 * time.Second)
	for len(clients) < 3 || len(nodes) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s the harness child runs clients %v and nodes %v; stderr: %s", clients, nodes, stderr.String())
		}
		time.Sleep(pollEvery)
		clients, nodes = children(cmd.Process.Pid, "example_client.py"), children(cmd.Process.Pid, "redis-server")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, pid := range append(clients, nodes...) {
			if running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v (clients %v, nodes %v) still running 10s after the harness was killed", left, clients, nodes)
		}
		time.Sleep(pollEvery)
	}
}
