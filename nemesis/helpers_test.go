package nemesis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
)

// startCluster starts nodes with groups proxy groups each, logging under a
// test directory, and closes them when the test ends.
func startCluster(tb testing.TB, nodes, groups int) *cluster.Cluster {
	tb.Helper()
	c, err := cluster.Start(context.Background(), nodes, cluster.WithDir(tb.TempDir()), cluster.WithProxyGroups(groups))
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

var silenceOnce sync.Once

// newClient returns a client from dial, closed when the test ends.
func newClient(tb testing.TB, addr, password string) *redis.Client {
	tb.Helper()
	rc := dial(addr, password)
	tb.Cleanup(func() { rc.Close() })
	return rc
}

// dial returns a client like the cluster's and the locks': one attempt
// per command, context deadlines obeyed, one round trip (HELLO 2) to
// connect.
func dial(addr, password string) *redis.Client {
	silenceOnce.Do(func() { redis.SetLogger(&logging.VoidLogger{}) })
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		Password:                 password,
		Protocol:                 2,
		DisableIdentity:          true,
		MaxRetries:               -1,
		DialerRetries:            1,
		DialTimeout:              2 * time.Second,
		ReadTimeout:              2 * time.Second,
		WriteTimeout:             2 * time.Second,
		ContextTimeoutEnabled:    true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// pingFresh sends PING on a new client through addr, with a timeout.
func pingFresh(addr, password string, timeout time.Duration) error {
	rc := dial(addr, password)
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return rc.Ping(ctx).Err()
}

// eventually polls cond until it returns nil, failing the test with its
// last error after 5 s.
func eventually(tb testing.TB, what string, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertHealthy fails the test unless every node runs unpaused, every
// proxy of every group is enabled with no toxic, and PING goes through
// every proxy (polled: a restarted node may still be loading).
func assertHealthy(tb testing.TB, c *cluster.Cluster) {
	tb.Helper()
	for _, n := range c.Nodes() {
		if !n.Running() || n.Paused() {
			tb.Errorf("%s: running %v, paused %v", n.Name(), n.Running(), n.Paused())
		}
		for g := range c.Groups() {
			px := n.GroupProxy(g)
			if toxics := px.Toxics.GetToxicArray(); !px.Enabled || len(toxics) != 0 {
				tb.Errorf("proxy %s: enabled %v, %d toxics left", px.Name, px.Enabled, len(toxics))
			}
			eventually(tb, fmt.Sprintf("PING through %s", px.Name), func() error {
				return pingFresh(n.GroupAddr(g), c.Password(), time.Second)
			})
		}
	}
}

// recorder is a nemesis.Recorder that keeps the events.
type recorder struct {
	mu     sync.Mutex
	events []history.Event
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) Append(e history.Event) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return nil
}

func (r *recorder) Events() []history.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]history.Event(nil), r.events...)
}
