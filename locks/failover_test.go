package locks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
	"github.com/redis/go-redis/v9"
)

// startFailover starts a primary, a replica and three sentinels, stopped
// when the test ends.
func startFailover(tb testing.TB) *cluster.Failover {
	tb.Helper()
	return testutil.Cluster(tb, cluster.Spec{Topology: cluster.TopologyFailover}).Failover()
}

// sentinelConfig is a Config that finds the primary of f through its
// sentinels.
func sentinelConfig(f *cluster.Failover, ttl time.Duration) locks.Config {
	return locks.Config{
		Sentinels:        f.SentinelAddrs(),
		SentinelPassword: f.SentinelPassword(),
		MasterName:       f.MasterName(),
		AddrMap:          f.AddrMap(),
		Password:         f.Password(),
		TTL:              ttl,
		Timeout:          time.Second,
		Tries:            1,
		RetryDelay:       10 * time.Millisecond,
		Seed:             1,
	}
}

// acquireEventually retries Acquire until it succeeds or within has
// passed, tolerating every error: around a failover a call may meet the
// old primary (READONLY, a timeout, a closed connection).
func acquireEventually(tb testing.TB, l locks.Lock, key string, within time.Duration) locks.Lease {
	tb.Helper()
	deadline := time.Now().Add(within)
	var errs []error
	for {
		lease, err := l.Acquire(tb.Context(), key)
		if err == nil {
			if len(errs) > 0 {
				tb.Logf("acquire %q: ok after %d failed attempts: %v", key, len(errs), errors.Join(errs...))
			}
			return lease
		}
		errs = append(errs, err)
		if time.Now().After(deadline) {
			tb.Fatalf("acquire %q: not within %v: %v", key, within, err)
		}
		if err := wait.Sleep(tb.Context(), pollEvery); err != nil {
			tb.Fatalf("acquire %q: %v", key, err)
		}
	}
}

// waitPromotion polls until a majority of f's sentinels name a primary
// other than old, and returns it; it fails the test after within.
func waitPromotion(tb testing.TB, f *cluster.Failover, old *cluster.Node, within time.Duration) *cluster.Node {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		p, err := f.Primary(tb.Context())
		if err == nil && p != old {
			return p
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no promotion within %v: primary %v, %v", within, p, err)
		}
		t := time.NewTimer(pollEvery)
		select {
		case <-tb.Context().Done():
			t.Stop()
			tb.Fatalf("wait for a promotion: %v", tb.Context().Err())
		case <-t.C:
		}
	}
}

// TestSetNXOverSentinels runs setnx (and a mutant, which shares the
// client) through the sentinels: acquire and release on the primary, then
// a forced failover (SENTINEL FAILOVER), then acquire again, on the new
// primary.
func TestSetNXOverSentinels(t *testing.T) {
	f := startFailover(t)
	ctx := t.Context()
	old, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"setnx", "setnx-plain-del"} {
		l := newLock(t, name, sentinelConfig(f, 10*time.Second))
		key := testKey(t, name)
		lease := mustAcquire(t, l, key)
		if got := testutil.Value(t, old, key); got != lease.Token {
			t.Errorf("%s: key on the primary %s = %q, want the token", name, old.Name(), got)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Errorf("%s: release: %v", name, err)
		}
	}
	l := newLock(t, "setnx", sentinelConfig(f, 10*time.Second))
	mustAcquire(t, l, testKey(t, "warm")) // a pooled connection to the old primary

	sc := redis.NewSentinelClient(&redis.Options{Addr: f.SentinelAddrs()[0], Password: f.SentinelPassword(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { sc.Close() })
	if err := sc.Failover(ctx, f.MasterName()).Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	start := time.Now()
	primary := waitPromotion(t, f, old, 20*time.Second)
	wctx, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()
	if p, err := f.WaitHealthy(wctx); err != nil || p != primary {
		t.Fatalf("WaitHealthy = %v, %v; want %s", p, err, primary.Name())
	}
	t.Logf("failover to %s healthy after %v", primary.Name(), time.Since(start))

	key := testKey(t, "after")
	lease := acquireEventually(t, l, key, 10*time.Second)
	if got := testutil.Value(t, primary, key); got != lease.Token {
		t.Errorf("key on the new primary %s = %q, want the token", primary.Name(), got)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("release on the new primary: %v", err)
	}
}

// TestSentinelPassword: the sentinels refuse a client without their
// password (NOAUTH), for reading as for reconfiguring, and a lock that
// has it finds the primary through them; a lock without it gets no lease.
func TestSentinelPassword(t *testing.T) {
	f := startFailover(t)
	ctx := t.Context()
	for _, a := range f.SentinelAddrs() {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, Protocol: 2, DisableIdentity: true})
		t.Cleanup(func() { sc.Close() })
		if err := sc.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("sentinel %s: PING without the password: %v, want NOAUTH", a, err)
		}
		if err := sc.Set(ctx, f.MasterName(), "quorum", "1").Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("sentinel %s: SENTINEL SET without the password: %v, want NOAUTH", a, err)
		}
		wrong := redis.NewSentinelClient(&redis.Options{Addr: a, Password: f.Password(), Protocol: 2, DisableIdentity: true})
		t.Cleanup(func() { wrong.Close() })
		if err := wrong.Ping(ctx).Err(); err == nil {
			t.Errorf("sentinel %s: the data nodes' password was accepted", a)
		}
	}
	if f.SentinelPassword() == "" || f.SentinelPassword() == f.Password() {
		t.Errorf("sentinel password %q: want one of their own", f.SentinelPassword())
	}

	l := newLock(t, "setnx", sentinelConfig(f, 10*time.Second))
	lease := mustAcquire(t, l, testKey(t, "with"))
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("release: %v", err)
	}
	cfg := sentinelConfig(f, 10*time.Second)
	cfg.SentinelPassword = ""
	l = newLock(t, "setnx", cfg)
	if lease, err := l.Acquire(ctx, testKey(t, "without")); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("acquire without the sentinel password: %+v, %v; want a NOAUTH error", lease, err)
	}
}

// TestSentinelConfig checks the configurations around Sentinels that need
// no Redis.
func TestSentinelConfig(t *testing.T) {
	sentinels := []string{"127.0.0.1:1"} // never dialed: construction does not connect
	l, err := locks.New("setnx", locks.Config{Sentinels: sentinels, MasterName: "m"})
	if err != nil {
		t.Errorf("setnx with Sentinels and no Addrs: %v", err)
	} else {
		l.Close()
	}
	for _, tc := range []struct {
		name, lock string
		cfg        locks.Config
		want       string
	}{
		{"redlock refuses Sentinels", "redlock", locks.Config{Addrs: sentinels, Sentinels: sentinels, MasterName: "m"}, "independent masters"},
		{"mutant of redlock too", "redlock-no-quorum", locks.Config{Addrs: sentinels, Sentinels: sentinels, MasterName: "m"}, "independent masters"},
		{"no MasterName", "setnx", locks.Config{Sentinels: sentinels}, "MasterName"},
		{"AddrMap without Sentinels", "setnx", locks.Config{Addrs: sentinels, AddrMap: map[string]string{"a:1": "b:2"}}, "AddrMap"},
		{"SentinelPassword without Sentinels", "setnx", locks.Config{Addrs: sentinels, SentinelPassword: "x"}, "SentinelPassword"},
	} {
		l, err := locks.New(tc.lock, tc.cfg)
		if err == nil {
			l.Close()
			t.Errorf("%s: New(%q) succeeded", tc.name, tc.lock)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New(%q): %v; want an error about %s", tc.name, tc.lock, err, tc.want)
		}
	}
}
