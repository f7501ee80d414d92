package nemesis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/cluster"
)

// nodeSpec names which nodes of a run a fault takes: the one vocabulary
// every kind draws from, after Jepsen's node specs and etcd's failpoint
// targets. A kind that strikes at a hold picks among the hold's nodes
// instead (nth, bare).
type nodeSpec string

const (
	one nodeSpec = "one"
	// minority: the largest minority; someMinority: one node up to it,
	// the size drawn.
	minority     nodeSpec = "minority"
	someMinority nodeSpec = "some-minority"
	// majority: a bare majority; someMajority: it up to every node, the
	// size drawn.
	majority     nodeSpec = "majority"
	someMajority nodeSpec = "some-majority"
	all          nodeSpec = "all"
	// The coin flips between two specs, heads first.
	minorityOrMajority     nodeSpec = "minority-or-majority"      // someMinority or someMajority
	minorityOrBareMajority nodeSpec = "minority-or-bare-majority" // someMinority or majority
	allOrMinority          nodeSpec = "all-or-minority"           // all or someMinority
)

var coins = map[nodeSpec][2]nodeSpec{
	minorityOrMajority:     {someMinority, someMajority},
	minorityOrBareMajority: {someMinority, majority},
	allOrMinority:          {all, someMinority},
}

func (sp nodeSpec) pick(rng *rand.Rand, n int) []int {
	switch sp {
	case one:
		return pickNodes(rng, n, 1)
	case minority:
		return pickNodes(rng, n, (n-1)/2)
	case someMinority:
		return pickNodes(rng, n, 1+rng.IntN(max(1, (n-1)/2)))
	case majority:
		return pickNodes(rng, n, quorum(n))
	case someMajority:
		return pickNodes(rng, n, quorum(n)+rng.IntN(n-n/2))
	case all:
		return allNodes(n)
	}
	c, ok := coins[sp]
	if !ok {
		panic("nemesis: unknown node spec " + string(sp))
	}
	return c[rng.IntN(2)].pick(rng, n)
}

// targets draws sp's nodes of a multi-node lock, else its one node.
func targets(rng *rand.Rand, s Setup, sp nodeSpec) []int {
	if !s.MultiNode {
		return []int{0}
	}
	return sp.pick(rng, s.Nodes)
}

func quorum(n int) int { return n/2 + 1 }

// bare reports whether h is a hold that exactly a bare majority of nodes
// granted, none of them in cut.
func bare(h Hold, nodes int, cut []int) bool {
	return h.Reported && len(h.Granted) == quorum(nodes) &&
		!slices.ContainsFunc(h.Granted, func(n int) bool { return slices.Contains(cut, n) })
}

// nth returns k of the nodes in from, from the pick-th (mod len(from)),
// wrapping, sorted: a seed's choice among nodes known only at the strike.
func nth(from []int, pick, k int) []int {
	var out []int
	for i := range min(k, len(from)) {
		out = append(out, from[(pick+i)%len(from)])
	}
	slices.Sort(out)
	return out
}

func allNodes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func pickNodes(rng *rand.Rand, n, k int) []int {
	perm := rng.Perm(n)[:k]
	slices.Sort(perm)
	return perm
}

// checkNodes wants idx strictly increasing, non-empty, below nodes (≥ 0).
func checkNodes(idx []int, nodes int) error {
	if len(idx) == 0 {
		return errors.New("no nodes")
	}
	for i, n := range idx {
		if n < 0 {
			return fmt.Errorf("negative node index %d", n)
		}
		if nodes >= 0 && n >= nodes {
			return fmt.Errorf("no node n%d: the run has %d", n+1, nodes)
		}
		if i > 0 && n <= idx[i-1] {
			return fmt.Errorf("nodes %v: want distinct indices in increasing order", idx)
		}
	}
	return nil
}

func clusterSize(t *Target) (int, error) {
	if t.Cluster == nil {
		return 0, errors.New("no cluster")
	}
	return len(t.Cluster.Nodes()), nil
}

func checkTarget(t *Target, idx []int) error {
	nodes, err := clusterSize(t)
	if err != nil {
		return err
	}
	return checkNodes(idx, nodes)
}

// grantedBy returns the nodes that granted a hold at a grant or an extend
// (on one node, that node even unreported), and false at another change.
func grantedBy(ch Change, nodes int) ([]int, bool) {
	if ch.Kind != HoldGranted && ch.Kind != HoldExtended {
		return nil, false
	}
	if !ch.Hold.Reported && nodes == 1 {
		return []int{0}, true
	}
	return ch.Hold.Granted, true
}

func node(t *Target, i int) (*cluster.Node, error) {
	if t.Cluster == nil || i < 0 || i >= len(t.Cluster.Nodes()) {
		return nil, fmt.Errorf("no node n%d", i+1)
	}
	return t.Cluster.Node(i), nil
}

// eachNode calls f on t's nodes idx, in order, and joins the errors; an
// index the cluster lacks ends it at once.
func eachNode(t *Target, idx []int, f func(n *cluster.Node) error) error {
	var errs []error
	for _, i := range idx {
		n, err := node(t, i)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, f(n))
	}
	return errors.Join(errs...)
}

// nodeNames returns "n1,n3" for indices [0 2].
func nodeNames(idx []int) string {
	s := make([]string, len(idx))
	for i, n := range idx {
		s[i] = fmt.Sprintf("n%d", n+1)
	}
	return strings.Join(s, ",")
}
