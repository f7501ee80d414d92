package nemesis_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/nemesis"
)

var update = flag.Bool("update", false, "rewrite testdata/plans.golden")

// TestPlansGolden: the schedules every kind draws from three seeds on a
// range of runs stay what they were, to the byte: a seed replays the same
// faults after any refactoring (go test -run TestPlansGolden -update
// rewrites the file, for a change of a kind's drawing that is meant).
func TestPlansGolden(t *testing.T) {
	every := cluster.Abilities{Process: true, Clock: true, Network: true, PowerLoss: true, Links: true}
	setups := []nemesis.Setup{
		{Lock: "setnx", Nodes: 1, Groups: 2, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: every, Persistent: true, ClientProcesses: true},
		{Lock: "redlock", MultiNode: true, Nodes: 3, Groups: 2, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: every, ClientProcesses: true},
		{Lock: "redlock", MultiNode: true, Nodes: 5, Groups: 2, TTL: 2 * time.Second, Topology: cluster.TopologyMasters, Abilities: every, Persistent: true, Compose: 2},
		{Lock: "setnx", Nodes: 2, Groups: 2, TTL: time.Second, Topology: cluster.TopologyFailover, Abilities: every},
		{Lock: "setnx", Nodes: 6, Groups: 2, TTL: time.Second, Topology: cluster.TopologyCluster, Abilities: every},
	}
	var got bytes.Buffer
	for i, s := range setups {
		for _, k := range nemesis.Kinds() {
			ks, err := nemesis.Check([]string{k.Name}, s)
			if err != nil {
				continue
			}
			for seed := int64(1); seed <= 3; seed++ {
				sc, err := nemesis.Plan(rand.New(rand.NewPCG(uint64(seed), 0)), seed, ks, s, 20*time.Second, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(sc)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&got, "setup %d %s seed %d: %s\n", i, k.Name, seed, b)
			}
		}
	}
	path := filepath.Join("testdata", "plans.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
	for j := range max(len(gl), len(wl)) {
		var g, w []byte
		if j < len(gl) {
			g = gl[j]
		}
		if j < len(wl) {
			w = wl[j]
		}
		if !bytes.Equal(g, w) {
			t.Fatalf("line %d differs from %s (go test -run TestPlansGolden -update rewrites it):\n got %s\nwant %s", j+1, path, g, w)
		}
	}
}
