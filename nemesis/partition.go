package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Partition black-holes (blackHoleSpecs) the proxies by which client
// groups reach nodes, both ways, until Heal. Shapes one, minority and
// majority cut Isolated (one node, the largest minority, the smallest
// majority) off every group; halves and split give client group g only
// Sides[g%2]: two halves of the nodes, or two different (so overlapping)
// majorities, e.g. {n1,n2,n3} and {n3,n4,n5}.
type Partition struct {
	Shape    string  `json:"shape"`
	Isolated []int   `json:"isolated,omitempty"`
	Sides    [][]int `json:"sides,omitempty"`
}

// The shapes of a partition, in the order Plan draws from.
const (
	ShapeOne      = "one"
	ShapeMinority = "minority"
	ShapeMajority = "majority"
	ShapeHalves   = "halves"
	ShapeSplit    = "split"
)

var partitionShapes = []string{ShapeOne, ShapeMinority, ShapeMajority, ShapeHalves, ShapeSplit}

var partitionKind = Kind{
	Name:    "partition",
	Family:  "partition",
	Summary: "cut client groups off nodes both ways (one, minority, majority, halves, split)",
	// The failover topology has faults of its own (kind failover); halves
	// and split cut two client groups apart.
	Needs: Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, Groups: 2},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		var shapes []string
		for _, sh := range partitionShapes {
			if refuseShape(sh, s) == "" {
				shapes = append(shapes, sh)
			}
		}
		return planPartition(rng, shapes[rng.IntN(len(shapes))], s)
	},
	Decode: decode[Partition],
}

// refuseShape says why shape cannot act on s, or "".
func refuseShape(shape string, s Setup) string {
	if !slices.Contains(partitionShapes, shape) {
		return fmt.Sprintf("unknown shape %q (known: %s)", shape, strings.Join(partitionShapes, ", "))
	}
	if !s.MultiNode && shape != ShapeOne {
		return fmt.Sprintf("shape %s needs a multi-node lock; %s uses one node, so only shape one applies", shape, s.Lock)
	}
	if (shape == ShapeHalves || shape == ShapeSplit) && s.Groups < 2 {
		return fmt.Sprintf("shape %s needs at least 2 client groups, the run has %d", shape, s.Groups)
	}
	minNodes := map[string]int{ShapeOne: 1, ShapeMinority: 3, ShapeMajority: 2, ShapeHalves: 2, ShapeSplit: 3}[shape]
	if s.Nodes < minNodes {
		return fmt.Sprintf("shape %s needs at least %d nodes, the run has %d", shape, minNodes, s.Nodes)
	}
	return ""
}

func planPartition(rng *rand.Rand, shape string, s Setup) *Partition {
	n := s.Nodes
	p := &Partition{Shape: shape}
	switch shape {
	case ShapeOne:
		p.Isolated = targets(rng, s, one)
	case ShapeMinority:
		p.Isolated = minority.pick(rng, n)
	case ShapeMajority:
		p.Isolated = majority.pick(rng, n)
	case ShapeHalves:
		k := n / 2
		if n%2 == 1 && rng.IntN(2) == 1 {
			k++
		}
		perm := rng.Perm(n)
		p.Sides = [][]int{slices.Sorted(slices.Values(perm[:k])), slices.Sorted(slices.Values(perm[k:]))}
	case ShapeSplit:
		m := n/2 + 1
		perm := rng.Perm(n)
		p.Sides = [][]int{slices.Sorted(slices.Values(perm[:m])), slices.Sorted(slices.Values(perm[n-m:]))}
	}
	return p
}

func (p *Partition) Refuse(s Setup) string {
	if why := refuseShape(p.Shape, s); why != "" {
		return why
	}
	if err := p.fit(s.Nodes); err != nil {
		return err.Error()
	}
	return ""
}

// sided: the shape cuts client groups from different nodes.
func (p *Partition) sided() bool { return p.Shape == ShapeHalves || p.Shape == ShapeSplit }

// fit checks the parameters, and the nodes when nodes ≥ 0.
func (p *Partition) fit(nodes int) error {
	if !slices.Contains(partitionShapes, p.Shape) {
		return fmt.Errorf("unknown shape %q (known: %s)", p.Shape, strings.Join(partitionShapes, ", "))
	}
	if !p.sided() {
		if len(p.Sides) > 0 {
			return fmt.Errorf("shape %s takes isolated, not sides", p.Shape)
		}
		if err := checkNodes(p.Isolated, nodes); err != nil {
			return fmt.Errorf("isolated: %w", err)
		}
		k := len(p.Isolated)
		switch {
		case p.Shape == ShapeOne && k != 1:
			return fmt.Errorf("shape one isolates 1 node, not %d", k)
		case p.Shape == ShapeMinority && nodes >= 0 && 2*k >= nodes:
			return fmt.Errorf("shape minority: %d of %d nodes is not a minority", k, nodes)
		case p.Shape == ShapeMajority && nodes >= 0 && 2*k <= nodes:
			return fmt.Errorf("shape majority: %d of %d nodes is not a majority", k, nodes)
		}
		return nil
	}
	if len(p.Isolated) > 0 || len(p.Sides) != 2 {
		return fmt.Errorf("shape %s takes sides, two lists of nodes, and no isolated", p.Shape)
	}
	for i, side := range p.Sides {
		if err := checkNodes(side, nodes); err != nil {
			return fmt.Errorf("side %d: %w", i, err)
		}
	}
	a, b := p.Sides[0], p.Sides[1]
	overlap := slices.ContainsFunc(a, func(n int) bool { return slices.Contains(b, n) })
	switch {
	case p.Shape == ShapeHalves && overlap:
		return fmt.Errorf("shape halves: sides %s and %s overlap", nodeNames(a), nodeNames(b))
	case p.Shape == ShapeHalves && nodes >= 0 && len(a)+len(b) != nodes:
		return fmt.Errorf("shape halves: sides %s and %s do not cover the %d nodes", nodeNames(a), nodeNames(b), nodes)
	case p.Shape == ShapeSplit && (!overlap || slices.Equal(a, b)):
		return fmt.Errorf("shape split: sides %s and %s must overlap and differ", nodeNames(a), nodeNames(b))
	case p.Shape == ShapeSplit && nodes >= 0 && (2*len(a) <= nodes || 2*len(b) <= nodes):
		return fmt.Errorf("shape split: sides %s and %s must each be a majority of %d nodes", nodeNames(a), nodeNames(b), nodes)
	}
	return nil
}

// cut returns the nodes client group g is cut from, out of nodes.
func (p *Partition) cut(g, nodes int) []int {
	if !p.sided() {
		return p.Isolated
	}
	var out []int
	for i := range nodes {
		if !slices.Contains(p.Sides[g%2], i) {
			out = append(out, i)
		}
	}
	return out
}

func (p *Partition) String() string {
	if !p.sided() {
		return fmt.Sprintf("partition %s: %s cut off from every client", p.Shape, nodeNames(p.Isolated))
	}
	return fmt.Sprintf("partition %s: client group 0 reaches %s, group 1 %s", p.Shape, sideNames(p.Sides, 0), sideNames(p.Sides, 1))
}

func sideNames(sides [][]int, i int) string {
	if i >= len(sides) {
		return "?"
	}
	return nodeNames(sides[i])
}

func (p *Partition) Start(ctx context.Context, t *Target) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	nodes, groups := len(t.Cluster.Nodes()), t.Cluster.Groups()
	if err := p.fit(nodes); err != nil {
		return err
	}
	if p.sided() && groups < 2 {
		return fmt.Errorf("shape %s needs at least 2 client groups, the cluster has %d", p.Shape, groups)
	}
	var errs []error
	for g := range groups {
		for _, i := range p.cut(g, nodes) {
			errs = append(errs, blackHole(ctx, t.Cluster.Node(i).GroupLink(g), partitionUp, partitionDown))
		}
	}
	// Nodes that talk to each other (etcd members) are cut apart as the
	// clients are; Redis nodes have no such links here.
	t.Cluster.CutPeers(p.peerPairs(nodes))
	return errors.Join(errs...)
}

// peerPairs returns the pairs of nodes the partition cuts apart.
func (p *Partition) peerPairs(nodes int) [][2]int {
	var pairs [][2]int
	for a := range nodes {
		for b := a + 1; b < nodes; b++ {
			var apart bool
			if p.sided() {
				apart = !slices.ContainsFunc(p.Sides, func(side []int) bool { return slices.Contains(side, a) && slices.Contains(side, b) })
			} else {
				apart = slices.Contains(p.Isolated, a) != slices.Contains(p.Isolated, b)
			}
			if apart {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	return pairs
}

// Heal removes the partition's toxics, which closes the connections they
// held (a command sent during the cut never runs). A go-redis client may
// still take about a second to reconnect: after PoolSize failed dials its
// dial circuit breaker fails dials at once and probes once a second.
func (p *Partition) Heal(ctx context.Context, t *Target) error {
	if t.Cluster != nil {
		t.Cluster.HealPeers()
	}
	return clearToxics(ctx, t, partitionUp, partitionDown)
}

// PartitionHolder black-holes the holder's client group off the nodes of
// its hold (every node, unreported) right after its grant, for Cut, while
// the other group still reaches them. A replay cuts the recorded Group.
type PartitionHolder struct {
	Cut   Duration `json:"cut"`
	Group int      `json:"group"`
	Aim

	mu    sync.Mutex
	timer *time.Timer
}

var partitionHolderKind = Kind{
	Name:    "partition-holder",
	Family:  "partition",
	Summary: "cut a holder's client group off the nodes of its hold right after its grant, for 2–3 TTLs, while the other group reaches them",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, Groups: 2, TTL: true},
	// Holds of three TTLs: a lock that renews itself is tested only while
	// its holder needs the key longer than a TTL.
	Window: Workload{Clients: 4, Keys: 1, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Interval: time.Second},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		ttl := max(s.TTL, time.Millisecond)
		cut := (2*ttl + time.Duration(rng.Int64N(int64(ttl)))).Truncate(time.Millisecond)
		// Cut, then a TTL for the late holder's acts to land.
		a := newAim(s)
		a.Active = Duration(cut + ttl)
		return &PartitionHolder{Cut: Duration(cut), Aim: a}
	},
	Decode: decodeAimed[PartitionHolder],
}

func (p *PartitionHolder) Refuse(s Setup) string {
	switch {
	case p.Cut <= 0:
		return fmt.Sprintf("partition-holder: cut %v: want a positive cut", time.Duration(p.Cut))
	case p.Group < 0 || (s.Groups > 0 && p.Group >= s.Groups):
		return fmt.Sprintf("partition-holder: group %d of %d", p.Group, s.Groups)
	}
	return p.refuse("partition-holder", s.Nodes)
}

func (p *PartitionHolder) String() string {
	s := fmt.Sprintf("partition-holder: cut a holder off the nodes of its hold right after its grant for %s", time.Duration(p.Cut))
	if p.struck() {
		tr := p.Decision.Trigger
		return fmt.Sprintf("partition-holder: cut client group %d off %s for %s, at client %d's hold of %s", p.Group, nodeNames(p.Decision.Targets), time.Duration(p.Cut), tr.Client, tr.Key)
	}
	return s + decided(p.Decision, "")
}

// Arm cuts at the next grant; the cut heals itself after Cut.
func (p *PartitionHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Cluster == nil {
		return false, errors.New("no cluster")
	}
	if t.Cluster.Groups() < 2 {
		return false, fmt.Errorf("partition-holder needs 2 client groups, the cluster has %d", t.Cluster.Groups())
	}
	nodes := len(t.Cluster.Nodes())
	var group int
	struck, err := p.decide(ctx, t, base, func(c Change, _ time.Duration) (aim, bool) {
		if c.Kind != HoldGranted {
			return aim{}, false
		}
		group = c.Hold.Group
		targets := allNodes(nodes)
		if c.Hold.Reported && len(c.Hold.Granted) > 0 {
			targets = c.Hold.Granted
		}
		return aim{targets: targets, amount: time.Duration(p.Cut)}, true
	})
	if err != nil || !struck {
		return false, err
	}
	if p.Decision.Replay == "" {
		p.Group = group // a replay cuts the recorded group
	}
	err = eachNode(t, p.Decision.Targets, func(n *cluster.Node) error {
		return blackHole(context.WithoutCancel(ctx), n.GroupLink(p.Group%t.Cluster.Groups()), holderCutUp, holderCutDown)
	})
	if err != nil {
		// Nothing struck: what was cut is healed at once.
		hctx, cancel := context.WithTimeout(context.Background(), healTimeout)
		defer cancel()
		p.Decision.Missed = "the cut failed: " + err.Error()
		return false, errors.Join(err, clearToxics(hctx, t, holderCutUp, holderCutDown))
	}
	p.mu.Lock()
	p.timer = time.AfterFunc(time.Duration(p.Cut), func() {
		hctx, cancel := context.WithTimeout(context.Background(), healTimeout)
		defer cancel()
		_ = clearToxics(hctx, t, holderCutUp, holderCutDown) // the heal clears again, and reports
	})
	p.mu.Unlock()
	return true, nil
}

func (p *PartitionHolder) Start(context.Context, *Target) error { return nil }

func (p *PartitionHolder) Heal(ctx context.Context, t *Target) error {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	return clearToxics(ctx, t, holderCutUp, holderCutDown)
}
