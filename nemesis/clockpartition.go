package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

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

var _ aimedFault = (*ClockPartition)(nil)

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
	return s + c.says(func(d *Decision) string {
		return fmt.Sprintf("jump +%s on %s", time.Duration(d.Amount).Round(time.Millisecond), nodeNames(d.Targets))
	})
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
