package nemesis_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// startFailoverTopology starts a primary, a replica and three sentinels,
// closed when the test ends.
func startFailoverTopology(tb testing.TB) (*cluster.Failover, *nemesis.Target) {
	tb.Helper()
	c := testutil.Cluster(tb, cluster.Spec{Topology: cluster.TopologyFailover})
	return c.Failover(), &nemesis.Target{Cluster: c}
}

// replicationInfo returns the fields of n's INFO replication, read
// directly (no proxy).
func replicationInfo(tb testing.TB, n *cluster.Node) map[string]string {
	tb.Helper()
	s, err := n.Client().Info(tb.Context(), "replication").Result()
	if err != nil {
		tb.Fatalf("%s: info replication: %v", n.Name(), err)
	}
	m := make(map[string]string)
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// pingThrough sends one PING through addr on a fresh client, bounded by
// 300 ms.
func pingThrough(addr, password string) error {
	rc := redis.NewClient(&redis.Options{Addr: addr, Password: password, Protocol: 2, DisableIdentity: true,
		MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	return rc.Ping(ctx).Err()
}

func TestFailoverKind(t *testing.T) {
	masters := nemesis.Setup{Lock: "setnx", Nodes: 1, Groups: 1, TTL: 4 * time.Second, Topology: "masters", Abilities: noShim}
	fo := masters
	fo.Topology, fo.Nodes = "failover", 2
	if _, err := nemesis.Check([]string{"failover"}, masters); err == nil || !strings.Contains(err.Error(), "needs topology failover") {
		t.Errorf("failover on independent masters: %v, want a refusal", err)
	}
	ks, err := nemesis.Check([]string{"failover"}, fo)
	if err != nil {
		t.Fatal(err)
	}
	k := ks[0]
	rng := rand.New(rand.NewPCG(1, 0))
	holds := map[time.Duration]bool{}
	for range 50 {
		f := k.Plan(rng, fo)
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := k.Decode(b)
		if err != nil || g.String() != f.String() {
			t.Fatalf("%s decoded to %v, %v", b, g, err)
		}
		holds[time.Duration(f.(*nemesis.Failover).HoldOldPrimary)] = true
	}
	if len(holds) != 2 || !holds[0] || !holds[2*time.Second] {
		t.Errorf("holds drawn: %v, want 0 and TTL/2", holds)
	}
	g, err := k.Decode(json.RawMessage(`{"hold_old_primary":"1.5s"}`))
	if err != nil || time.Duration(g.(*nemesis.Failover).HoldOldPrimary) != 1500*time.Millisecond || !strings.Contains(g.String(), "1.5s") {
		t.Errorf("decode hold_old_primary 1.5s: %v, %v", g, err)
	}
	if _, err := k.Decode(json.RawMessage(`{"hold":"1s"}`)); err == nil {
		t.Error("decode of an unknown parameter succeeded")
	}
	if err := (&nemesis.Failover{}).Start(t.Context(), &nemesis.Target{}); err == nil {
		t.Error("Start without a failover topology succeeded")
	}
}

// TestFailoverFault runs the fault: Start leaves the replica promoted and
// the old primary, still a primary in its own eyes, cut off from clients;
// Heal leaves one primary with the old one as its replica.
func TestFailoverFault(t *testing.T) {
	f, target := startFailoverTopology(t)
	old, err := f.WaitPrimary(testutil.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fault := &nemesis.Failover{}
	start := time.Now()
	if err := fault.Start(testutil.Context(t, 40*time.Second), target); err != nil {
		t.Fatalf("start %s: %v", fault, err)
	}
	t.Logf("promoted %v after Start began", time.Since(start))
	promoted, err := f.Primary(t.Context())
	if err != nil || promoted == old {
		t.Fatalf("after Start: the sentinels name %v, %v; want the replica", promoted, err)
	}
	if r := replicationInfo(t, old); r["role"] != "master" {
		t.Errorf("isolated old primary %s reports role %q, want master: nobody could tell it", old.Name(), r["role"])
	}
	if err := pingThrough(old.Addr(), f.Password()); err == nil {
		t.Errorf("PING through the clients' proxy to the old primary %s succeeded after Start", old.Name())
	}
	if err := pingThrough(promoted.Addr(), f.Password()); err != nil {
		t.Errorf("PING through the clients' proxy to the new primary %s: %v", promoted.Name(), err)
	}

	start = time.Now()
	if err := fault.Heal(testutil.Context(t, 30*time.Second), target); err != nil {
		t.Fatalf("heal: %v", err)
	}
	t.Logf("healthy %v after Heal began", time.Since(start))
	if p, err := f.Primary(t.Context()); err != nil || p != promoted {
		t.Errorf("after Heal: the sentinels name %v, %v; want %s", p, err, promoted.Name())
	}
	masters := 0
	for _, n := range f.Nodes() {
		if replicationInfo(t, n)["role"] == "master" {
			masters++
		}
		if tx := f.InternalProxy(n).Toxics.GetToxicArray(); len(tx) != 0 {
			t.Errorf("%s: %d toxics left on the internal proxy", n.Name(), len(tx))
		}
		if tx := n.Proxy().Toxics.GetToxicArray(); len(tx) != 0 {
			t.Errorf("%s: %d toxics left on the clients' proxy", n.Name(), len(tx))
		}
	}
	if masters != 1 {
		t.Errorf("%d nodes report role master after Heal, want 1", masters)
	}
	r := replicationInfo(t, old)
	if got := net.JoinHostPort(r["master_host"], r["master_port"]); r["role"] != "slave" || got != f.InternalAddr(promoted) || r["master_link_status"] != "up" {
		t.Errorf("old primary %s after Heal: role %q of %s, link %q; want a replica of %s", old.Name(), r["role"], got, r["master_link_status"], f.InternalAddr(promoted))
	}
	if err := pingThrough(old.Addr(), f.Password()); err != nil {
		t.Errorf("PING through the clients' proxy to %s after Heal: %v", old.Name(), err)
	}
}

// TestFailoverLosesSetNXLock is the finding: the single-instance lock on a
// primary with an asynchronous replica grants one key to two clients at
// once across a failover. Client A acquires on the primary once its
// internal path is cut (the SET is never replicated); the sentinels
// promote the replica; client B acquires the same key there while A's
// lease is still valid.
func TestFailoverLosesSetNXLock(t *testing.T) {
	f, target := startFailoverTopology(t)
	ctx := t.Context()
	old, err := f.WaitPrimary(testutil.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cfg := locks.Config{
		Sentinels:        f.SentinelAddrs(),
		SentinelPassword: f.SentinelPassword(),
		MasterName:       f.MasterName(),
		AddrMap:          f.AddrMap(),
		Password:         f.Password(),
		TTL:              30 * time.Second, // far longer than a failover: the overlap cannot be a timing accident
		Timeout:          time.Second,
		Tries:            1,
	}
	newSetNX := func() locks.Lock {
		l, err := locks.New("setnx", cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	a, b := newSetNX(), newSetNX() // two clients: own pools, own sentinel subscriptions
	const key = "the-lock"
	warm, err := a.Acquire(ctx, "warm-up") // A is connected to the primary before the fault
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, warm); err != nil {
		t.Fatal(err)
	}

	fault := &nemesis.Failover{}
	var startErr error
	started := make(chan struct{})
	go func() {
		defer close(started)
		startErr = fault.Start(testutil.Context(t, 40*time.Second), target)
	}()
	t.Cleanup(func() { <-started }) // Start ends with the test's context at the latest
	deadline := time.Now().Add(10 * time.Second)
	for len(f.InternalProxy(old).Toxics.GetToxicArray()) < 2 { // the cut is in place, both ways
		if time.Now().After(deadline) {
			t.Fatal("the fault did not cut the primary's internal path within 10 s")
		}
		time.Sleep(time.Millisecond)
	}

	leaseA, err := a.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("A: acquire on the isolated primary: %v", err)
	}
	if got := testutil.Value(t, old, key); got != leaseA.Token {
		t.Fatalf("A's SET did not land on the old primary %s (%q): it came too late, after the promotion", old.Name(), got)
	}
	<-started
	if startErr != nil {
		t.Fatalf("start %s: %v", fault, startErr)
	}
	promoted, err := f.Primary(ctx)
	if err != nil || promoted == old {
		t.Fatalf("after Start: the sentinels name %v, %v; want the replica", promoted, err)
	}
	if got := testutil.Value(t, promoted, key); got != "" {
		t.Fatalf("A's SET reached the replica %s (%q) despite the cut", promoted.Name(), got)
	}

	var leaseB locks.Lease
	deadline = time.Now().Add(10 * time.Second)
	for {
		if leaseB, err = b.Acquire(ctx, key); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B: acquire on the new primary: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	grantedB := time.Now()
	if !leaseA.Valid(grantedB) {
		t.Fatalf("A's lease ended %v before B's acquire returned: no overlap to show (TTL too short?)", grantedB.Sub(leaseA.Validity))
	}
	t.Logf("two holders of %q: A's lease valid for %v more when B's acquire returned (B valid until +%v)",
		key, leaseA.Validity.Sub(grantedB).Round(time.Millisecond), leaseB.Validity.Sub(grantedB).Round(time.Millisecond))
	if leaseA.Token == leaseB.Token {
		t.Fatal("A and B got the same token")
	}
	if got := testutil.Value(t, promoted, key); got != leaseB.Token {
		t.Errorf("key on the new primary %s = %q, want B's token", promoted.Name(), got)
	}
	if got := testutil.Value(t, old, key); got != leaseA.Token {
		t.Errorf("key on the old primary %s = %q, want A's token", old.Name(), got)
	}

	// Heal: the old primary rejoins as a replica and A's grant is gone.
	if err := fault.Heal(testutil.Context(t, 30*time.Second), target); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if got := testutil.Value(t, old, key); got != leaseB.Token {
		t.Errorf("key on the old primary after it rejoined = %q, want B's token (A's write lost)", got)
	}
	if err := a.Release(ctx, leaseA); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("A: release after the heal: %v, want ErrNotHeld", err)
	}
	if err := b.Release(ctx, leaseB); err != nil {
		t.Errorf("B: release: %v", err)
	}
}
