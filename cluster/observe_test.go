package cluster

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen collects an observer's notifications.
type seen struct {
	mu  sync.Mutex
	obs []Observation
}

func (s *seen) add(o Observation) {
	s.mu.Lock()
	s.obs = append(s.obs, o)
	s.mu.Unlock()
}

// has reports whether a notification of event on key was seen.
func (s *seen) has(key, event string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.obs {
		if o.Key == key && o.Event == event {
			return true
		}
	}
	return false
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.obs)
}

// TestObserve: the observer sees a lock key set, deleted, extended and
// expired, only the keys it keeps; it sees them while the node's proxy
// is cut (it bypasses the proxy); and after the node restarts it sets
// notify-keyspace-events again and sees the new keys.
func TestObserve(t *testing.T) {
	c := startCluster(t, 1)
	ctx := t.Context()
	n := c.Node(0)
	var s seen
	o, err := n.Observe(ctx, func(k string) bool { return strings.HasPrefix(k, "k") }, s.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Stop() })
	rc := proxyClient(t, c, 0)
	for _, cmd := range [][]any{
		{"set", "k1", "a", "nx", "px", 30},
		{"set", "k2", "b", "nx", "px", 60000},
		{"pexpire", "k2", 60000},
		{"del", "k2"},
		{"set", "other", "c"},
	} {
		if err := rc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	for _, want := range [][2]string{{"k1", "set"}, {"k2", "set"}, {"k2", "expire"}, {"k2", "del"}, {"k1", "expired"}} {
		eventually(t, 10*time.Second, fmt.Sprintf("%s %s observed", want[1], want[0]), func() bool { return s.has(want[0], want[1]) })
	}
	if s.has("other", "set") {
		t.Error("a key the observer does not keep was reported")
	}
	for _, o := range s.obs {
		if o.Node != 0 || o.At.IsZero() {
			t.Errorf("observation %+v: want node 0 and a time", o)
		}
	}

	// The proxy cut: clients cannot reach the node; the observer still
	// sees what the node does.
	n.Proxy().Stop()
	if err := n.Client().Set(ctx, "k3", "d", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "set k3 observed while the proxy is cut", func() bool { return s.has("k3", "set") })
	if err := n.Proxy().Start(); err != nil {
		t.Fatal(err)
	}

	// A restart without persistence: the configuration is gone with the
	// process; the observer reconnects and sets it again.
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "a set after the restart observed", func() bool {
		n.Client().Set(ctx, "k4", "e", 0)
		return s.has("k4", "set")
	})
	if conns, err := o.Connects(); conns < 2 || err != nil {
		t.Errorf("Connects() = %d, %v; want at least 2 (a reconnection after the restart), nil", conns, err)
	}
	if err := o.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	before := s.count()
	if err := n.Client().Set(ctx, "k5", "f", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Client().Del(ctx, "k5").Err(); err != nil {
		t.Fatal(err)
	}
	if err := o.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if s.count() != before {
		t.Error("notifications reported after Stop")
	}
}
