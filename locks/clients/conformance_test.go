package clients_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// pollEvery is the interval between two looks while a test waits for a
// condition with a deadline.
const pollEvery = 20 * time.Millisecond

// client is one client under test: the lock name that runs it and the
// nodes it uses.
type client struct {
	name  string
	label string // the subtests' name of an exec: client
	nodes int
	// untilRelease: the client claims no validity (redis-py's Lock).
	untilRelease bool
}

// execName is the lock name that runs script (relative to this folder)
// with a python3 found on the PATH: the example and the test clients
// need only Python's standard library.
func execName(tb testing.TB, script string) string {
	tb.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		tb.Fatalf("the example client needs python3: %v", err)
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		tb.Fatal(err)
	}
	return "exec:'" + py + "' '" + abs + "'"
}

// clientsUnderTest are the clients every conformance test runs over.
func clientsUnderTest(tb testing.TB) []client {
	return []client{
		{name: execName(tb, "example/example_client.py"), label: "example", nodes: 1},
		{name: "redis-py-lock", nodes: 1, untilRelease: true},
		{name: "redlock-py", nodes: 3},
		// Go locks served in client processes of their own (locks.Serve,
		// as `torture client --lock NAME` serves them; TestMain).
		{name: serveName("setnx"), label: "go-setnx", nodes: 1},
		{name: serveName("redlock"), label: "go-redlock", nodes: 3},
	}
}

// serveName is the lock name that runs this test binary as the client
// process serving the registered lock (TestMain).
func serveName(lock string) string {
	return "exec:'" + os.Args[0] + "' client --lock " + lock
}

// short names a client for subtests.
func (c client) short() string {
	if c.label != "" {
		return c.label
	}
	return c.name
}

// startCluster starts n real redis-server nodes, stopped when the test
// ends.
func startCluster(tb testing.TB, n int) *cluster.Cluster {
	tb.Helper()
	return testutil.Cluster(tb, cluster.Spec{Nodes: n})
}

// newLock builds the client's lock on the first nodes of c, closed when
// the test ends. The per-node timeout is generous for a loaded machine.
func newLock(tb testing.TB, cl client, c *cluster.Cluster, ttl time.Duration) locks.Lock {
	tb.Helper()
	l, err := locks.New(cl.name, locks.Config{
		Addrs: c.Addrs()[:cl.nodes], Password: c.Password(), TTL: ttl,
		Timeout: 500 * time.Millisecond, Tries: 2, RetryDelay: 20 * time.Millisecond, Seed: 1,
	})
	if err != nil {
		tb.Fatalf("locks.New(%s): %v", cl.name, err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("close %s: %v", cl.name, err)
		}
	})
	return l
}

// holders returns the nodes among the first n of c on which key holds
// token.
func holders(tb testing.TB, c *cluster.Cluster, n int, key, token string) []int {
	tb.Helper()
	var on []int
	for i := range n {
		v, err := c.Node(i).Client().Get(tb.Context(), key).Result()
		if err == nil && v == token {
			on = append(on, i)
		}
	}
	return on
}

// TestConformance is what every client must do against real Redis: the
// lease's lifecycle (acquire sets the token with the TTL on a quorum of
// nodes, a second client is refused in time, extend resets the TTL,
// release deletes the token, a second release and an extend after it are
// "not held"), expiry (another client acquires after the TTL, and the
// stale lease can neither release nor extend), and a node that is down
// (an answer in time, then service again once it is back).
func TestConformance(t *testing.T) {
	t.Parallel()
	shared := startCluster(t, 3)
	for _, cl := range clientsUnderTest(t) {
		t.Run(cl.short(), func(t *testing.T) {
			t.Parallel()
			t.Run("lifecycle", func(t *testing.T) {
				t.Parallel()
				testLifecycle(t, cl, shared)
			})
			t.Run("expiry", func(t *testing.T) {
				t.Parallel()
				testExpiry(t, cl, shared)
			})
			t.Run("nodes-down", func(t *testing.T) {
				t.Parallel()
				testNodesDown(t, cl)
			})
		})
	}
}

func testLifecycle(t *testing.T, cl client, c *cluster.Cluster) {
	const ttl = 10 * time.Second
	a, b := newLock(t, cl, c, ttl), newLock(t, cl, c, ttl)
	key := t.Name()
	start := time.Now()
	lease, err := a.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	switch left := time.Until(lease.Validity); {
	case lease.Key != key || lease.Token == "":
		t.Errorf("lease %+v", lease)
	case cl.untilRelease && left < locks.UntilRelease-time.Hour:
		t.Errorf("validity %v, want until release", left)
	case !cl.untilRelease && (left <= 0 || lease.Validity.After(start.Add(ttl))):
		t.Errorf("validity %v from now, ending %v after the call began; want within the TTL", left, lease.Validity.Sub(start))
	}
	quorum := cl.nodes/2 + 1
	on := holders(t, c, cl.nodes, key, lease.Token)
	if len(on) < quorum {
		t.Fatalf("the token is on nodes %v, fewer than %d: the client did not set it", on, quorum)
	}
	for _, i := range on {
		if pttl, err := c.Node(i).Client().PTTL(t.Context(), key).Result(); err != nil || pttl <= 0 || pttl > ttl {
			t.Errorf("node %d: PTTL %v, %v; want in (0, %v]", i, pttl, err, ttl)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	_, err = b.Acquire(ctx, key)
	cancel()
	if !errors.Is(err, locks.ErrNotAcquired) {
		t.Errorf("second acquire while held: %v, want ErrNotAcquired in time", err)
	}

	// Let some of the TTL run, so that an extend that resets it shows.
	c.Node(on[0]).Client().PExpire(t.Context(), key, ttl/2)
	ext, err := a.Extend(t.Context(), lease)
	if err != nil {
		t.Fatalf("extend: %v", err)
	}
	if ext.Token != lease.Token || ext.Validity.Before(lease.Validity) {
		t.Errorf("extend: %+v after %+v", ext, lease)
	}
	if pttl, err := c.Node(on[0]).Client().PTTL(t.Context(), key).Result(); err != nil || pttl <= ttl/2 {
		t.Errorf("node %d: PTTL %v after extend, %v; want above %v", on[0], pttl, err, ttl/2)
	}

	if err := a.Release(t.Context(), ext); err != nil {
		t.Fatalf("release: %v", err)
	}
	if on := holders(t, c, cl.nodes, key, lease.Token); len(on) > 0 {
		t.Errorf("nodes %v still hold the token after release", on)
	}
	if err := a.Release(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("second release: %v, want ErrNotHeld", err)
	}
	if _, err := a.Extend(t.Context(), ext); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend after release: %v, want ErrNotHeld", err)
	}
	again, err := b.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if again.Token == lease.Token {
		t.Errorf("two leases with the token %q", again.Token)
	}
	if err := b.Release(t.Context(), again); err != nil {
		t.Errorf("release: %v", err)
	}
}

func testExpiry(t *testing.T, cl client, c *cluster.Cluster) {
	a, b := newLock(t, cl, c, 300*time.Millisecond), newLock(t, cl, c, 10*time.Second)
	key := t.Name()
	stale, err := a.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var fresh locks.Lease
	for {
		fresh, err = b.Acquire(t.Context(), key)
		if err == nil {
			break
		}
		if !errors.Is(err, locks.ErrNotAcquired) || time.Now().After(deadline) {
			t.Fatalf("acquire after the TTL: %v", err)
		}
		time.Sleep(pollEvery)
	}
	if now := time.Now(); !cl.untilRelease && stale.Valid(now) {
		t.Errorf("a second client acquired %v before the first lease's validity ended", stale.Validity.Sub(now))
	}
	if err := a.Release(t.Context(), stale); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("release of a stale lease: %v, want ErrNotHeld", err)
	}
	if _, err := a.Extend(t.Context(), stale); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("extend of a stale lease: %v, want ErrNotHeld", err)
	}
	if on := holders(t, c, cl.nodes, key, fresh.Token); len(on) < cl.nodes/2+1 {
		t.Errorf("the new holder's token is on nodes %v only", on)
	}
	if err := b.Release(t.Context(), fresh); err != nil {
		t.Errorf("release by the new holder: %v", err)
	}
}

// testNodesDown: with every node of the client killed, an acquire is
// answered in time (unknown, or not acquired for a quorum lock) by the
// client itself, not by a killed or broken process; once the nodes are
// back, the client acquires again.
func testNodesDown(t *testing.T, cl client) {
	c := startCluster(t, cl.nodes)
	l := newLock(t, cl, c, time.Second)
	key := t.Name()
	for i := range cl.nodes {
		if err := c.Node(i).Kill(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, err := l.Acquire(ctx, key)
	cancel()
	switch {
	case err == nil:
		t.Fatal("acquire with every node down succeeded")
	case errors.Is(err, locks.ErrProtocol), errors.Is(err, locks.ErrClientGone), errors.Is(err, context.DeadlineExceeded):
		t.Errorf("acquire with every node down: %v; want the client's own answer in time", err)
	}
	for i := range cl.nodes {
		if err := c.Node(i).Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		lease, err := l.Acquire(t.Context(), key)
		if err == nil {
			if err := l.Release(t.Context(), lease); err != nil {
				t.Errorf("release: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no acquire within 10s of the nodes' restart: %v", err)
		}
		time.Sleep(pollEvery)
	}
}

// runAndCheck runs the harness for d with the lock name on nodes nodes
// and checks the history.
func runAndCheck(t *testing.T, cfg harness.Config) (checker.Result, []history.Event) {
	t.Helper()
	cfg.Seed, cfg.Dir = 1, t.TempDir()
	sum, err := harness.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("harness run of %s: %v", cfg.Lock, err)
	}
	events, err := history.ReadFile(sum.HistoryPath)
	if err != nil {
		t.Fatal(err)
	}
	res, err := checker.Check(events, checker.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

// TestHarnessRun: each client, driven by the harness's concurrent clients
// for a few seconds without faults, keeps mutual exclusion (lease and
// resource valid) and acquires.
func TestHarnessRun(t *testing.T) {
	t.Parallel()
	for _, cl := range clientsUnderTest(t) {
		t.Run(cl.short(), func(t *testing.T) {
			t.Parallel()
			res, _ := runAndCheck(t, harness.Config{Workload: harness.Workload{Lock: cl.name, Clients: 6, Keys: 2, Duration: 3 * time.Second}, Cluster: harness.Cluster{Nodes: cl.nodes}})
			if res.Lease != checker.Valid || res.Resource != checker.Valid {
				t.Errorf("lease %s, resource %s", res.Lease, res.Resource)
			}
			if res.Stats.AcquireOK == 0 {
				t.Error("no acquire succeeded")
			}
		})
	}
}

// TestLiarCaught: a client that answers every other acquire with ok
// without asking Redis is found lease-invalid by a real run and the
// checker.
func TestLiarCaught(t *testing.T) {
	t.Parallel()
	res, _ := runAndCheck(t, harness.Config{Workload: harness.Workload{Lock: execName(t, "testdata/liar_client.py"), Clients: 6, Keys: 1, Duration: 3 * time.Second}})
	if res.Lease != checker.Invalid {
		t.Errorf("lease %s with a lying client, want invalid", res.Lease)
	}
}

// TestFlakyClient: client processes that exit or hang in the middle of a
// run give unknown outcomes (info events with the reason), the run goes
// on with fresh processes, and the history checks valid.
func TestFlakyClient(t *testing.T) {
	t.Parallel()
	res, events := runAndCheck(t, harness.Config{Workload: harness.Workload{Lock: execName(t, "testdata/flaky_client.py"), Clients: 4, Keys: 2, Duration: 4 * time.Second}})
	if res.Lease != checker.Valid || res.Resource != checker.Valid {
		t.Errorf("lease %s, resource %s", res.Lease, res.Resource)
	}
	var exited, hung, ok int
	for _, e := range events {
		switch {
		case e.F != history.Acquire:
		case e.Type == history.Ok:
			ok++
		case e.Type == history.Info && strings.Contains(e.Error, "exiting at acquire 5"):
			exited++
		case e.Type == history.Info && strings.Contains(e.Error, "client killed"):
			hung++
		}
	}
	if exited == 0 || hung == 0 || ok == 0 {
		t.Errorf("%d acquires ok, %d unknown because the client exited, %d because it hung; want some of each", ok, exited, hung)
	}
}

// TestHelloPromises: the example client declares its promises in its
// hello, and the gate reads them from one process without a Redis to
// reach.
func TestHelloPromises(t *testing.T) {
	spec, err := locks.Lookup(execName(t, "example/example_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := locks.DeclaredPromises(spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := "single elapsed extends"; p.String() != want {
		t.Fatalf("promises %q, want %q", p, want)
	}
}
