package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
)

// within bounds every wait of these tests: a deadline for a loaded
// machine, never a timing the tests assert.
const within = 20 * time.Second

// cut black-holes node i's proxy both ways (a partition: nothing is
// refused, nothing answers) until the returned func, or the end of the
// test, heals it.
func cut(tb testing.TB, c *cluster.Cluster, i int) (heal func()) {
	tb.Helper()
	link := c.Node(i).Link()
	for _, s := range []string{"upstream", "downstream"} {
		if err := link.AddToxic(tb.Context(), cluster.Toxic{Name: "cut_" + s, Type: "timeout", Stream: s, Toxicity: 1, Attributes: map[string]int{"timeout": 0}}); err != nil {
			tb.Fatalf("cut node %d: %v", i, err)
		}
	}
	healed := false
	heal = func() {
		if healed {
			return
		}
		healed = true
		for _, s := range []string{"upstream", "downstream"} {
			if err := link.RemoveToxic(context.WithoutCancel(tb.Context()), "cut_"+s); err != nil {
				tb.Errorf("heal node %d: %v", i, err)
			}
		}
	}
	tb.Cleanup(heal)
	return heal
}

// renewals waits until node i has set key's expiry anew n times (its TTL
// seen to grow), the key holding token throughout.
func renewals(tb testing.TB, c *cluster.Cluster, i int, key, token string, n int) {
	tb.Helper()
	seen, last := 0, time.Duration(0)
	testutil.Eventually(tb, within, fmt.Sprintf("%d renewals of %s", n, key), func() error {
		if got := get(tb, c, i, key); got != token {
			tb.Fatalf("the key holds %q, want the lease's token %q", got, token)
		}
		pttl, err := c.Node(i).Client().PTTL(tb.Context(), key).Result()
		if err != nil {
			return err
		}
		if pttl > last && last > 0 {
			seen++
		}
		last = pttl
		if seen < n {
			return fmt.Errorf("%d renewals seen", seen)
		}
		return nil
	})
}

// TestWatchdog: setnx-watchdog's lease claims no validity and is renewed
// while held, past several TTLs; its holder is told (Lost) when a
// renewal is refused, and never after a release, which stops the
// renewals.
func TestWatchdog(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	const ttl = 300 * time.Millisecond
	cfg := config(c, 1, ttl)
	cfg.Fencing = true
	l := newLock(t, "setnx-watchdog", cfg)

	t.Run("renews until released", func(t *testing.T) {
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		if lease.Fence <= 0 || lease.Lost == nil || time.Until(lease.Validity) < locks.UntilRelease/2 {
			t.Fatalf("lease %+v: want a fence, a loss channel and no validity (UntilRelease)", lease)
		}
		renewals(t, c, 0, key, lease.Token, 4) // over a TTL: 4 renewals of TTL/3
		if lease.Told() {
			t.Fatal("told of a loss while the renewals succeed")
		}
		if _, err := l.Extend(t.Context(), lease); err != nil {
			t.Fatalf("extend: %v", err)
		}
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatalf("release: %v", err)
		}
		if got := get(t, c, 0, key); got != "" {
			t.Fatalf("the key holds %q after the release", got)
		}
		// No renewal revives it and no notice comes: the watchdog
		// stopped with the release (Release waits for it).
		setOther(t, c, 0, key, "other", ttl)
		if lease.Told() {
			t.Error("told of a loss after the release")
		}
		if _, err := l.Extend(t.Context(), lease); !errors.Is(err, locks.ErrNotHeld) {
			t.Errorf("extend after the release: %v, want ErrNotHeld", err)
		}
	})

	t.Run("told when a renewal is refused", func(t *testing.T) {
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		setOther(t, c, 0, key, "other", 10*time.Second) // the key changes hands
		testutil.Until(t, within, "the loss notice", lease.Told)
		if lease.Valid(time.Now()) {
			t.Error("a lease told lost is still valid")
		}
		if at := lease.Lost.At(); at.IsZero() || at.After(time.Now()) || at == at.Round(0) || !strings.Contains(lease.Lost.Err().Error(), "renewal refused") {
			t.Errorf("notice at %v (%v): want when it was given, on the monotonic clock, and why", at, lease.Lost.Err())
		}
		if got := get(t, c, 0, key); got != "other" {
			t.Errorf("the other's key holds %q after the refused renewal", got)
		}
		if err := l.Release(t.Context(), lease); !errors.Is(err, locks.ErrNotHeld) {
			t.Errorf("release of a lost lease: %v, want ErrNotHeld", err)
		}
	})

	t.Run("extend refused tells", func(t *testing.T) {
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		del(t, c, key)
		if _, err := l.Extend(t.Context(), lease); !errors.Is(err, locks.ErrNotHeld) {
			t.Fatalf("extend of a deleted key: %v, want ErrNotHeld", err)
		}
		if !lease.Told() {
			t.Error("an extend refused did not tell the holder")
		}
		_ = l.Release(t.Context(), lease)
	})
}

// TestWatchdogPartition: a holder cut off from its node cannot renew.
// setnx-watchdog tells it (when no renewal succeeded within the lease's
// last validity, which ends before the key can expire; the harness's
// TestLossNotice shows that no other client is granted the key before
// the notice); setnx-watchdog-no-notice, the mutant, has told it nothing
// even once the key is gone.
func TestWatchdogPartition(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	const ttl = 600 * time.Millisecond
	cfg := config(c, 1, ttl)
	cfg.Timeout = 100 * time.Millisecond
	good, bad := newLock(t, "setnx-watchdog", cfg), newLock(t, "setnx-watchdog-no-notice", cfg)
	gk, bk := testKey(t, "good"), testKey(t, "bad")
	gl, bl := mustAcquire(t, good, gk), mustAcquire(t, bad, bk)
	renewals(t, c, 0, gk, gl.Token, 1)
	heal := cut(t, c, 0)
	testutil.Until(t, within, "the notice of the correct watchdog", gl.Told)
	// Once both keys are gone on the node, the mutant still believes.
	testutil.Until(t, within, "both keys to expire on the node", func() bool { return get(t, c, 0, gk) == "" && get(t, c, 0, bk) == "" })
	if bl.Told() {
		t.Error("the mutant told its holder of the loss")
	}
	heal()
	other := newLock(t, "setnx", cfg)
	if _, err := acquireWithin(t, other, bk, within); err != nil {
		t.Fatalf("another client takes the mutant's key: %v", err)
	}
	if !bl.Valid(time.Now()) {
		t.Error("the mutant's holder no longer believes it holds the key, beside the new holder")
	}
}

// TestClientToken: setnx-client-token gives a client (the caller's
// number) the same token on every acquire, another client another; a
// client that finds the key holding its own token (an acquire whose
// reply was lost) holds it again, a client that finds another's does
// not; a release deletes only its own token.
func TestClientToken(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	l := newLock(t, "setnx-client-token", config(c, 1, 10*time.Second))
	key := testKey(t)
	as := func(client int) context.Context { return locks.WithCaller(t.Context(), client) }

	first, err := l.Acquire(as(3), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(as(3), first); err != nil {
		t.Fatal(err)
	}
	again, err := l.Acquire(as(3), key)
	if err != nil {
		t.Fatal(err)
	}
	if again.Token != first.Token || !strings.HasSuffix(first.Token, ":3") {
		t.Errorf("tokens %q then %q: want one token for client 3, ending in :3", first.Token, again.Token)
	}
	if _, err := l.Acquire(as(4), key); !errors.Is(err, locks.ErrNotAcquired) {
		t.Errorf("client 4 while client 3 holds: %v, want ErrNotAcquired", err)
	}
	// Client 3's own token found again: held again, its expiry set anew.
	if err := c.Node(0).Client().PExpire(t.Context(), key, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	own, err := l.Acquire(as(3), key)
	if err != nil || own.Token != first.Token {
		t.Fatalf("client 3 finds its own token: %+v, %v", own, err)
	}
	if pttl, err := c.Node(0).Client().PTTL(t.Context(), key).Result(); err != nil || pttl <= time.Second {
		t.Errorf("PTTL %v, %v after the acquire of its own key: want the TTL set anew", pttl, err)
	}
	if err := l.Release(as(3), own); err != nil {
		t.Fatal(err)
	}
	four, err := l.Acquire(as(4), key)
	if err != nil || four.Token == first.Token {
		t.Fatalf("client 4 after the release: %+v, %v", four, err)
	}
	if err := l.Release(as(3), first); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("client 3 releases while client 4 holds: %v, want ErrNotHeld", err)
	}
	if got := get(t, c, 0, key); got != four.Token {
		t.Errorf("the key holds %q, want client 4's %q", got, four.Token)
	}
}

// TestRueidislock: rueidislock's lease claims no validity; the library
// keeps its keys while held and the holder is told (Lost) when it loses
// them; a release deletes them and tells nothing.
func TestRueidislock(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	const ttl = 600 * time.Millisecond
	l := newLock(t, "rueidislock", config(c, 1, ttl))
	keys := func(key string) []string {
		return []string{"rueidislock:0:" + key, "rueidislock:1:" + key, "rueidislock:2:" + key}
	}
	t.Run("held, then released", func(t *testing.T) {
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		if lease.Lost == nil || time.Until(lease.Validity) < locks.UntilRelease/2 {
			t.Fatalf("lease %+v: want a loss channel and no validity", lease)
		}
		if _, err := l.Acquire(t.Context(), key); !errors.Is(err, locks.ErrNotAcquired) {
			t.Errorf("second acquire while held: %v, want ErrNotAcquired", err)
		}
		held := 0
		for _, k := range keys(key) {
			if get(t, c, 0, k) != "" {
				held++
			}
		}
		if held < 2 {
			t.Errorf("%d of the library's 3 keys set, want a majority", held)
		}
		if _, err := l.Extend(t.Context(), lease); err == nil || errors.Is(err, locks.ErrNotHeld) {
			t.Errorf("extend: %v, want an error of unknown outcome (the library has none)", err)
		}
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatalf("release: %v", err)
		}
		for _, k := range keys(key) {
			if got := get(t, c, 0, k); got != "" {
				t.Errorf("%s holds %q after the release", k, got)
			}
		}
		if lease.Told() {
			t.Error("told of a loss by the release")
		}
	})
	t.Run("told when the keys are lost", func(t *testing.T) {
		key := testKey(t)
		lease := mustAcquire(t, l, key)
		del(t, c, keys(key)[0])
		del(t, c, keys(key)[1])
		del(t, c, keys(key)[2])
		testutil.Until(t, within, "the loss notice", lease.Told)
		if err := l.Release(t.Context(), lease); !errors.Is(err, locks.ErrNotHeld) {
			t.Errorf("release after the notice: %v, want ErrNotHeld", err)
		}
	})
}

// TestAsProcess: a Go lock served in client processes of its own
// (AsProcess: this test binary run as `client --lock NAME`, as torture
// is) keeps its name, promises and fencing, grants leases through the
// protocol, and its watchdog's notice crosses the process boundary as a
// "lost" event, with its reason. A lock that runs as processes already,
// or that is not registered, is refused.
func TestAsProcess(t *testing.T) {
	t.Parallel()
	spec, err := locks.Lookup("setnx-watchdog")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := locks.AsProcess(spec)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Name != spec.Name || !ps.Process || ps.Promises != spec.Promises || !ps.Fencing || ps.Lang() != "Go" {
		t.Errorf("AsProcess(setnx-watchdog) = %+v", ps)
	}
	c := startCluster(t, 1)
	cfg := config(c, 1, 300*time.Millisecond)
	cfg.Fencing = true
	built, err := ps.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { built.Close() })
	pl, ok := built.(*locks.ProcessLock)
	if !ok || pl.Info().Name != "setnx-watchdog" || !pl.Info().Fencing || !pl.ReportsNodes() || pl.Info().Promises == nil || !pl.Info().Promises.Renews {
		t.Fatalf("built %T, hello %+v", built, pl.Info())
	}
	key := testKey(t)
	lease := mustAcquire(t, built, key)
	if lease.Fence <= 0 || time.Until(lease.Validity) < locks.UntilRelease/2 {
		t.Errorf("lease %+v: want a fence and no validity", lease)
	}
	renewals(t, c, 0, key, lease.Token, 2)
	setOther(t, c, 0, key, "other", 10*time.Second)
	testutil.Until(t, within, "the notice across the process boundary", lease.Told)
	if err := lease.Lost.Err(); err == nil || !strings.Contains(err.Error(), "renewal refused") {
		t.Errorf("the notice says %v, want the watchdog's reason", err)
	}
	if err := built.Release(t.Context(), lease); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("release of a lost lease: %v, want ErrNotHeld", err)
	}

	for _, name := range []string{"redis-py-lock", "exec:true"} {
		s, err := locks.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := locks.AsProcess(s); err == nil {
			t.Errorf("AsProcess(%s) accepted", name)
		}
	}
	if _, err := locks.AsProcess(locks.Spec{Name: "not-registered", New: func(locks.Config) (locks.Lock, error) { return nil, nil }}); err == nil {
		t.Error("AsProcess of a lock that is not registered accepted")
	}
}
