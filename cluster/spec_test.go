package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSpecWithDefaults: the defaults of each backend and topology, and a
// one-line refusal of every field that does not fit them.
func TestSpecWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Spec
		want Spec   // with defaults, when err is ""
		err  string // a part of the error
	}{
		{"zero", Spec{}, Spec{Nodes: 1, Backend: BackendProcess, Topology: TopologyMasters}, ""},
		{"docker", Spec{Backend: BackendDocker, Nodes: 3}, Spec{Nodes: 3, Backend: BackendDocker, Image: DefaultImage, Topology: TopologyMasters}, ""},
		{"failover", Spec{Topology: TopologyFailover}, Spec{Nodes: 2, Backend: BackendProcess, Topology: TopologyFailover}, ""},
		{"external", Spec{Backend: BackendExternal, External: []string{"h:1", "h:2"}}, Spec{Nodes: 2, Backend: BackendExternal, External: []string{"h:1", "h:2"}, Topology: TopologyMasters}, ""},
		{"unknown backend", Spec{Backend: "vm"}, Spec{}, `unknown backend "vm"`},
		{"unknown topology", Spec{Topology: "ring"}, Spec{}, `unknown topology "ring"`},
		{"image without docker", Spec{Image: "x"}, Spec{}, "an image is for the docker backend"},
		{"external nodes without the external backend", Spec{External: []string{"h:1"}}, Spec{}, "for the external backend"},
		{"toxiproxy without the external backend", Spec{Toxiproxy: "http://h:8474"}, Spec{}, "for the external backend"},
		{"external without nodes", Spec{Backend: BackendExternal}, Spec{}, "needs its nodes"},
		{"external with persistence", Spec{Backend: BackendExternal, External: []string{"h:1"}, Persistence: true}, Spec{}, "persistence"},
		{"external count", Spec{Backend: BackendExternal, External: []string{"h:1"}, Nodes: 2}, Spec{}, "2 nodes, but 1 external"},
		{"external address", Spec{Backend: BackendExternal, External: []string{"h"}}, Spec{}, "want host:port"},
		{"failover on external nodes", Spec{Backend: BackendExternal, External: []string{"h:1", "h:2"}, Topology: TopologyFailover}, Spec{}, "topology failover"},
		{"failover with 3 nodes", Spec{Topology: TopologyFailover, Nodes: 3}, Spec{}, "2 data nodes"},
		{"negative nodes", Spec{Nodes: -1}, Spec{}, "at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.WithDefaults()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Nodes != tc.want.Nodes || got.Backend != tc.want.Backend || got.Image != tc.want.Image || got.Topology != tc.want.Topology {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAbilities: what each backend can be opened to do, what an opened
// cluster can do, and why not, in one line naming the backend.
func TestAbilities(t *testing.T) {
	all := Abilities{Process: true, Clock: true, Network: true}
	for _, s := range []Spec{{}, {Backend: BackendDocker}} {
		if why := s.Abilities().Missing(all); why != "" {
			t.Errorf("%s backend: %s", s.backend(), why)
		}
	}
	ext := Spec{Backend: BackendExternal, External: []string{"h:1"}}
	for _, tc := range []struct {
		need Abilities
		want string
	}{
		{Abilities{Process: true}, "cannot kill, restart or pause"},
		{Abilities{Clock: true}, "cannot shift their clocks"},
		{Abilities{Network: true}, "toxiproxy"},
	} {
		if why := ext.Abilities().Missing(tc.need); !strings.Contains(why, tc.want) || !strings.Contains(why, "external backend") {
			t.Errorf("external backend, need %+v: %q, want %q", tc.need, why, tc.want)
		}
	}
	ext.Toxiproxy = "http://h:8474"
	if why := ext.Abilities().Missing(Abilities{Network: true}); why != "" {
		t.Errorf("external backend with a toxiproxy server: %s", why)
	}

	// Opened: the clock only with the shim.
	c := startCluster(t, 1)
	if a := c.Abilities(); !a.Process || !a.Network || a.Clock {
		t.Errorf("a process cluster without the shim: %+v", a)
	}
	if why := c.Abilities().Missing(Abilities{Clock: true}); !strings.Contains(why, "clock shim") {
		t.Errorf("a cluster without the shim, need the clock: %q", why)
	}
}

// TestOpen: Open starts the masters and the failover topology a Spec
// describes; a failover cluster's Close stops its sentinels too.
func TestOpen(t *testing.T) {
	c, err := Open(t.Context(), Spec{Nodes: 2, Password: "pw-of-the-spec"}, WithDir(t.TempDir()), WithProxyGroups(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes()) != 2 || c.Groups() != 2 || c.Password() != "pw-of-the-spec" || c.Failover() != nil || c.Backend() != BackendProcess {
		t.Errorf("opened %d nodes, %d groups, password %q, failover %v, backend %s", len(c.Nodes()), c.Groups(), c.Password(), c.Failover(), c.Backend())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c, err = Open(t.Context(), Spec{Topology: TopologyFailover}, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Failover()
	if f == nil || f.Cluster() != c || len(c.Nodes()) != 2 {
		t.Fatalf("failover topology %v of %d nodes", f, len(c.Nodes()))
	}
	addrs := f.SentinelAddrs()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ctx, cancel := context.WithTimeout(t.Context(), readyTimeout)
		err := ping(ctx, a, f.SentinelPassword())
		cancel()
		if err == nil {
			t.Errorf("sentinel %s still answers after the cluster's Close", a)
		}
	}
	if err := f.Close(); err != nil {
		t.Errorf("Failover.Close after Cluster.Close: %v", err)
	}

	if _, err := Open(t.Context(), Spec{Backend: "vm"}); err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Open of a bad spec: %v", err)
	}
}

// TestSpecNodes: which backends run their nodes, and which topologies and
// backends fix how many there are.
func TestSpecNodes(t *testing.T) {
	ext := Spec{Backend: BackendExternal, External: []string{"h:1", "h:2"}}
	for _, tc := range []struct {
		s           Spec
		runs, fixed bool
	}{
		{Spec{}, true, false},
		{Spec{Backend: BackendDocker}, true, false},
		{Spec{Topology: TopologyFailover}, true, true},
		{ext, false, true},
	} {
		if tc.s.RunsNodes() != tc.runs || tc.s.NodesFixed() != tc.fixed {
			t.Errorf("%+v: runs its nodes %v, fixes their number %v; want %v, %v", tc.s, tc.s.RunsNodes(), tc.s.NodesFixed(), tc.runs, tc.fixed)
		}
	}
}
