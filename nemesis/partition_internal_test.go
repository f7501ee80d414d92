package nemesis

import (
	"slices"
	"testing"
)

// TestPeerPairs: the nodes a partition cuts apart from each other (etcd
// members talk to each other): an isolated node from every other, and
// two sides where no side holds both.
func TestPeerPairs(t *testing.T) {
	for _, tc := range []struct {
		p     Partition
		nodes int
		want  [][2]int
	}{
		{Partition{Shape: ShapeOne, Isolated: []int{1}}, 3, [][2]int{{0, 1}, {1, 2}}},
		{Partition{Shape: ShapeMinority, Isolated: []int{0, 4}}, 5, [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}}},
		{Partition{Shape: ShapeHalves, Sides: [][]int{{0}, {1, 2}}}, 3, [][2]int{{0, 1}, {0, 2}}},
		{Partition{Shape: ShapeSplit, Sides: [][]int{{0, 1, 2}, {2, 3, 4}}}, 5, [][2]int{{0, 3}, {0, 4}, {1, 3}, {1, 4}}},
	} {
		if got := tc.p.peerPairs(tc.nodes); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.p.String(), got, tc.want)
		}
	}
}
