package nemesis

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// PowerLossHolder cuts the power of a node the moment it has granted a
// hold (on a multi-node lock, one node of a hold a bare majority
// granted), as PowerLoss does: SIGKILL, drop what it wrote but did not
// fsync, restart at once. Under appendfsync everysec the grant, a few
// milliseconds old, is almost never synced yet, so the node comes back
// without it while the holder has most of its validity left: the
// scenario the Redis documentation warns of, tested by every strike. A
// power loss at a time drawn in advance (power-loss) lands on a fresh
// grant only by chance, and with holds that divide its interval, at the
// end of the holds every time. Under appendfsync always the grant was on
// disk before its reply, and the strike must change nothing.
type PowerLossHolder struct {
	Pick    int      `json:"pick"`
	MinLeft Duration `json:"min_left"`
	Aim
}

var _ aimedFault = (*PowerLossHolder)(nil)

var powerLossHolderKind = Kind{
	Name:    "power-loss-holder",
	Family:  "power-loss",
	Twin:    Twin{Kinds: []string{"power-loss"}},
	Summary: "cut the power of a node right after it granted a hold (of a bare majority's, on a multi-node lock): SIGKILL, drop what it did not fsync, restart at once",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true, PowerLoss: true}, Persistent: true, TTL: true},
	Window:  Workload{Keys: 1, Hold: 800 * time.Millisecond, Interval: time.Second},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &PowerLossHolder{Pick: rng.IntN(max(1, s.Nodes)), MinLeft: Duration(s.TTL / 2), Aim: newAim(s)}
	},
	Decode: decode[PowerLossHolder],
}

// Refuse says why the fault does not fit s, or "".
func (p *PowerLossHolder) Refuse(s Setup) string {
	if p.Pick < 0 || p.MinLeft < 0 {
		return "power-loss-holder: negative pick or min_left"
	}
	return p.refuse("power-loss-holder", s.Nodes)
}

func (p *PowerLossHolder) String() string {
	s := "power-loss-holder: cut the power of a node that has just granted a hold, drop unsynced writes, restart at once"
	return s + p.says(func(d *Decision) string { return "power-loss " + nodeNames(d.Targets) })
}

// Arm waits for a grant with at least MinLeft of validity left: on one
// node, any; on several, one a bare majority granted (the loss of one of
// its nodes' copies leaves the holder without a majority), and picks the
// node.
func (p *PowerLossHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	return p.decide(ctx, t, base, func(c Change, left time.Duration) (aim, bool) {
		if c.Kind != HoldGranted || left < time.Duration(p.MinLeft) {
			return aim{}, false
		}
		if nodes == 1 {
			return aim{targets: []int{0}}, true
		}
		if !bare(c.Hold, nodes, nil) {
			return aim{}, false
		}
		return aim{targets: nth(c.Hold.Granted, p.Pick, 1)}, true
	})
}

// Start cuts the power of the chosen node: kill, drop its unsynced
// writes, restart.
func (p *PowerLossHolder) Start(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return (&PowerLoss{Nodes: p.Decision.Targets}).Start(ctx, t)
}

// Heal restarts the node if it is still down.
func (p *PowerLossHolder) Heal(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return (&PowerLoss{Nodes: p.Decision.Targets}).Heal(ctx, t)
}
