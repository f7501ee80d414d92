package cluster

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// remoteToxiproxyServer serves a toxiproxy HTTP API on 127.0.0.1, as if on
// another machine, until the test ends.
func remoteToxiproxyServer(tb testing.TB) (*toxiproxy.ApiServer, string) {
	tb.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	ts := httptest.NewServer(srv.Routes())
	tb.Cleanup(func() {
		ts.Close()
		srv.Collection.Clear()
	})
	return srv, ts.URL
}

// connectTB connects to nodes someone else runs and closes the cluster
// when the test ends.
func connectTB(tb testing.TB, addrs []string, opts ...Option) *Cluster {
	tb.Helper()
	return openTB(tb, Spec{Backend: BackendExternal, External: addrs}, opts...)
}

func directAddrs(c *Cluster) []string {
	var addrs []string
	for _, n := range c.Nodes() {
		addrs = append(addrs, n.DirectAddr())
	}
	return addrs
}

func TestConnectThroughRemoteToxiproxy(t *testing.T) {
	ctx := t.Context()
	remote := startCluster(t, 2) // the nodes "someone else" runs
	srv, url := remoteToxiproxyServer(t)
	c, err := Connect(ctx, directAddrs(remote), WithPassword(remote.Password()), WithToxiproxy(url), WithProxyGroups(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Backend(); got != BackendExternal {
		t.Errorf("Backend() = %q", got)
	}
	if got, want := strings.Join(c.Versions(), ","), strings.Join(remote.Versions(), ","); got != want || got == "" {
		t.Errorf("Versions() = %q, want %q", got, want)
	}
	if c.Toxiproxy() != nil || c.Dir() != "" || c.Node(0).Proxy() != nil || c.Node(0).LogPath() != "" {
		t.Error("an external cluster has an in-process proxy or a directory")
	}
	if n := len(srv.Collection.Proxies()); n != 4 {
		t.Errorf("%d proxies on the toxiproxy server, want 2 nodes × 2 groups", n)
	}
	for g := range 2 {
		for i, addr := range c.GroupAddrs(g) {
			if addr == remote.Node(i).DirectAddr() {
				t.Errorf("group %d dials n%d directly", g, i+1)
			}
			if err := ping(ctx, addr, c.Password()); err != nil {
				t.Errorf("group %d, n%d: %v", g, i+1, err)
			}
		}
	}

	// Latency on group 1's link to n1 slows that path only.
	l := c.Node(0).GroupLink(1)
	if !l.Remote() || !strings.HasPrefix(l.Name(), "locktorture-") || !strings.HasSuffix(l.Name(), "-n1-g1") {
		t.Errorf("link %q (remote %v)", l.Name(), l.Remote())
	}
	lat := Toxic{Name: "lat", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]int{"latency": 300}}
	if err := l.AddToxic(ctx, lat); err != nil {
		t.Fatal(err)
	}
	if names, err := l.Toxics(ctx); err != nil || len(names) != 1 || names[0] != "lat" {
		t.Errorf("Toxics() = %q, %v", names, err)
	}
	for _, tc := range []struct {
		addr string
		slow bool
	}{{c.Node(0).GroupAddr(1), true}, {c.Node(0).Addr(), false}} {
		start := time.Now()
		if err := ping(ctx, tc.addr, c.Password()); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); (d >= 300*time.Millisecond) != tc.slow {
			t.Errorf("PING through %s took %v; slowed: want %v", tc.addr, d, tc.slow)
		}
	}
	if err := l.RemoveToxic(ctx, "lat"); err != nil {
		t.Fatal(err)
	}
	if err := l.RemoveToxic(ctx, "lat"); !errors.Is(err, ErrNoToxic) {
		t.Errorf("second RemoveToxic: %v, want ErrNoToxic", err)
	}

	// A black hole both ways: PING through the link times out, directly it works.
	for _, s := range []string{"upstream", "downstream"} {
		if err := c.Node(1).Link().AddToxic(ctx, Toxic{Name: "cut_" + s, Type: "timeout", Stream: s, Toxicity: 1, Attributes: map[string]int{"timeout": 0}}); err != nil {
			t.Fatal(err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = ping(pctx, c.Node(1).Addr(), c.Password())
	cancel()
	if err == nil {
		t.Error("PING through a cut link answered")
	}
	if err := c.Node(1).Ping(ctx); err != nil {
		t.Errorf("direct PING during the cut: %v", err)
	}

	for _, op := range []struct {
		name string
		f    func() error
	}{
		{"Kill", c.Node(0).Kill},
		{"Pause", c.Node(0).Pause},
		{"Resume", c.Node(0).Resume},
		{"Restart", func() error { return c.Node(0).Restart(ctx) }},
		{"SetClockOffset", func() error { return c.Node(0).SetClockOffset(time.Second) }},
	} {
		if err := op.f(); err == nil {
			t.Errorf("%s of an external node: no error", op.name)
		} else if op.name != "SetClockOffset" && !errors.Is(err, ErrNotManaged) {
			t.Errorf("%s of an external node: %v, want ErrNotManaged", op.name, err)
		}
	}
	if !c.Node(0).Running() || c.Node(0).Pid() != 0 {
		t.Errorf("external node: Running %v, Pid %d", c.Node(0).Running(), c.Node(0).Pid())
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Collection.Proxies()); n != 0 {
		t.Errorf("%d proxies left on the toxiproxy server after Close", n)
	}
	for _, n := range remote.Nodes() {
		if err := n.Ping(ctx); err != nil {
			t.Errorf("external %s after Close: %v", n.Name(), err)
		}
	}
}

func TestConnectDirect(t *testing.T) {
	remote := startCluster(t, 1)
	c := connectTB(t, directAddrs(remote), WithPassword(remote.Password()))
	if c.Node(0).Addr() != remote.Node(0).DirectAddr() || c.Node(0).Link() != nil {
		t.Errorf("without toxiproxy: Addr %s, Link %v; want the node itself and no link", c.Node(0).Addr(), c.Node(0).Link())
	}
	if err := c.Node(0).Client().Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestConnectErrors(t *testing.T) {
	remote := startCluster(t, 1)
	addr := remote.Node(0).DirectAddr()
	for _, tc := range []struct {
		name  string
		addrs []string
		opts  []Option
		want  string
	}{
		{"no nodes", nil, nil, "at least one node"},
		{"not host:port", []string{"localhost"}, nil, "want host:port"},
		{"twice", []string{addr, addr}, nil, "given twice"},
		{"wrong password", []string{addr}, []Option{WithPassword("nope")}, "WRONGPASS"},
		{"clock shim", []string{addr}, []Option{WithClockShim()}, "the clock shim needs nodes that are containers of this machine"},
		{"bad toxiproxy URL", []string{addr}, []Option{WithPassword(remote.Password()), WithToxiproxy("localhost:8474")}, "want http://host:port"},
		{"no toxiproxy there", []string{addr}, []Option{WithPassword(remote.Password()), WithToxiproxy("http://127.0.0.1:1")}, "toxiproxy server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(t.Context(), tc.addrs, tc.opts...)
			if err == nil {
				c.Close()
			}
			if err == nil || !strings.HasPrefix(err.Error(), "cluster: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Connect: %v; want an error with %q", err, tc.want)
			}
		})
	}
}
