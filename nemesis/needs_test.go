package nemesis

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// TestNeeds: each kind is refused, in one line saying why, on a run that
// does not meet its Needs: a backend without the abilities it acts
// through, another topology, no TTL.
func TestNeeds(t *testing.T) {
	base := Setup{Lock: "redlock", MultiNode: true, Nodes: 3, Groups: 2, TTL: time.Second, Topology: cluster.TopologyMasters}
	ext := cluster.Spec{Backend: cluster.BackendExternal, External: []string{"h:1"}}
	extProxy := ext
	extProxy.Toxiproxy = "http://h:8474"
	noShim := cluster.Abilities{Process: true, Network: true} // a cluster started without the clock shim
	for _, tc := range []struct {
		name      string
		abilities cluster.Abilities
		change    func(*Setup)
		kind      string
		refused   string // a part of the reason; "" when accepted
	}{
		{"process kill", cluster.Spec{}.Abilities(), nil, "kill", ""},
		{"docker pause", cluster.Spec{Backend: cluster.BackendDocker}.Abilities(), nil, "pause", ""},
		{"docker clock", cluster.Spec{Backend: cluster.BackendDocker}.Abilities(), nil, "clock", ""},
		{"clock without the shim", noShim, nil, "clock", "without the clock shim"},
		{"external kill", ext.Abilities(), nil, "kill", "external backend does not run the nodes, so it cannot kill, restart or pause"},
		{"external pause", extProxy.Abilities(), nil, "pause", "cannot kill, restart or pause"},
		{"external clock", extProxy.Abilities(), nil, "clock", "cannot shift their clocks"},
		{"external partition, toxiproxy", extProxy.Abilities(), nil, "partition", ""},
		{"external latency, toxiproxy", extProxy.Abilities(), nil, "latency", ""},
		{"external partition, no toxiproxy", ext.Abilities(), nil, "partition", "toxiproxy server"},
		{"external latency, no toxiproxy", ext.Abilities(), nil, "latency", "toxiproxy server"},
		{"external client-pause", ext.Abilities(), nil, "client-pause", ""},
		{"nothing made by hand", cluster.Abilities{}, nil, "kill", "cannot kill"},
		{"failover on masters", cluster.Spec{}.Abilities(), nil, "failover", "needs topology failover (a primary, a replica and sentinels), the run's is masters"},
		{"partition on failover", cluster.Spec{}.Abilities(), func(s *Setup) { s.Topology = cluster.TopologyFailover }, "partition", "needs topology masters"},
		{"latency on failover", cluster.Spec{}.Abilities(), func(s *Setup) { s.Topology = cluster.TopologyFailover }, "latency", "needs topology masters"},
		{"client-pause without a TTL", cluster.Spec{}.Abilities(), func(s *Setup) { s.TTL = 0 }, "client-pause", "needs the TTL"},
		{"clock without a TTL", cluster.Spec{}.Abilities(), func(s *Setup) { s.TTL = 0 }, "clock", "needs the TTL"},
		{"client-stop in this process", cluster.Spec{}.Abilities(), nil, "client-stop", "runs in this process (add --client-process"},
		{"client-stop-random in this process", cluster.Spec{}.Abilities(), nil, "client-stop-random", "runs in this process"},
		{"client-stop of client processes", cluster.Spec{}.Abilities(), func(s *Setup) { s.ClientProcesses = true }, "client-stop", ""},
		{"client-stop of Go client processes", cluster.Spec{}.Abilities(), func(s *Setup) { s.ClientProcesses, s.GoClients = true, true }, "client-stop", ""},
		{"client-clock of Go client processes", cluster.Spec{}.Abilities(), func(s *Setup) { s.ClientProcesses, s.GoClients = true, true }, "client-clock", "whose time.Now reads the clock without libc"},
		{"client-clock of Python client processes", cluster.Spec{}.Abilities(), func(s *Setup) { s.ClientProcesses = true }, "client-clock", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Abilities = tc.abilities
			if tc.change != nil {
				tc.change(&s)
			}
			_, err := Check([]string{tc.kind}, s)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("Check: %v, want accepted", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("Check: %v, want refused with %q", err, tc.refused)
			case err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "nemesis: "+tc.kind+" refused: ")):
				t.Errorf("Check: %q is not one line naming the kind", err)
			}
		})
	}
}

// TestNeedsOf: a run is set up for the needs of its kinds together.
func TestNeedsOf(t *testing.T) {
	byName := func(names ...string) []Kind {
		var ks []Kind
		for _, n := range names {
			k, err := Lookup(n)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
		return ks
	}
	if n := NeedsOf(nil); n != (Needs{}) {
		t.Errorf("NeedsOf no kind = %+v", n)
	}
	n := NeedsOf(byName("kill", "clock", "partition"))
	if !n.Cluster.Process || !n.Cluster.Clock || !n.Cluster.Network || n.Groups != 2 || !n.TTL || n.Topology != cluster.TopologyMasters {
		t.Errorf("NeedsOf kill, clock, partition = %+v", n)
	}
	if n := NeedsOf(byName("client-pause", "pause")); n.Cluster.Clock || n.Cluster.Network || n.Groups != 0 {
		t.Errorf("NeedsOf client-pause, pause = %+v: wants neither the shim nor proxies nor groups", n)
	}
}

// TestKindsDeclare: every kind of the list has a name, a summary, a Plan
// and a Decode, and no two share a name.
func TestKindsDeclare(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if k.Name == "" || k.Summary == "" || k.Plan == nil || k.Decode == nil || seen[k.Name] {
			t.Errorf("kind %+v: want a unique name, a summary, Plan and Decode", k)
		}
		seen[k.Name] = true
	}
}
