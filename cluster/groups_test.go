package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestProxyGroups(t *testing.T) {
	c := startCluster(t, 2, WithProxyGroups(3))
	ctx := t.Context()
	if c.Groups() != 3 {
		t.Fatalf("Groups() = %d, want 3", c.Groups())
	}
	if !slices.Equal(c.GroupAddrs(0), c.Addrs()) {
		t.Errorf("GroupAddrs(0) = %v, Addrs() = %v", c.GroupAddrs(0), c.Addrs())
	}
	seen := map[string]bool{}
	for _, n := range c.Nodes() {
		if n.GroupProxy(0) != n.Proxy() || n.GroupAddr(0) != n.Addr() {
			t.Errorf("%s: group 0 is not Proxy/Addr", n.Name())
		}
		for g := range c.Groups() {
			addr := n.GroupAddr(g)
			if seen[addr] || addr != c.GroupAddrs(g)[n.Index()] {
				t.Errorf("%s group %d: address %s reused or not in GroupAddrs", n.Name(), g, addr)
			}
			seen[addr] = true
			want := n.Name()
			if g > 0 {
				want = fmt.Sprintf("%s-g%d", n.Name(), g)
			}
			if p := n.GroupProxy(g); p.Name != want || p.Listen != addr || !p.Enabled {
				t.Errorf("%s group %d: proxy %s at %s enabled %v, want %s at %s", n.Name(), g, p.Name, p.Listen, p.Enabled, want, addr)
			}
		}
	}

	// Every group reaches the same process.
	n := c.Node(1)
	w := newClient(n.GroupAddr(1), c.Password())
	t.Cleanup(func() { w.Close() })
	if err := w.Set(ctx, "k", "via g1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for g := range c.Groups() {
		rc := newClient(n.GroupAddr(g), c.Password())
		got, err := rc.Get(ctx, "k").Result()
		rc.Close()
		if err != nil || got != "via g1" {
			t.Errorf("GET through group %d = %q, %v; want %q", g, got, err, "via g1")
		}
	}

	// A black hole on group 1's proxy leaves groups 0 and 2 alone.
	toxic := `{"name":"hole","type":"timeout","attributes":{"timeout":0}}`
	if _, err := n.GroupProxy(1).Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	err := w.Get(tctx, "k").Err()
	cancel()
	if err == nil {
		t.Error("GET through a black-holed group 1 proxy succeeded")
	}
	for _, g := range []int{0, 2} {
		if err := ping(ctx, n.GroupAddr(g), c.Password()); err != nil {
			t.Errorf("PING through group %d while group 1 is cut: %v", g, err)
		}
	}
	if err := n.GroupProxy(1).Toxics.RemoveToxic(ctx, "hole"); err != nil {
		t.Fatal(err)
	}

	// The group proxies follow a restart, which keeps the port.
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	for g := range c.Groups() {
		if err := ping(ctx, n.GroupAddr(g), c.Password()); err != nil {
			t.Errorf("PING through group %d after restart: %v", g, err)
		}
	}
}

func TestProxyGroupsDefault(t *testing.T) {
	c := startCluster(t, 1)
	if c.Groups() != 1 || !slices.Equal(c.GroupAddrs(0), c.Addrs()) || c.Node(0).GroupProxy(0) != c.Node(0).Proxy() {
		t.Errorf("default: %d groups, GroupAddrs(0) %v, Addrs %v", c.Groups(), c.GroupAddrs(0), c.Addrs())
	}
	if _, err := Start(t.Context(), 1, WithDir(t.TempDir()), WithProxyGroups(0)); err == nil || !strings.HasPrefix(err.Error(), "cluster: ") {
		t.Errorf("Start with 0 proxy groups: %v, want an error", err)
	}
}
