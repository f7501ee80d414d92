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

// TestSecondSignalEnds: a second signal ends a run whose clients hold
// hour-long leases, for SIGINT then SIGTERM and the reverse: the first
// cancels the run, which would stop, check and clean up but waits on a
// hold; any later one ends torture at once (the default action). Nothing
// of the run is left (its nodes die with it), and the history it left
// checks.
func TestSecondSignalEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torture until it acquires")
	}
	t.Parallel()
	for _, sigs := range [][2]syscall.Signal{{syscall.SIGINT, syscall.SIGTERM}, {syscall.SIGTERM, syscall.SIGINT}} {
		v := startVictim(t, []string{"--lock", "setnx", "--ttl", "1h", "--hold", "1h", "--clients", "2"})
		testutil.Eventually(t, 60*time.Second, "a client holding the lock", func() error {
			v.look()
			if !v.historyHas(`"f":"acquire"`) || !strings.Contains(v.output(), " acquired / ") {
				return fmt.Errorf("torture says: %s", v.output())
			}
			return nil
		})
		v.look()
		if err := v.cmd.Process.Signal(sigs[0]); err != nil {
			t.Fatal(err)
		}
		// The first signal has been taken once torture stops catching
		// signals (not observable from here): the second is sent again
		// until torture ends.
		testutil.Eventually(t, 30*time.Second, fmt.Sprintf("torture ended after %v, then %v", sigs[0], sigs[1]), func() error {
			select {
			case <-v.ended:
				return nil
			default:
			}
			v.cmd.Process.Signal(sigs[1])
			return errors.New("still running")
		})
		v.leavesNoProcess(t)
		v.historyChecks(t)
	}
}
