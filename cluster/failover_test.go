package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// startFailoverTB starts the failover topology and closes it when the
// test ends.
func startFailoverTB(tb testing.TB, opts ...Option) *Failover {
	tb.Helper()
	return openTB(tb, Spec{Topology: TopologyFailover}, opts...).Failover()
}

// waitCtx bounds one wait of a test; the bounds are generous, never
// asserted: these waits depend on sentinel timings and on a loaded machine.
func waitCtx(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// role returns n's role from its INFO replication, read directly.
func role(tb testing.TB, n *Node) map[string]string {
	tb.Helper()
	info, err := nodeInfo(tb.Context(), n)
	if err != nil {
		tb.Fatal(err)
	}
	return info
}

// pids returns the process ids of the running nodes and sentinels.
func (f *Failover) pids() []int {
	var pids []int
	for _, n := range f.c.nodes {
		pids = append(pids, n.Pid())
	}
	for _, s := range f.sentinels {
		s.mu.Lock()
		if p, ok := s.cur.(interface{ pid() int }); ok {
			pids = append(pids, p.pid())
		}
		s.mu.Unlock()
	}
	return pids
}

func TestStartFailover(t *testing.T) {
	start := time.Now()
	f := startFailoverTB(t)
	t.Logf("healthy after %v", time.Since(start))
	ctx := t.Context()
	n1, n2 := f.Nodes()[0], f.Nodes()[1]
	if len(f.Nodes()) != 2 || f.MasterName() != "locktorture" || f.Password() != f.Cluster().Password() {
		t.Fatalf("%d nodes, master name %q, password %q", len(f.Nodes()), f.MasterName(), f.Password())
	}
	if got := len(f.SentinelAddrs()); got != 3 {
		t.Fatalf("%d sentinels, want 3", got)
	}
	if p, err := f.Primary(ctx); err != nil || p != n1 {
		t.Fatalf("Primary = %v, %v; want n1", p, err)
	}
	if p, err := f.WaitPrimary(waitCtx(t, 10*time.Second)); err != nil || p != n1 {
		t.Fatalf("WaitPrimary = %v, %v; want n1", p, err)
	}
	m := f.AddrMap()
	for _, n := range f.Nodes() {
		in := f.InternalAddr(n)
		if in == n.Addr() || in == n.DirectAddr() || m[in] != n.Addr() || f.InternalProxy(n).Name != n.Name()+"-internal" {
			t.Errorf("%s: internal %s, client %s, direct %s, map %v", n.Name(), in, n.Addr(), n.DirectAddr(), m)
		}
	}
	// Every sentinel names n1 by its internal address.
	for _, a := range f.SentinelAddrs() {
		sc := newSentinelClient(a, f.SentinelPassword())
		got, err := sc.GetMasterAddrByName(ctx, f.MasterName()).Result()
		sc.Close()
		if err != nil || strings.Join(got, ":") != f.InternalAddr(n1) {
			t.Errorf("sentinel %s: primary %v, %v; want %s", a, got, err, f.InternalAddr(n1))
		}
	}
	if r := role(t, n2); r["role"] != "slave" || r["master_host"]+":"+r["master_port"] != f.InternalAddr(n1) {
		t.Errorf("n2: role %q of %s:%s, want a replica of %s", r["role"], r["master_host"], r["master_port"], f.InternalAddr(n1))
	}

	// A write through the client path replicates; the replica refuses writes.
	rc := newClient(n1.Addr(), f.Password())
	t.Cleanup(func() { rc.Close() })
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the write to reach the replica", func() bool {
		v, err := n2.Client().Get(ctx, "k").Result()
		return err == nil && v == "v"
	})
	if err := n2.Client().Set(ctx, "k", "w", 0).Err(); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Errorf("SET on the replica: %v, want READONLY", err)
	}
}

// TestFailoverIsolatedPrimary cuts the primary's internal path: the
// sentinels promote the replica while the old primary, still reachable by
// clients, takes a write that is never replicated; once the path is back,
// the old primary rejoins as a replica and that write is gone.
//
// Under a loaded machine (the whole of make test at once) the sentinels
// once failed back to n1 after the heal, having judged n2 down (1 s
// without a PING reply): then n1 was never a replica and the write stays.
// That run tests nothing of the rejoin, and the scenario runs once more
// on a fresh topology; a second failback fails the test.
func TestFailoverIsolatedPrimary(t *testing.T) {
	for attempt := 1; ; attempt++ {
		if !isolatedPrimary(t, attempt < 2) {
			return
		}
		t.Logf("attempt %d: the sentinels failed back to n1 after the heal; once more on a fresh topology", attempt)
	}
}

// isolatedPrimary runs TestFailoverIsolatedPrimary's scenario once; it
// reports a failback instead of failing when retry is set.
func isolatedPrimary(t *testing.T, retry bool) (failback bool) {
	f := startFailoverTB(t)
	ctx := t.Context()
	n1, n2 := f.Nodes()[0], f.Nodes()[1]
	px := f.InternalProxy(n1)
	px.Stop() // refuses connections and closes open ones; the nemesis black-holes instead
	rc := newClient(n1.Addr(), f.Password())
	t.Cleanup(func() { rc.Close() })
	if err := rc.Set(ctx, "lost", "v", 0).Err(); err != nil {
		t.Fatalf("write to the isolated primary through the client path: %v", err)
	}
	start := time.Now()
	eventually(t, 20*time.Second, "the sentinels to promote n2", func() bool {
		p, err := f.Primary(ctx)
		return err == nil && p == n2
	})
	t.Logf("n2 promoted %v after the cut", time.Since(start))
	p, err := f.WaitPrimary(waitCtx(t, 10*time.Second))
	if err != nil || p != n2 {
		t.Fatalf("WaitPrimary = %v, %v; want n2", p, err)
	}
	if err := n2.Client().Get(ctx, "lost").Err(); err == nil {
		t.Error("the write to the isolated primary reached the replica")
	}
	if r := role(t, n1); r["role"] != "master" {
		t.Errorf("isolated n1 reports role %q, want master (it does not know)", r["role"])
	}
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if p, err = f.WaitHealthy(waitCtx(t, 25*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy %v after the heal", time.Since(start))
	if p == n1 && retry {
		return true
	}
	if p != n2 {
		t.Errorf("primary after the heal: %s, want n2", p.Name())
	}
	if r := role(t, n1); r["role"] != "slave" || r["master_host"]+":"+r["master_port"] != f.InternalAddr(n2) {
		t.Errorf("n1 after the heal: role %q of %s:%s, want a replica of %s", r["role"], r["master_host"], r["master_port"], f.InternalAddr(n2))
	}
	if err := n1.Client().Get(ctx, "lost").Err(); err == nil {
		t.Error("the old primary kept its unreplicated write after rejoining")
	}
	return false
}

// TestFailoverRestartReplica kills the replica and restarts it: it comes
// back as an empty primary on its own and the sentinels make it a replica
// again, which needs the masterauth and replica-announce-port kept on its
// command line.
func TestFailoverRestartReplica(t *testing.T) {
	f := startFailoverTB(t)
	n2 := f.Nodes()[1]
	if err := n2.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := f.WaitHealthy(waitCtx(t, 25*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy %v after the restart", time.Since(start))
	if p != f.Nodes()[0] {
		t.Errorf("primary %s, want n1", p.Name())
	}
}

func TestFailoverCloseAndCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, err := StartFailover(ctx, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pids := f.pids()
	if len(pids) != 5 {
		t.Fatalf("%d processes, want 2 nodes and 3 sentinels", len(pids))
	}
	cancel()
	for _, pid := range pids {
		eventually(t, 5*time.Second, "the process to go after cancel", func() bool { return gone(pid) })
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
	if _, err := f.WaitPrimary(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitPrimary after Close: %v, want ErrClosed", err)
	}

	f = startFailoverTB(t)
	pids = f.pids()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
}
