package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
)

// asTortureEnv makes the test binary torture itself (TestMain): the
// victim of TestClientStopSIGKILL.
const asTortureEnv = "LOCKTORTURE_TEST_AS_TORTURE"

// TestMain makes the test binary torture when a run starts it as a client
// process (`client --lock NAME`: locks.ClientCommand runs this executable,
// as it runs torture) or when asTortureEnv asks; it runs the tests
// otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(asTortureEnv) != "" || (len(os.Args) > 1 && os.Args[1] == "client") {
		main()
	}
	os.Exit(m.Run())
}

// TestClientCommand: `torture client` needs a registered Go lock, and
// says so in one line.
func TestClientCommand(t *testing.T) {
	for _, args := range [][]string{
		{"client"},
		{"client", "--lock", "nope"},
		{"client", "--lock", "redis-py-lock"},
		{"client", "--lock", "setnx", "extra"},
	} {
		_, stderr, code := torture(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitError || !strings.HasPrefix(lines[len(lines)-1], "torture: client: ") {
			t.Errorf("torture %q: exit %d, stderr %q; want %d and one line", args, code, stderr, exitError)
		}
	}
}

// TestClientStopSIGKILL: torture killed with SIGKILL while a client-stop
// holds a client process stopped leaves no process behind: the stopped
// client, the others and the nodes are all killed.
func TestClientStopSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torture until a client is stopped")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "run", "--lock", "setnx-watchdog", "--client-process", "--nemesis", "client-stop",
		"--clients", "3", "--duration", "2m", "--nemesis-interval", "1s", "--out", filepath.Join(t.TempDir(), "runs"))
	cmd.Env = append(os.Environ(), asTortureEnv+"=1")
	errPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var clients, nodes []int
	stopped := 0
	testutil.Eventually(t, 90*time.Second, "a client process stopped by client-stop", func() error {
		// The clients are started by the client supervisor, below torture.
		clients, nodes = testutil.DescendantsMatching(cmd.Process.Pid, "client\x00--lock"), testutil.Children(cmd.Process.Pid, "redis-server")
		for _, pid := range clients {
			if testutil.Stopped(pid) {
				stopped = pid
				return nil
			}
		}
		said, _ := os.ReadFile(errPath)
		return fmt.Errorf("none stopped yet among %d clients (%d nodes); torture says: %s", len(clients), len(nodes), said)
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	testutil.Eventually(t, 20*time.Second, "every process of the run gone", func() error {
		var left []int
		for _, pid := range append(clients, nodes...) {
			if testutil.Running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %v (the stopped client was %d)", left, stopped)
		}
		return nil
	})
}

// TestClusterSIGKILL: torture killed with SIGKILL during a run on a
// Redis Cluster leaves none of its six redis-server processes behind.
func TestClusterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torture on a Redis Cluster")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "run", "--lock", "setnx", "--topology", "cluster", "--duration", "2m", "--out", filepath.Join(t.TempDir(), "runs"))
	cmd.Env = append(os.Environ(), asTortureEnv+"=1")
	outPath := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var nodes []int
	testutil.Eventually(t, 60*time.Second, "the six nodes of the cluster, its clients acquiring", func() error {
		nodes = testutil.Children(cmd.Process.Pid, "redis-server")
		said, _ := os.ReadFile(outPath)
		if len(nodes) < 6 || !strings.Contains(string(said), " events ") {
			return fmt.Errorf("%d nodes; torture says: %s", len(nodes), said)
		}
		return nil
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	testutil.Eventually(t, 20*time.Second, "every node gone", func() error {
		var left []int
		for _, pid := range nodes {
			if testutil.Running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
}

// TestSecondSignalEnds: SIGTERM, sent until torture ends, ends a run
// whose clients hold hour-long leases: the first cancels the run, which
// stops, checks and cleans up; any later one ends torture at once (the
// default action), whatever the run still waits on.
func TestSecondSignalEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torture until it acquires")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "run", "--lock", "setnx", "--ttl", "1h", "--hold", "1h", "--clients", "2", "--duration", "2m", "--out", filepath.Join(t.TempDir(), "runs"))
	cmd.Env = append(os.Environ(), asTortureEnv+"=1")
	outPath := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testutil.Eventually(t, 60*time.Second, "a client holding the lock", func() error {
		said, _ := os.ReadFile(outPath)
		if !strings.Contains(string(said), " acquired / ") {
			return fmt.Errorf("torture says: %s", said)
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The first signal has been taken once the run says it was
	// interrupted, or has ended by itself; a second then ends it.
	ended := false
	testutil.Eventually(t, 30*time.Second, "torture ended after a second SIGTERM", func() error {
		select {
		case <-done:
			ended = true
			return nil
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		return errors.New("still running")
	})
	if !ended {
		t.Fatal("torture did not end")
	}
}
