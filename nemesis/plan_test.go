package nemesis_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/nemesis"
)

// noShim is what a process cluster without the clock shim can do.
var noShim = cluster.Abilities{Process: true, Network: true}

var (
	redlock5 = nemesis.Setup{Lock: "redlock", MultiNode: true, Nodes: 5, Groups: 2, TTL: time.Second, Topology: "masters", Abilities: noShim}
	setnx    = nemesis.Setup{Lock: "setnx", MultiNode: false, Nodes: 1, Groups: 2, TTL: time.Second, Topology: "masters", Abilities: noShim}
)

func with(s nemesis.Setup, f func(*nemesis.Setup)) nemesis.Setup {
	f(&s)
	return s
}

// planFaults draws n faults of kind from one seed.
func planFaults(tb testing.TB, kind string, s nemesis.Setup, seed uint64, n int) []nemesis.Fault {
	tb.Helper()
	ks, err := nemesis.Check([]string{kind}, s)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	fs := make([]nemesis.Fault, n)
	for i := range fs {
		fs[i] = ks[0].Plan(rng, s)
	}
	return fs
}

// TestPlanDeterministic checks that one seed gives the same schedule, to
// the byte, and another seed a different one.
func TestPlanDeterministic(t *testing.T) {
	kinds, err := nemesis.Check([]string{"partition", "latency", "kill", "pause"}, redlock5)
	if err != nil {
		t.Fatal(err)
	}
	plan := func(seed int64) string {
		sc, err := nemesis.Plan(rand.New(rand.NewPCG(uint64(seed), 0)), seed, kinds, redlock5, time.Minute, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := plan(42), plan(42)
	if a != b {
		t.Errorf("seed 42 planned two schedules:\n%s\n%s", a, b)
	}
	if a == plan(43) {
		t.Error("seeds 42 and 43 planned the same schedule")
	}
}

// TestPlanRoundTrip checks, for every kind that accepts the setup, that
// each drawn fault fits the setup and decodes from its own JSON to an
// equal fault with the same description.
func TestPlanRoundTrip(t *testing.T) {
	for _, s := range []nemesis.Setup{redlock5, setnx, with(redlock5, func(s *nemesis.Setup) { s.Nodes, s.Groups = 3, 1 })} {
		for _, k := range nemesis.Kinds() {
			if _, err := nemesis.Check([]string{k.Name}, s); err != nil {
				continue
			}
			for _, f := range planFaults(t, k.Name, s, 1, 50) {
				if r, ok := f.(nemesis.RefusingFault); ok {
					if why := r.Refuse(s); why != "" {
						t.Errorf("%s on %s: planned %q, which it refuses: %s", k.Name, s.Lock, f, why)
					}
				}
				b, err := json.Marshal(f)
				if err != nil {
					t.Fatal(err)
				}
				g, err := k.Decode(b)
				if err != nil {
					t.Errorf("%s: decode %s: %v", k.Name, b, err)
					continue
				}
				if !reflect.DeepEqual(f, g) || f.String() != g.String() {
					t.Errorf("%s: %s decoded to %#v, want %#v", k.Name, b, g, f)
				}
			}
		}
	}
}

// TestPlanPartition checks which shapes each setup draws and that the
// drawn nodes have the shape's sizes.
func TestPlanPartition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      nemesis.Setup
		shapes []string
	}{
		{"redlock 5 nodes 2 groups", redlock5, []string{"halves", "majority", "minority", "one", "split"}},
		{"redlock 5 nodes 1 group", with(redlock5, func(s *nemesis.Setup) { s.Groups = 1 }), []string{"majority", "minority", "one"}},
		{"redlock 2 nodes 2 groups", with(redlock5, func(s *nemesis.Setup) { s.Nodes = 2 }), []string{"halves", "majority", "one"}},
		{"setnx 2 groups", setnx, []string{"one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.s.Nodes
			seen := map[string]bool{}
			for _, f := range planFaults(t, "partition", tc.s, 7, 200) {
				p := f.(*nemesis.Partition)
				seen[p.Shape] = true
				var ok bool
				switch p.Shape {
				case "one":
					ok = len(p.Isolated) == 1 && (tc.s.MultiNode || p.Isolated[0] == 0)
				case "minority":
					ok = len(p.Isolated) == (n-1)/2
				case "majority":
					ok = len(p.Isolated) == n/2+1
				case "halves":
					ok = len(p.Sides[0])+len(p.Sides[1]) == n && max(len(p.Sides[0]), len(p.Sides[1])) <= n/2+1
				case "split":
					all := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(p.Sides[0]), p.Sides[1]...))))
					ok = len(p.Sides[0]) == n/2+1 && len(p.Sides[1]) == n/2+1 && len(all) == n
				}
				if !ok {
					t.Errorf("planned %s: %+v", f, p)
				}
			}
			var got []string
			for sh := range seen {
				got = append(got, sh)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.shapes) {
				t.Errorf("shapes drawn %v, want %v", got, tc.shapes)
			}
		})
	}
}

// TestPlanLatency checks that delays come from {TTL/10, TTL/2, 0.9 TTL}
// with at most 10% jitter, each often, on all nodes or a minority.
func TestPlanLatency(t *testing.T) {
	ttl := redlock5.TTL
	seen := map[time.Duration]int{}
	for _, f := range planFaults(t, "latency", redlock5, 3, 300) {
		l := f.(*nemesis.Latency)
		d := time.Duration(l.Latency)
		seen[d]++
		if l.Jitter < 0 || l.Jitter > l.Latency/10 {
			t.Errorf("%s: jitter over 10%%", l)
		}
		if k := len(l.Nodes); k != 5 && k > 2 {
			t.Errorf("%s: %d nodes, neither all nor a minority", l, k)
		}
	}
	for _, d := range []time.Duration{ttl / 10, ttl / 2, ttl * 9 / 10} {
		if seen[d] < 50 {
			t.Errorf("latency %v drawn %d times out of 300", d, seen[d])
		}
	}
	if len(seen) != 3 {
		t.Errorf("latencies drawn: %v", seen)
	}
	for _, f := range planFaults(t, "latency", setnx, 3, 20) {
		if l := f.(*nemesis.Latency); !slices.Equal(l.Nodes, []int{0}) {
			t.Errorf("setnx: %s, want n1 only", l)
		}
	}
}

// TestRefuse checks the one-line reasons for what cannot be done.
func TestRefuse(t *testing.T) {
	failover := with(redlock5, func(s *nemesis.Setup) { s.Topology = "failover" })
	oneGroup := with(redlock5, func(s *nemesis.Setup) { s.Groups = 1 })
	threeNodes := with(redlock5, func(s *nemesis.Setup) { s.Nodes = 3 })
	twoNodes := with(redlock5, func(s *nemesis.Setup) { s.Nodes = 2 })
	for _, kind := range []string{"partition", "latency"} {
		if _, err := nemesis.Check([]string{kind}, failover); err == nil || !strings.Contains(err.Error(), "failover") {
			t.Errorf("%s with the failover topology: %v, want a refusal naming failover", kind, err)
		}
		for _, s := range []nemesis.Setup{redlock5, setnx, oneGroup} {
			if _, err := nemesis.Check([]string{kind}, s); err != nil {
				t.Errorf("%s on %+v: %v", kind, s, err)
			}
		}
	}
	halves := &nemesis.Partition{Shape: "halves", Sides: [][]int{{0, 1}, {2, 3, 4}}}
	for _, tc := range []struct {
		f    nemesis.RefusingFault
		s    nemesis.Setup
		want string // "" for none
	}{
		{&nemesis.Partition{Shape: "one", Isolated: []int{0}}, setnx, ""},
		{&nemesis.Partition{Shape: "one", Isolated: []int{4}}, redlock5, ""},
		{&nemesis.Partition{Shape: "one", Isolated: []int{5}}, redlock5, "no node n6"},
		{&nemesis.Partition{Shape: "minority", Isolated: []int{0}}, setnx, "multi-node"},
		{halves, redlock5, ""},
		{halves, oneGroup, "needs at least 2 client groups"},
		{halves, threeNodes, "no node n4"},
		{&nemesis.Partition{Shape: "halves", Sides: [][]int{{0}, {1, 2}}}, redlock5, "do not cover the 5 nodes"},
		{&nemesis.Partition{Shape: "minority", Isolated: []int{0, 1, 2}}, redlock5, "not a minority"},
		{&nemesis.Partition{Shape: "minority", Isolated: []int{0}}, twoNodes, "needs at least 3 nodes"},
		{&nemesis.Partition{Shape: "majority", Isolated: []int{0, 1}}, redlock5, "not a majority"},
		{&nemesis.Partition{Shape: "split", Sides: [][]int{{0, 1}, {1}}}, twoNodes, "needs at least 3 nodes"},
		{&nemesis.Partition{Shape: "split", Sides: [][]int{{0, 1, 2}, {2, 3}}}, redlock5, "must each be a majority"},
		{&nemesis.Latency{Nodes: []int{4}, Latency: nemesis.Duration(time.Millisecond)}, redlock5, ""},
		{&nemesis.Latency{Nodes: []int{1}, Latency: nemesis.Duration(time.Millisecond)}, setnx, "no node n2"},
	} {
		if got := tc.f.Refuse(tc.s); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s on %d nodes, %d groups, multi-node %v: Refuse = %q, want %q", tc.f, tc.s.Nodes, tc.s.Groups, tc.s.MultiNode, got, tc.want)
		} else if strings.Contains(got, "\n") {
			t.Errorf("%s: Refuse gave more than one line: %q", tc.f, got)
		}
	}
}

// TestParamErrors checks that parameters that cannot describe a fault are
// rejected, whatever the setup's nodes: by Decode (an unknown field, a
// wrong type) or by the fault's Refuse.
func TestParamErrors(t *testing.T) {
	many := with(redlock5, func(s *nemesis.Setup) { s.Nodes = 9 })
	for _, tc := range []struct{ kind, params, want string }{
		{"partition", `{"shape":"ring","isolated":[0]}`, "unknown shape"},
		{"partition", `{"shape":"one","isolated":[0],"groups":2}`, "unknown field"},
		{"partition", `{"shape":"one","isolated":[0,1]}`, "isolates 1 node"},
		{"partition", `{"shape":"one","sides":[[0],[1]]}`, "takes isolated"},
		{"partition", `{"shape":"halves","isolated":[0]}`, "takes sides"},
		{"partition", `{"shape":"halves","sides":[[0,1],[1,2]]}`, "overlap"},
		{"partition", `{"shape":"split","sides":[[0,1],[2,3]]}`, "must overlap"},
		{"partition", `{"shape":"minority","isolated":[2,1]}`, "increasing order"},
		{"latency", `{"nodes":[0],"latency":"0s","jitter":"0s"}`, "latency ≥ 1ms"},
		{"latency", `{"nodes":[0],"latency":"10ms","jitter":"20ms"}`, "jitter ≤ latency"},
		{"latency", `{"nodes":[],"latency":"10ms","jitter":"0s"}`, "no nodes"},
		{"latency", `{"nodes":[0],"latency":10}`, "duration"},
	} {
		k, err := nemesis.Lookup(tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		if why := decodeRefuse(k, tc.params, many); !strings.Contains(why, tc.want) {
			t.Errorf("%s %s: %q, want an error with %q", tc.kind, tc.params, why, tc.want)
		}
	}
}

// decodeRefuse decodes params with k and returns the error, or else what
// the fault refuses of s ("" for nothing).
func decodeRefuse(k nemesis.Kind, params string, s nemesis.Setup) string {
	f, err := k.Decode(json.RawMessage(params))
	if err != nil {
		return err.Error()
	}
	if r, ok := f.(nemesis.RefusingFault); ok {
		return r.Refuse(s)
	}
	return ""
}

// TestLoadRefusesStep checks that Load refuses, for every kind, a step
// that names a node, a client group or a parameter the run does not
// have, with a one-line reason naming the step.
func TestLoadRefusesStep(t *testing.T) {
	oneGroup := with(redlock5, func(s *nemesis.Setup) { s.Groups = 1 })
	shim := with(redlock5, func(s *nemesis.Setup) { s.Abilities.Clock = true })
	failover := with(setnx, func(s *nemesis.Setup) { s.Topology, s.Nodes = "failover", 2 })
	for _, tc := range []struct {
		name, kind, params string
		s                  nemesis.Setup
		want               string // "" for accepted
	}{
		{"partition fits", "partition", `{"shape": "halves", "sides": [[0, 1], [2, 3, 4]]}`, redlock5, ""},
		{"partition between groups, one group", "partition", `{"shape": "halves", "sides": [[0, 1], [2, 3, 4]]}`, oneGroup, "step 0 (partition) refused: shape halves needs at least 2 client groups, the run has 1"},
		{"partition of node 99", "partition", `{"shape": "one", "isolated": [99]}`, redlock5, "step 0 (partition) refused: isolated: no node n100: the run has 5"},
		{"latency of node 99", "latency", `{"nodes": [99], "latency": "10ms", "jitter": "0s"}`, redlock5, "step 0 (latency) refused: no node n100: the run has 5"},
		{"kill fits", "kill", `{"nodes": [4], "restart_delay": "0s"}`, redlock5, ""},
		{"kill of node 99", "kill", `{"nodes": [99], "restart_delay": "0s"}`, redlock5, "step 0 (kill) refused: kill: no node n100: the run has 5"},
		{"kill of no node", "kill", `{"nodes": []}`, redlock5, "step 0 (kill) refused: kill: no nodes"},
		{"kill with a negative delay", "kill", `{"nodes": [0], "restart_delay": "-1s"}`, redlock5, "step 0 (kill) refused: kill: negative restart delay -1s"},
		{"pause of node 99", "pause", `{"nodes": [99]}`, redlock5, "step 0 (pause) refused: pause: no node n100: the run has 5"},
		{"pause of a negative node", "pause", `{"nodes": [-1]}`, redlock5, "step 0 (pause) refused: pause: negative node index -1"},
		{"clock of node 99", "clock", `{"nodes": [99], "mode": "jump", "offset": "2s"}`, shim, "step 0 (clock) refused: clock: no node n100: the run has 5"},
		{"client-pause of nothing", "client-pause", `{"stall": "0s"}`, redlock5, "step 0 (client-pause) refused: client-pause: stall 0s: want a positive stall"},
		{"client-pause with an unknown parameter", "client-pause", `{"stall": "1s", "client": 3}`, redlock5, `unknown field "client"`},
		{"failover with a negative hold", "failover", `{"hold_old_primary": "-1s"}`, failover, "step 0 (failover) refused: failover: negative hold_old_primary -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "schedule.json")
			sc := fmt.Sprintf(`{"seed": 1, "kinds": [%q], "interval": "1s", "steps": [{"kind": %q, "at": "1s", "for": "1s", "params": %s}]}`, tc.kind, tc.kind, tc.params)
			if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := nemesis.Load(path, tc.s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
				t.Fatalf("Load: %v; want one line containing %q", err, tc.want)
			}
		})
	}
}

// TestScheduleKinds: a schedule's kinds are those it lists, then those of
// its steps that the list lacks.
func TestScheduleKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedule.json")
	sc := `{"seed": 1, "kinds": ["pause"], "interval": "1s", "steps": [
		{"kind": "clock", "at": "1s", "for": "1s", "params": {}},
		{"kind": "pause", "at": "3s", "for": "1s", "params": {}},
		{"kind": "partition", "at": "5s", "for": "1s", "params": {}}]}`
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds, err := nemesis.ScheduleKinds(path)
	if err != nil || !slices.Equal(kinds, []string{"pause", "clock", "partition"}) {
		t.Fatalf("ScheduleKinds = %v, %v; want [pause clock partition]", kinds, err)
	}
	if _, err := nemesis.ScheduleKinds(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("ScheduleKinds of a missing file succeeded")
	}
}
