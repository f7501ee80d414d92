package nemesis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// startCluster starts nodes with groups proxy groups each, closed when the
// test ends.
func startCluster(tb testing.TB, nodes, groups int) *cluster.Cluster {
	tb.Helper()
	return testutil.Cluster(tb, cluster.Spec{Nodes: nodes}, cluster.WithProxyGroups(groups))
}

// pingFresh sends PING on a new client through addr, with a timeout.
func pingFresh(addr, password string, timeout time.Duration) error {
	rc := testutil.NewClient(addr, password)
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return rc.Ping(ctx).Err()
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
			testutil.Eventually(tb, 5*time.Second, fmt.Sprintf("PING through %s", px.Name), func() error {
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

// armed is what Arm returned.
type armed struct {
	struck bool
	err    error
}

// armAsync runs f's Arm in the background, for a test that plays the
// changes Arm waits for, and hands its result over on the channel.
func armAsync(t *testing.T, f nemesis.ArmedFault, tg *nemesis.Target, base time.Time) <-chan armed {
	done := make(chan armed, 1)
	go func() {
		struck, err := f.Arm(t.Context(), tg, base)
		done <- armed{struck, err}
	}()
	return done
}
