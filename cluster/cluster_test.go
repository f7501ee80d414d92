package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// openTB opens the cluster of spec with opts, its folders under a test
// directory, and closes it when the test ends. It is testutil.Cluster,
// which these tests cannot import (testutil imports this package).
func openTB(tb testing.TB, spec Spec, opts ...Option) *Cluster {
	tb.Helper()
	c, err := Open(context.Background(), spec, append([]Option{WithDir(tb.TempDir())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// startCluster starts n nodes and closes them when the test ends.
func startCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	return openTB(tb, Spec{Nodes: n}, opts...)
}

// proxyClient returns a client to the node's proxy, closed when the test ends.
func proxyClient(tb testing.TB, c *Cluster, i int) *redis.Client {
	tb.Helper()
	rc := newClient(c.Node(i).Addr(), c.Password())
	tb.Cleanup(func() { rc.Close() })
	return rc
}

// eventually polls cond every few milliseconds until it holds, failing
// the test after within (testutil.Until, which these tests cannot import).
func eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting %v: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestStartSetGet(t *testing.T) {
	c := startCluster(t, 3)
	ctx := t.Context()
	if c.Version() == "" {
		t.Error("empty Version()")
	}
	t.Logf("redis %s", c.Version())
	if len(c.Password()) != 32 {
		t.Errorf("password %q: want 32 hex characters", c.Password())
	}
	if got := len(c.Addrs()); got != 3 {
		t.Fatalf("%d addresses, want 3", got)
	}
	for i, n := range c.Nodes() {
		if n.Index() != i || n.Name() != fmt.Sprintf("n%d", i+1) || n.Addr() != c.Addrs()[i] {
			t.Errorf("node %d: index %d, name %s, addr %s", i, n.Index(), n.Name(), n.Addr())
		}
		if n.Addr() == n.DirectAddr() || n.Proxy().Name != n.Name() || n.Pid() == 0 || !n.Running() {
			t.Errorf("%s: addr %s, direct %s, proxy %s, pid %d", n.Name(), n.Addr(), n.DirectAddr(), n.Proxy().Name, n.Pid())
		}
		rc := proxyClient(t, c, i)
		if err := rc.Set(ctx, "k", n.Name(), 0).Err(); err != nil {
			t.Fatalf("set through %s: %v", n.Name(), err)
		}
		if got, err := rc.Get(ctx, "k").Result(); err != nil || got != n.Name() {
			t.Errorf("get through %s = %q, %v; want %q", n.Name(), got, err, n.Name())
		}
		wrong := newClient(n.Addr(), "wrong")
		if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("wrong password on %s: %v, want WRONGPASS", n.Name(), err)
		}
		wrong.Close()
	}
	if _, err := os.Stat(c.Node(0).LogPath()); err != nil {
		t.Error(err)
	}
}

func TestKillRestart(t *testing.T) {
	c := startCluster(t, 1)
	ctx := t.Context()
	n := c.Node(0)
	rc := proxyClient(t, c, 0)
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	direct, pid := n.DirectAddr(), n.Pid()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() || n.Pid() != 0 || !gone(pid) {
		t.Fatalf("after Kill: running %v, pid %d, old pid gone %v", n.Running(), n.Pid(), gone(pid))
	}
	if err := n.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	if err := rc.Get(ctx, "k").Err(); err == nil {
		t.Error("GET through the proxy of a killed node succeeded")
	}
	if err := n.Ping(ctx); err == nil {
		t.Error("Ping of a killed node succeeded")
	}
	for _, f := range []func() error{n.Pause, n.Resume} {
		if err := f(); !errors.Is(err, ErrNotRunning) {
			t.Errorf("Pause/Resume of a killed node: %v, want ErrNotRunning", err)
		}
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n.DirectAddr() != direct || n.Pid() == 0 || n.Pid() == pid {
		t.Errorf("after Restart: direct %s (was %s), pid %d (was %d)", n.DirectAddr(), direct, n.Pid(), pid)
	}
	if err := n.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if size, err := n.Client().DBSize(ctx).Result(); err != nil || size != 0 {
		t.Errorf("DBSIZE after restart = %d, %v; want 0", size, err)
	}
	if err := rc.Set(ctx, "k", "v2", 0).Err(); err != nil {
		t.Errorf("set through the proxy after restart: %v", err)
	}

	pid = n.Pid()
	if err := n.Restart(ctx); err != nil { // of a running node: kills it first
		t.Fatal(err)
	}
	if !gone(pid) || n.Pid() == 0 {
		t.Errorf("Restart of a running node: old pid %d gone %v, new pid %d", pid, gone(pid), n.Pid())
	}
}

func TestPersistence(t *testing.T) {
	c := startCluster(t, 1, WithPersistence(true))
	ctx := t.Context()
	n := c.Node(0)
	if err := n.Client().Set(ctx, "k", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := n.Client().Get(ctx, "k").Result(); err != nil || got != "kept" {
		t.Errorf("GET after restart = %q, %v; want kept", got, err)
	}
}

func TestPauseResume(t *testing.T) {
	c := startCluster(t, 1)
	ctx := t.Context()
	n := c.Node(0)
	// A new connection would block in its handshake (HELLO) on the paused
	// node and never send the SET, so both clients connect first.
	rc, late := proxyClient(t, c, 0), proxyClient(t, c, 0)
	for _, cl := range []*redis.Client{rc, late} {
		if err := cl.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if !n.Paused() || !n.Running() {
		t.Fatalf("after Pause: paused %v, running %v", n.Paused(), n.Running())
	}
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	err := rc.Get(tctx, "k").Err()
	cancel()
	if err == nil || time.Since(start) < 200*time.Millisecond {
		t.Errorf("GET on a paused node: %v after %v, want a timeout", err, time.Since(start))
	}
	tctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
	err = late.Set(tctx, "k", "late", 0).Err()
	cancel()
	if err == nil {
		t.Error("SET on a paused node succeeded")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if n.Paused() {
		t.Error("Paused() after Resume")
	}
	eventually(t, 5*time.Second, "the SET sent during the pause to land", func() bool {
		v, err := rc.Get(ctx, "k").Result()
		return err == nil && v == "late"
	})
}

func TestClose(t *testing.T) {
	c, err := Start(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var pids []int
	for _, n := range c.Nodes() {
		pids = append(pids, n.Pid())
	}
	c.Node(0).Client() // a client to close
	if err := c.Node(1).Pause(); err != nil {
		t.Fatal(err)
	}
	if err := c.Node(2).Kill(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- c.Close() }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("concurrent Close: %v", err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
	for _, n := range c.Nodes() {
		if n.Running() || n.Pid() != 0 {
			t.Errorf("%s running after Close", n.Name())
		}
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary dir after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Node(0).Restart(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Restart after Close: %v, want ErrClosed", err)
	}
}

func TestKeepLogs(t *testing.T) {
	c, err := Start(context.Background(), 1, WithKeepLogs(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(c.Dir()) })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Node(0).LogPath()); err != nil {
		t.Errorf("log after Close with WithKeepLogs: %v", err)
	}
}

func TestCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Start(ctx, 2, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pids := []int{c.Node(0).Pid(), c.Node(1).Pid()}
	cancel()
	for _, pid := range pids {
		eventually(t, 5*time.Second, "the process to go after cancel", func() bool { return gone(pid) })
	}
}

func TestStartCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, 2, WithDir(t.TempDir())); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestLatencyToxic(t *testing.T) {
	c := startCluster(t, 1)
	ctx := t.Context()
	rc := proxyClient(t, c, 0)
	if err := rc.Ping(ctx).Err(); err != nil { // connect before the toxic
		t.Fatal(err)
	}
	p := c.Node(0).Proxy()
	toxic := `{"name":"lat","type":"latency","stream":"downstream","attributes":{"latency":300}}`
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("PING through a 300 ms latency toxic took %v", d)
	}
	start = time.Now()
	if err := c.Node(0).Ping(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("direct PING under the toxic: %v", time.Since(start))
	if err := p.Toxics.RemoveToxic(ctx, "lat"); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Toxics.GetToxicArray()); n != 0 {
		t.Errorf("%d toxics left", n)
	}
	start = time.Now()
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PING after removing the toxic: %v", time.Since(start))
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"missing binary", []Option{WithRedisServer("/nonexistent/redis-server")}, "no such file"},
		{"not redis", []Option{WithRedisServer("false")}, "exited before answering PING"},
		{"bad argument", []Option{WithExtraArgs("--no-such-directive", "1")}, "Bad directive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(t.Context(), 1, append([]Option{WithDir(t.TempDir())}, tc.opts...)...)
			if err == nil || !strings.HasPrefix(err.Error(), "cluster: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start: %v; want an error with %q", err, tc.want)
			}
		})
	}
}

func BenchmarkStart5(b *testing.B) {
	for b.Loop() {
		c, err := Start(b.Context(), 5, WithDir(b.TempDir()))
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
