package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
)

// pollEvery is the interval between two looks while a test waits for a
// condition (a TTL to run out) with a deadline.
const pollEvery = 10 * time.Millisecond

// startCluster starts n real redis-server nodes behind toxiproxy proxies,
// stopped when the test ends.
func startCluster(tb testing.TB, n int) *cluster.Cluster {
	tb.Helper()
	return testutil.Cluster(tb, cluster.Spec{Nodes: n})
}

// config is a Config for the first n nodes of c with the given TTL, one
// attempt per Acquire and a per-node timeout generous enough for the race
// detector on two cores and for the latency toxics of these tests.
func config(c *cluster.Cluster, n int, ttl time.Duration) locks.Config {
	return locks.Config{
		Addrs:      c.Addrs()[:n],
		Password:   c.Password(),
		TTL:        ttl,
		Timeout:    time.Second,
		Tries:      1,
		RetryDelay: 10 * time.Millisecond,
		Seed:       1,
	}
}

// newLock builds the registered lock name, closed when the test ends.
//
// One exception: redsync bounds a whole acquire round by 5% of the TTL by
// default, 15 ms for the 300 ms TTLs of these tests, which a new
// connection under the race detector on two cores does not always meet.
// Its timeout factor is raised so that a round may take 150 ms, the
// least bound these tests rely on; the default factor is kept from a 3 s
// TTL up.
func newLock(tb testing.TB, name string, cfg locks.Config) locks.Lock {
	tb.Helper()
	newFn := locks.New
	if name == "redsync" {
		newFn = func(_ string, cfg locks.Config) (locks.Lock, error) {
			ttl := cfg.TTL
			if ttl == 0 {
				ttl = 10 * time.Second
			}
			return locks.NewRedsync(cfg, locks.RedsyncTimeoutFactor(max(0.05, float64(150*time.Millisecond)/float64(ttl))))
		}
	}
	l, err := newFn(name, cfg)
	if err != nil {
		tb.Fatalf("locks.New(%q): %v", name, err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("close %s: %v", name, err)
		}
	})
	return l
}

// testKey returns a key unique to the test and the given parts.
func testKey(tb testing.TB, parts ...any) string {
	k := tb.Name()
	for _, p := range parts {
		k += fmt.Sprintf("/%v", p)
	}
	return k
}

// mustAcquire acquires key or fails the test.
func mustAcquire(tb testing.TB, l locks.Lock, key string) locks.Lease {
	tb.Helper()
	lease, err := l.Acquire(tb.Context(), key)
	if err != nil {
		tb.Fatalf("acquire %q: %v", key, err)
	}
	if lease.Key != key || lease.Token == "" || !lease.Valid(time.Now()) {
		tb.Fatalf("acquire %q: bad lease %+v", key, lease)
	}
	return lease
}

// acquireWithin retries Acquire every pollEvery until it succeeds or
// within has passed. A definite "not acquired" is retried; any other
// error fails the test.
func acquireWithin(tb testing.TB, l locks.Lock, key string, within time.Duration) (locks.Lease, error) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		lease, err := l.Acquire(tb.Context(), key)
		if err == nil {
			return lease, nil
		}
		if !errors.Is(err, locks.ErrNotAcquired) {
			tb.Fatalf("acquire %q: %v", key, err)
		}
		if time.Now().After(deadline) {
			return locks.Lease{}, fmt.Errorf("not acquired within %v: %w", within, err)
		}
		if err := wait.Sleep(tb.Context(), pollEvery); err != nil {
			tb.Fatalf("acquire %q: %v", key, err)
		}
	}
}

// get returns the value of key on node i of c, read directly (not through
// the proxy), or "" if the key is absent.
func get(tb testing.TB, c *cluster.Cluster, i int, key string) string {
	tb.Helper()
	return testutil.Value(tb, c.Node(i), key)
}

// setOther sets key to token with a PX ttl on node i, directly: another
// client's lock.
func setOther(tb testing.TB, c *cluster.Cluster, i int, key, token string, ttl time.Duration) {
	tb.Helper()
	if err := c.Node(i).Client().Set(tb.Context(), key, token, ttl).Err(); err != nil {
		tb.Fatalf("SET %q on node %d: %v", key, i, err)
	}
}

// del deletes key on every node of c, directly.
func del(tb testing.TB, c *cluster.Cluster, key string) {
	tb.Helper()
	for i := range c.Nodes() {
		if err := c.Node(i).Client().Del(context.WithoutCancel(tb.Context()), key).Err(); err != nil {
			tb.Errorf("DEL %q on node %d: %v", key, i, err)
		}
	}
}

// addLatency delays every reply of node i of c by latency (a toxiproxy
// latency toxic on the downstream), on existing and new connections. The
// returned func removes the toxic; so does the end of the test.
func addLatency(tb testing.TB, c *cluster.Cluster, i int, latency time.Duration) (remove func()) {
	tb.Helper()
	p := c.Node(i).Proxy()
	const name = "test_latency"
	body := fmt.Sprintf(`{"name":%q,"type":"latency","stream":"downstream","attributes":{"latency":%d}}`,
		name, latency.Milliseconds())
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		tb.Fatalf("add latency toxic to node %d: %v", i, err)
	}
	var once sync.Once
	remove = func() {
		once.Do(func() {
			if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				tb.Errorf("remove latency toxic from node %d: %v", i, err)
			}
		})
	}
	tb.Cleanup(remove)
	return remove
}
