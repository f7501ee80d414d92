package locks_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// fakeConfig is a Config for the fake client, which talks to no Redis.
func fakeConfig() locks.Config {
	return locks.Config{Addrs: []string{"127.0.0.1:1"}, Password: "s3cret-fake-password", TTL: time.Second}
}

// newFake starts a ProcessLock over the fake client in mode, closed when
// the test ends.
func newFake(tb testing.TB, mode string, opts ...locks.ProcessOption) *locks.ProcessLock {
	tb.Helper()
	opts = append([]locks.ProcessOption{locks.WithProcessEnv(fakeClientEnv + "=" + mode)}, opts...)
	l, err := locks.NewProcessLock("fake", []string{os.Args[0]}, fakeConfig(), opts...)
	if err != nil {
		tb.Fatalf("NewProcessLock(fake %s): %v", mode, err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return l
}

// waitGone polls until none of pids is alive, or fails the test after
// a deadline.
func waitGone(tb testing.TB, pids []int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
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
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL) // leave nothing running
			}
			tb.Fatalf("processes %v still alive", left)
		}
		time.Sleep(pollEvery)
	}
}

// TestProcessLockProtocol drives a well-behaved client: the lease's
// validity is counted from the moment the request was written (so it
// lies between the call's start and end plus the client's 500 ms), a
// claim with no deadline becomes UntilRelease, a second release is
// answered by another process from key and token alone (ErrNotHeld), and
// a ping round-trips.
func TestProcessLockProtocol(t *testing.T) {
	t.Parallel()
	l := newFake(t, "ok")
	if info := l.Info(); info.Name != "fake" || info.Language != "Go" {
		t.Errorf("Info() = %+v", info)
	}
	before := time.Now()
	lease, err := l.Acquire(t.Context(), "k")
	after := time.Now()
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	const v = 500 * time.Millisecond
	if lease.Key != "k" || lease.Token == "" || lease.Validity.Before(before.Add(v)) || lease.Validity.After(after.Add(v)) {
		t.Errorf("lease %+v: want key k, a token, validity in [%v, %v]", lease, before.Add(v), after.Add(v))
	}
	ext, err := l.Extend(t.Context(), lease)
	if err != nil || ext.Token != lease.Token || ext.Validity.Before(lease.Validity) {
		t.Errorf("extend: %+v, %v", ext, err)
	}
	if err := l.Release(t.Context(), ext); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := l.Release(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("second release: %v, want ErrNotHeld", err)
	}
	if _, err := l.Extend(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend after release: %v, want ErrNotHeld", err)
	}
	if rtt, err := l.Ping(t.Context()); err != nil || rtt <= 0 {
		t.Errorf("ping: %v, %v", rtt, err)
	}

	u := newFake(t, "until-release")
	lease, err = u.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if left := time.Until(lease.Validity); left < locks.UntilRelease-time.Hour {
		t.Errorf("until_release lease valid for %v, want about %v", left, locks.UntilRelease)
	}
}

// TestProcessLockVersions: what a client says it runs on is reported
// under the client's own keys: a hello that claims "go" and go-redis's
// module path gets "client:go" and "client:github.com/…", never the
// harness's keys.
func TestProcessLockVersions(t *testing.T) {
	t.Parallel()
	l := newFake(t, "claims-versions")
	want := map[string]string{
		"client": "fake", "client language": "Go", "client:libfake": "1.2",
		"client:go": "go0.0.1-client", "client:github.com/redis/go-redis/v9": "v0.0.1-client",
	}
	if got := l.Versions(); !maps.Equal(got, want) {
		t.Errorf("Versions() = %v\nwant %v", got, want)
	}
}

// TestProcessLockLost: a client's "lost" event, unprompted, gives the
// notice of the lease it names (Lease.Lost, with the client's error);
// events of other tokens, or of names the harness does not know, are
// ignored, and none is ever taken for a reply; a notice after the
// release is ignored.
func TestProcessLockLost(t *testing.T) {
	t.Parallel()
	l := newFake(t, "lost")
	a, err := l.Acquire(t.Context(), "a")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	b, err := l.Acquire(t.Context(), "b")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if a.Lost == nil || a.Told() || b.Told() {
		t.Fatalf("leases %+v, %+v: want a notice not given yet", a, b)
	}
	if _, err := l.Extend(t.Context(), a); !errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("extend: %v, want ErrNotHeld", err)
	}
	testutil.Until(t, 10*time.Second, "the notice of lease a", a.Told)
	if err := a.Lost.Err(); err == nil || err.Error() != "renewal refused" {
		t.Errorf("the notice says %v, want the client's error", err)
	}
	if b.Told() {
		t.Error("lease b was told of a's loss")
	}
	if err := l.Release(t.Context(), b); err != nil {
		t.Fatalf("release: %v", err)
	}
	if rtt, err := l.Ping(t.Context()); err != nil || rtt <= 0 {
		t.Fatalf("ping after the events: %v, %v", rtt, err)
	}
	if b.Told() {
		t.Error("a notice after the release was given")
	}
}

// TestProcessLockStop: StopLease stops the process that serves a lease
// (its state T) until cont continues it, once; a lease that is not held
// has no process to stop. StopProcess stops one of the processes by its
// pick; a call to a stopped process gets no answer, and its deadline
// kills it; Close kills and reaps a stopped process too.
func TestProcessLockStop(t *testing.T) {
	t.Parallel()
	l := newFake(t, "ok", locks.WithCallTimeout(300*time.Millisecond))
	if err := l.Warm(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	pid, cont, err := l.StopLease(lease.Token)
	if err != nil {
		t.Fatalf("StopLease: %v", err)
	}
	testutil.Until(t, 10*time.Second, "the process stopped", func() bool { return testutil.Stopped(pid) })
	if _, err := l.Acquire(t.Context(), "other"); err != nil {
		t.Errorf("another process serves while one is stopped: %v", err)
	}
	if err := cont(); err != nil {
		t.Fatalf("cont: %v", err)
	}
	testutil.Until(t, 10*time.Second, "the process continued", func() bool { return !testutil.Stopped(pid) })
	if err := cont(); err != nil {
		t.Errorf("a second cont: %v", err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Errorf("release after the stop: %v", err)
	}
	if _, _, err := l.StopLease(lease.Token); !errors.Is(err, locks.ErrNoProcess) {
		t.Errorf("StopLease of a released lease: %v, want ErrNoProcess", err)
	}

	// Stopped by pick, and asked: no answer; the deadline kills it.
	one := newFake(t, "ok", locks.WithCallTimeout(300*time.Millisecond)) // one process
	pid, token, _, err := one.StopProcess(-1)
	if err != nil || token != "" {
		t.Fatalf("StopProcess: %d, %q, %v; want the idle process", pid, token, err)
	}
	testutil.Until(t, 10*time.Second, "the picked process stopped", func() bool { return testutil.Stopped(pid) })
	if _, err := one.Ping(t.Context()); err == nil {
		t.Error("a stopped process answered a ping")
	}
	waitGone(t, []int{pid})

	// Close kills a stopped process.
	lease, err = l.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	pid, _, err = l.StopLease(lease.Token)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Until(t, 10*time.Second, "the process stopped", func() bool { return testutil.Stopped(pid) })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, []int{pid})
}

// TestProcessLockMisbehavingClient: a client that hangs, dies, writes a
// line that is not JSON or answers with another id gives an error that is
// neither ErrNotAcquired nor ErrNotHeld (the harness records it as an
// unknown outcome), its process is killed and reaped, and the lock goes
// on serving with a fresh process.
func TestProcessLockMisbehavingClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		want error // wrapped by the acquire's error; nil: any unknown
	}{
		{"hang-acquire", context.DeadlineExceeded},
		{"die-acquire", locks.ErrClientGone},
		{"garbage-acquire", locks.ErrProtocol},
		{"wrong-id-acquire", locks.ErrProtocol},
		{"long-acquire", locks.ErrProtocol},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			l := newFake(t, tc.mode)
			pids := l.Pids()
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			_, err := l.Acquire(ctx, "k")
			switch {
			case err == nil:
				t.Fatal("acquire succeeded")
			case errors.Is(err, locks.ErrNotAcquired), errors.Is(err, locks.ErrNotHeld):
				t.Errorf("acquire: %v: a definite outcome, want an unknown one", err)
			case !errors.Is(err, tc.want):
				t.Errorf("acquire: %v, want it to wrap %v", err, tc.want)
			}
			if tc.mode == "die-acquire" && !strings.Contains(err.Error(), "dying in acquire") {
				t.Errorf("acquire: %v, want the client's last words on stderr", err)
			}
			if tc.mode == "long-acquire" && !strings.Contains(err.Error(), "a reply longer than 1048576 bytes (1 MiB)") {
				t.Errorf("acquire: %v, want the reply's length named as the client's fault", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("acquire: %q has more than one line", err)
			}
			waitGone(t, pids)
			if _, err := l.Ping(t.Context()); err != nil {
				t.Errorf("ping after the client was lost: %v", err)
			}
		})
	}
}

// TestProcessLockValidityRange: a validity_ms from 0 to a century is a
// lease's; one below or beyond is the client's protocol error, the
// outcome unknown (the harness records it and goes on), said in one line;
// the lock goes on serving.
func TestProcessLockValidityRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		validity string
		refused  string // "" for accepted; else as the error writes it
	}{
		{"0", ""},
		{"987.5", ""},
		{"3153600000000", ""}, // a century
		{"3153600000001", "3.153600000001e+12"},
		{"1e300", "1e+300"},
		{"-1", "-1"},
		{"-1e300", "-1e+300"},
	} {
		t.Run(tc.validity, func(t *testing.T) {
			t.Parallel()
			l := newFake(t, "validity="+tc.validity)
			lease, err := l.Acquire(t.Context(), "k")
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("acquire: %v", err)
				}
				if _, err := l.Extend(t.Context(), lease); err != nil {
					t.Fatalf("extend: %v", err)
				}
				return
			}
			want := "locks: client broke the protocol: validity_ms " + tc.refused + " is out of range: a validity is 0 to 3153600000000 ms (a century; until_release for none)"
			if !errors.Is(err, locks.ErrProtocol) || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("acquire: %v\nwant one line ending %q", err, want)
			}
			if _, err := l.Ping(t.Context()); err != nil {
				t.Errorf("ping after the refused validity: %v", err)
			}
		})
	}
}

// TestProcessLockHello: a client that refuses the hello, exits before
// answering it, or cannot start, or one asked for fencing tokens it does
// not issue, fails NewProcessLock with a one-line reason.
func TestProcessLockHello(t *testing.T) {
	t.Parallel()
	fencing := fakeConfig()
	fencing.Fencing = true
	for _, tc := range []struct {
		name string
		argv []string
		mode string
		cfg  locks.Config
		want []string
	}{
		{"refuse", []string{os.Args[0]}, "refuse", fakeConfig(), []string{"refused the hello", "I refuse this configuration"}},
		{"exit", []string{os.Args[0]}, "exit-at-hello", fakeConfig(), []string{"exit status 3", "exiting at hello"}},
		{"no such command", []string{"/nonexistent/locktorture-client"}, "ok", fakeConfig(), []string{"no such file"}},
		{"fencing", []string{os.Args[0]}, "ok", fencing, []string{"issues no fencing tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := locks.NewProcessLock("fake", tc.argv, tc.cfg, locks.WithProcessEnv(fakeClientEnv+"="+tc.mode))
			if err == nil {
				l.Close()
				t.Fatal("NewProcessLock succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q has more than one line", err)
			}
		})
	}
}

// TestProcessLockSecrets: the password reaches the client in the hello
// only: not on its command line, not in its environment (where
// LOCKTORTURE_PASSWORD, set here, is removed), and /proc/<pid>/environ is
// readable by its owner alone anyway.
func TestProcessLockSecrets(t *testing.T) {
	t.Setenv("LOCKTORTURE_PASSWORD", "s3cret-env-password")
	l := newFake(t, "env")
	if got := l.Info().Name; got != "password-in-env=false" {
		t.Errorf("client reports %q, want password-in-env=false", got)
	}
	for _, pid := range l.Pids() {
		for _, f := range []string{"cmdline", "environ"} {
			path := fmt.Sprintf("/proc/%d/%s", pid, f)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, pw := range []string{fakeConfig().Password, "s3cret-env-password"} {
				if strings.Contains(string(b), pw) {
					t.Errorf("%s holds a password", path)
				}
			}
		}
		st, err := os.Stat(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatal(err)
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("/proc/%d/environ has mode %v: others can read it", pid, perm)
		}
	}
}

// TestProcessLockClose: Close kills and reaps every client process, idle
// or holding a lease, and the lock then refuses calls.
func TestProcessLockClose(t *testing.T) {
	t.Parallel()
	l, err := locks.NewProcessLock("fake", []string{os.Args[0]}, fakeConfig(), locks.WithProcessEnv(fakeClientEnv+"=ok"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Warm(t.Context(), 4); err != nil {
		t.Fatalf("warm: %v", err)
	}
	if _, err := l.Acquire(t.Context(), "k"); err != nil {
		t.Fatalf("acquire: %v", err)
	}
	pids := l.Pids()
	if len(pids) != 4 {
		t.Fatalf("%d processes after Warm(4) and one acquire, want 4", len(pids))
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, pid := range pids {
		if testutil.Running(pid) {
			t.Errorf("process %d alive after Close", pid)
		}
	}
	if _, err := l.Acquire(t.Context(), "k"); !errors.Is(err, locks.ErrClosed) {
		t.Errorf("acquire after Close: %v, want ErrClosed", err)
	}
}

// treePids are the pids of the processes the fake client in mode
// fork-tree started, from its hello.
func treePids(info locks.ClientInfo) ([]int, error) {
	var pids []int
	for _, name := range []string{"group", "setsid", "daemon"} {
		pid, err := strconv.Atoi(info.Versions[name])
		if err != nil {
			return nil, fmt.Errorf("fork-tree: %s pid %q", name, info.Versions[name])
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// TestProcessLockTreeEnds: Close ends every descendant of a client
// process, also those that left its process group: one in a session of
// its own that holds the client's stdout and stderr, and an orphaned
// daemon; none is left when Close returns.
func TestProcessLockTreeEnds(t *testing.T) {
	t.Parallel()
	l, err := locks.NewProcessLock("fake", []string{os.Args[0]}, fakeConfig(), locks.WithProcessEnv(fakeClientEnv+"=fork-tree"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treePids(l.Info())
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	pids := append(l.Pids(), tree...)
	for _, pid := range pids {
		if !testutil.Running(pid) {
			t.Fatalf("process %d not running before Close", pid)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, pid := range pids {
		if testutil.Running(pid) {
			t.Errorf("process %d (client and descendants %v) running after Close", pid, pids)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// harnessChild is the test binary as a stand-in for the harness: it
// starts three client processes (the fake client, in the mode its
// environment names), prints the pids of all its descendants (the
// supervisor, the clients and theirs) on one line and waits to be
// killed.
func harnessChild(mode string) {
	l, err := locks.NewProcessLock("fake", []string{os.Args[0]}, fakeConfig(), locks.WithProcessEnv(fakeClientEnv+"="+mode))
	if err == nil {
		err = l.Warm(context.Background(), 3)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pids", strings.Trim(fmt.Sprint(testutil.Descendants(os.Getpid())), "[]"))
	select {}
}

// TestAdapterSIGKILL: when the process that started the clients is killed
// with SIGKILL (no deferred Close runs), no client process is left, and
// no descendant of one, in its process group or not: the supervisor reads
// the end of its socket and kills them all.
func TestAdapterSIGKILL(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), harnessChildEnv+"=fork-tree")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	fields := strings.Fields(line)
	// The supervisor, three clients, three processes each.
	if len(fields) != 1+1+3+3*3 || fields[0] != "pids" {
		t.Fatalf("child said %q, want pids and 13 numbers", line)
	}
	var pids []int
	for _, f := range fields[1:] {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		if !testutil.Running(pid) {
			t.Fatalf("client %d not running before the kill", pid)
		}
		pids = append(pids, pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, pids)
}

// TestProcessLockEvidence: a client that says reports_nodes has its
// replies' per-node evidence reported to the call's Evidence, and one that
// does not reports nothing; evidence naming a node outside the run is a
// protocol error, the outcome unknown.
func TestProcessLockEvidence(t *testing.T) {
	t.Parallel()
	l := newFake(t, "nodes")
	if !l.ReportsNodes() {
		t.Fatal("a client that says reports_nodes: ReportsNodes false")
	}
	var lease locks.Lease
	got, err := traced(t.Context(), func(ctx context.Context) (err error) { lease, err = l.Acquire(ctx, "k"); return err })
	if err != nil {
		t.Fatal(err)
	}
	wantNodes(t, "acquire", got, locks.Nodes{Attempt: 1, Granted: []int{0}})
	got, err = traced(t.Context(), func(ctx context.Context) error { return l.Release(ctx, lease) })
	if err != nil {
		t.Fatal(err)
	}
	wantNodes(t, "release", got, locks.Nodes{Attempt: 1, Granted: []int{0}})
	got, err = traced(t.Context(), func(ctx context.Context) error { return l.Release(ctx, lease) })
	if !errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("second release: %v", err)
	}
	wantNodes(t, "second release", got, locks.Nodes{Attempt: 1, Refused: []int{0}})

	quiet := newFake(t, "ok")
	if quiet.ReportsNodes() {
		t.Error("a client that does not say reports_nodes: ReportsNodes true")
	}
	got, err = traced(t.Context(), func(ctx context.Context) error { _, err := quiet.Acquire(ctx, "k"); return err })
	if err != nil || got.Reported() {
		t.Errorf("quiet client: evidence %+v, %v", got, err)
	}

	bad := newFake(t, "bad-nodes")
	got, err = traced(t.Context(), func(ctx context.Context) error { _, err := bad.Acquire(ctx, "k"); return err })
	if !errors.Is(err, locks.ErrProtocol) || got.Reported() {
		t.Errorf("evidence of node 7 of 1: %v, evidence %+v; want ErrProtocol and none", err, got)
	}
}

// TestProcessLockClientEnv: Config.ClientEnv reaches the client
// processes' environment (the clock shim of a client-clock fault): here
// it is what makes the test binary a client that answers, and without it
// the binary runs as a test and never says hello.
func TestProcessLockClientEnv(t *testing.T) {
	t.Parallel()
	cfg := fakeConfig()
	cfg.ClientEnv = []string{fakeClientEnv + "=refuse"}
	l, err := locks.NewProcessLock("fake", []string{os.Args[0]}, cfg)
	if err == nil {
		l.Close()
		t.Fatal("NewProcessLock succeeded; want the refusal of the client that ClientEnv made")
	}
	if !strings.Contains(err.Error(), "I refuse this configuration") {
		t.Errorf("error %q: want the fake client's refusal (ClientEnv did not reach it)", err)
	}
}
