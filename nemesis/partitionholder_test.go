package nemesis_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestPartitionHolder: at a grant, the holder's client group is cut off
// the nodes that granted the hold (every node when not reported), and
// only its group; the cut heals itself after Cut, and the heal clears
// what is left.
func TestPartitionHolder(t *testing.T) {
	c := startCluster(t, 3, 2)
	cuts := func(node, group int) bool {
		names, err := c.Node(node).GroupLink(group).Toxics(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "holder_cut_") })
	}
	base := time.Now()
	for _, tc := range []struct {
		name  string
		hold  nemesis.Hold
		nodes []int
	}{
		{"reported", nemesis.Hold{Client: 3, Group: 1, Key: "k0", Token: "t", Granted: []int{0, 2}, Reported: true, ValidUntil: int64(time.Hour)}, []int{0, 2}},
		{"not reported", nemesis.Hold{Client: 2, Group: 0, Key: "k0", Token: "t", ValidUntil: int64(time.Hour)}, []int{0, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := decodeKind(t, "partition-holder", `{"cut": "300ms", "window": "1s", "active": "1s"}`)
			v := &scriptView{log: []nemesis.Change{{Seq: 1, Kind: nemesis.HoldGranted, Hold: tc.hold}}}
			tg := &nemesis.Target{Cluster: c, View: v}
			if struck, err := f.Arm(t.Context(), tg, base); err != nil || !struck {
				t.Fatalf("Arm: %v, %v", struck, err)
			}
			for n := range 3 {
				for g := range 2 {
					want := g == tc.hold.Group && slices.Contains(tc.nodes, n)
					if got := cuts(n, g); got != want {
						t.Errorf("node %d, group %d: cut %v, want %v", n, g, got, want)
					}
				}
			}
			if s := f.String(); !strings.Contains(s, "cut client group") || !strings.Contains(s, "for 300ms, at client") {
				t.Errorf("String: %q", s)
			}
			testutil.Until(t, 10*time.Second, "the cut to heal itself", func() bool {
				for n := range 3 {
					if cuts(n, tc.hold.Group) {
						return false
					}
				}
				return true
			})
			if err := f.Heal(t.Context(), tg); err != nil {
				t.Errorf("heal after the cut: %v", err)
			}
		})
	}
	s := nemesis.Setup{Lock: "setnx", Nodes: 1, Groups: 1, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: cluster.Spec{}.Abilities()}
	if _, err := nemesis.Check([]string{"partition-holder"}, s); err != nil {
		t.Errorf("Check: %v; a run is set up for the kind's groups, not refused for them", err)
	}
}
