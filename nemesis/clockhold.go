package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The targeted kinds of the clock family (clock.go): a jump of the clock
// of a live hold's nodes (clock-holder, clock-minority, clock-majority),
// and the same after a split of the client groups (clock-partition).

// jumped describes a targeted clock jump once it struck.
func jumped(d *Decision) string {
	return fmt.Sprintf("jump +%s on %s", time.Duration(d.Amount).Round(time.Millisecond), nodeNames(d.Targets))
}

// The scopes of a targeted clock jump: which of a live hold's granting
// nodes jump. Each is a kind of its own (clock-holder, clock-minority,
// clock-majority), so that the contested cases are cells of their own.
const (
	// ScopeHolder: one granting node. On a multi-node lock only a hold
	// that a bare majority granted is aimed at: then that one node is
	// enough to leave the holder without a majority (the contested case).
	ScopeHolder = "holder"
	// ScopeMinority: as many granting nodes as leave the rest of the
	// granting ones a majority, at most a minority of the nodes (two of
	// five where all five granted, one where four did): the lock's
	// assumption (a minority misbehaves) holds, and RedLock should stay
	// safe. Taking only holds that all nodes granted missed every hold
	// of a run on a loaded machine, where a quarter of the grants or more
	// come from four nodes or three.
	ScopeMinority = "minority"
	// ScopeMajority: a bare majority of the nodes, all granting ones.
	ScopeMajority = "majority"
)

// ClockHold waits for a live hold and jumps the wall clock of some of the
// nodes that granted it forward by the validity the hold has left plus
// Margin, so that their copies of the lease expire while the holder
// still counts on it. Margin covers the part of a node's TTL the lock's
// validity does not count (the drift allowance and the acquire's round
// trip). With Jump set, the jump is Jump whatever the validity left (the
// safety envelope sweeps it). The clocks are set right by Heal. It needs
// the nodes started with the clock shim.
type ClockHold struct {
	Scope  string   `json:"scope"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Jump   Duration `json:"jump,omitempty"`
	Aim
}

// clockHoldKind is the kind of one scope.
func clockHoldKind(scope, summary string, multi bool) Kind {
	return Kind{
		Name:    "clock-" + scope,
		Family:  "clock",
		Twin:    Twin{Kinds: []string{"clock"}},
		Summary: summary,
		Needs:   Needs{MultiNode: multi, Cluster: cluster.Abilities{Clock: true}, TTL: true},
		Window:  Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
		Plan: func(rng *rand.Rand, s Setup) Fault {
			return &ClockHold{Scope: scope, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Aim: newAim(s)}
		},
		Decode: func(params json.RawMessage) (Fault, error) {
			f, err := decode[ClockHold](params)
			if err != nil {
				return nil, err
			}
			if c := f.(*ClockHold); c.Scope != scope {
				return nil, fmt.Errorf("nemesis: clock-%s: scope %q, want %q", scope, c.Scope, scope)
			}
			return f, nil
		},
	}
}

var (
	clockHolderKind   = clockHoldKind(ScopeHolder, "jump the clock of one node of a live hold (of a bare majority's, on a multi-node lock) just past its validity", false)
	clockMinorityKind = clockHoldKind(ScopeMinority, "jump the clock of a minority of a live hold's nodes just past its validity, leaving it a majority", true)
	clockMajorityKind = clockHoldKind(ScopeMajority, "jump the clock of a majority of a live hold's nodes just past its validity", true)
)

// Refuse says why the fault does not fit s, or "".
func (c *ClockHold) Refuse(s Setup) string {
	kind := "clock-" + c.Scope
	switch {
	case c.Pick < 0 || c.Margin < 0 || c.Jump < 0:
		return kind + ": negative pick, margin or jump"
	case c.Scope == ScopeMinority && (s.Nodes-1)/2 < 1:
		return fmt.Sprintf("%s: %d nodes have no minority to jump", kind, s.Nodes)
	}
	return c.refuse(kind, s.Nodes)
}

func (c *ClockHold) String() string {
	s := fmt.Sprintf("clock-%s: jump the clock of %s of a live hold's nodes just past its validity", c.Scope, map[string]string{ScopeHolder: "one", ScopeMinority: "a minority", ScopeMajority: "a majority"}[c.Scope])
	return s + c.says(jumped)
}

// Arm waits for a grant (or extend) its scope fits, and picks the nodes.
func (c *ClockHold) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	q := quorum(nodes)
	return c.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		granted, ok := grantedBy(ch, nodes)
		if !ok {
			return aim{}, false
		}
		var k int
		switch {
		case c.Scope == ScopeHolder && (nodes == 1 || len(granted) == q):
			k = 1
		case c.Scope == ScopeMinority && len(granted) > q:
			k = min((nodes-1)/2, len(granted)-q)
		case c.Scope == ScopeMajority && len(granted) >= q:
			k = q
		}
		if k == 0 || len(granted) < k {
			return aim{}, false
		}
		amount := left + time.Duration(c.Margin)
		if c.Jump > 0 {
			amount = time.Duration(c.Jump)
		}
		return aim{targets: nth(granted, c.Pick, k), amount: amount}, true
	})
}

// Start jumps the chosen nodes' clocks.
func (c *ClockHold) Start(_ context.Context, t *Target) error { return c.setClocks(t, true) }

// Heal sets their clocks right.
func (c *ClockHold) Heal(_ context.Context, t *Target) error { return c.setClocks(t, false) }

// ClockPartition is Kleppmann's scenario against RedLock: the client
// groups are split (as partition's shape split: group 0 reaches only
// Sides[0], group 1 only Sides[1], two bare majorities that share one
// node with an odd number of nodes), so every hold is granted by a bare
// majority; at the first such hold, the wall clock of a node both sides
// reach jumps by the validity left plus Margin. That node forgets the
// lease, and with the nodes of the other side, which never saw it, it is
// a majority that grants the lock to a client of the other group while
// the holder still counts on it. The split begins when the step does,
// before the strike the history records; Heal lifts it and sets the
// clock right.
//
// Settle is how long after the split began a hold must have been
// granted to be struck at (a TTL when planned; 0: any hold): a lease
// granted before the split whose release the cut dropped sits on the
// other side's own node until it expires, and while it does the other
// side has no majority to take, so a strike then is wasted. The window
// counts from the split and includes Settle.
type ClockPartition struct {
	Sides  [][]int  `json:"sides"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Settle Duration `json:"settle,omitempty"`
	Aim
}

var clockPartitionKind = Kind{
	Name:    "clock-partition",
	Family:  "clock",
	Twin:    Twin{Kinds: []string{"clock", "partition"}},
	Window:  Workload{Clients: 2, Keys: 1, Hold: 500 * time.Millisecond, Interval: 250 * time.Millisecond},
	Summary: "split the client groups onto two overlapping bare majorities, then jump the clock of a shared node of a live hold just past its validity (Kleppmann)",
	Needs:   Needs{MultiNode: true, Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Clock: true, Network: true}, Groups: 2, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		p := planPartition(rng, ShapeSplit, s)
		c := &ClockPartition{Sides: p.Sides, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Settle: Duration(s.TTL), Aim: newAim(s)}
		c.Window += c.Settle
		return c
	},
	Decode: decode[ClockPartition],
}

func (c *ClockPartition) split() *Partition { return &Partition{Shape: ShapeSplit, Sides: c.Sides} }

// Refuse says why the fault does not fit s, or "".
func (c *ClockPartition) Refuse(s Setup) string {
	if c.Pick < 0 || c.Margin < 0 || c.Settle < 0 {
		return "clock-partition: negative pick, margin or settle"
	}
	if why := c.split().Refuse(s); why != "" {
		return "clock-partition: " + why
	}
	return c.refuse("clock-partition", s.Nodes)
}

func (c *ClockPartition) String() string {
	s := fmt.Sprintf("clock-partition: client group 0 reaches %s, group 1 %s, then a clock jump on a shared node of a hold", sideNames(c.Sides, 0), sideNames(c.Sides, 1))
	return s + c.says(jumped)
}

// Arm splits the groups, then waits for a hold a bare majority granted,
// Settle or more after the split began, that includes a node both sides
// reach; when none comes, it lifts the split before it returns.
func (c *ClockPartition) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Cluster == nil {
		return false, errors.New("no cluster")
	}
	heal := func() error { return clearToxics(context.WithoutCancel(ctx), t, partitionUp, partitionDown) }
	if err := c.split().Start(ctx, t); err != nil {
		return false, errors.Join(err, heal())
	}
	q := quorum(len(t.Cluster.Nodes()))
	settled := runNow(base) + int64(c.Settle)
	struck, err := c.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		h := ch.Hold
		if (ch.Kind != HoldGranted && ch.Kind != HoldExtended) || !h.Reported || len(h.Granted) != q || (c.Settle > 0 && ch.Time < settled) {
			return aim{}, false
		}
		var shared []int
		for _, n := range h.Granted {
			if slices.Contains(c.Sides[0], n) && slices.Contains(c.Sides[1], n) {
				shared = append(shared, n)
			}
		}
		if len(shared) == 0 {
			return aim{}, false
		}
		return aim{targets: nth(shared, c.Pick, 1), amount: left + time.Duration(c.Margin)}, true
	})
	if !struck {
		err = errors.Join(err, heal())
	}
	return struck, err
}

// Start jumps the chosen node's clock (the split is in place since Arm).
func (c *ClockPartition) Start(_ context.Context, t *Target) error { return c.setClocks(t, true) }

// Heal lifts the split and sets the clock right.
func (c *ClockPartition) Heal(ctx context.Context, t *Target) error {
	if !c.struck() {
		return nil
	}
	return errors.Join(clearToxics(ctx, t, partitionUp, partitionDown), c.setClocks(t, false))
}
