package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// PartitionHolder cuts a holder off the nodes of its hold right after
// its grant, both ways (a black hole, as Partition's), for Cut, longer
// than the TTL, while the other client group still reaches every node:
// the holder can neither renew nor release, its key expires on the nodes,
// and a client of the other group is granted it. A lock that tells its
// holder of the loss before the key can expire (a watchdog that counts
// the validity of its last renewal) is safe; one that lets it hold on
// (a watchdog that ignores failed renewals, a lock whose users hold until
// they release) overlaps the next holder. The cut is of the holder's
// client group (its proxies), so the clients of that group are cut with
// it.
//
// The nodes cut are those that granted the hold when the lock reports
// them, else every node. It is aimed like pause-holder (targeted.go): its
// Decision (the client, its hold, the nodes, the cut) and the Group it
// cut are kept in schedule.json, and a replay cuts the recorded group
// from the recorded nodes at the recorded offset.
type PartitionHolder struct {
	Cut   Duration `json:"cut"`
	Group int      `json:"group"`
	Aim

	mu    sync.Mutex
	timer *time.Timer
}

var _ aimedFault = (*PartitionHolder)(nil)

// Names of the toxics a holder's partition adds.
const (
	holderCutUp   = "holder_cut_" + upstream
	holderCutDown = "holder_cut_" + downstream
)

var partitionHolderKind = Kind{
	Name:    "partition-holder",
	Family:  "partition",
	Summary: "cut a holder's client group off the nodes of its hold right after its grant, for 2–3 TTLs, while the other group reaches them",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, Groups: 2, TTL: true},
	// Holds of three TTLs on one key that four clients contend for: a
	// hold that ends before the cut could matter (the default 10 ms)
	// strikes nothing, and a lock that renews itself is tested only while
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
	Decode: decode[PartitionHolder],
}

// Refuse says why the fault does not fit s, or "".
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

// Arm waits for the next grant (a replay: for the recorded offset) and
// cuts the holder's group off the nodes of the hold at once; the cut
// heals itself after Cut.
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

// Start does nothing more: Arm cut the holder off.
func (p *PartitionHolder) Start(context.Context, *Target) error { return nil }

// Heal removes the cut, if its time has not run out yet, and any left.
func (p *PartitionHolder) Heal(ctx context.Context, t *Target) error {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	return clearToxics(ctx, t, holderCutUp, holderCutDown)
}
