package clients_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// harnessChildEnv makes the test binary run the harness (TestMain) with
// the example client for two minutes, into the directory it names, as
// TestHarnessSIGKILL's victim.
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
		clients, nodes = testutil.Children(cmd.Process.Pid, "example_client.py"), testutil.Children(cmd.Process.Pid, "redis-server")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, pid := range append(clients, nodes...) {
			if testutil.Running(pid) {
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
