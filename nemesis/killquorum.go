package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// KillQuorum waits for a hold that exactly a bare majority of the nodes
// granted, and while it is valid SIGKILLs one of those nodes and restarts
// it at once. A node without persistence comes back empty: the nodes
// that still hold the lease are a minority, and the restarted node with
// the nodes that never granted it are a majority that can grant the lock
// to a second client while the first still counts on it (the restart
// case of the Redis distributed-locks page, and why it asks for a
// delayed restart). Pick chooses which granting node, counted from the
// lowest, wrapping. MinLeft is the least validity the hold must have
// left: a restart takes about 100 ms. With RestartDelay the node stays
// down that long instead (the delayed restart, drawn when the run's
// kill faults restart delayed): the control, where every lease the node
// granted is over before it is back. On a single-instance lock the bare
// majority is the one node, and the kill takes every copy of the lease.
type KillQuorum struct {
	Pick         int      `json:"pick"`
	MinLeft      Duration `json:"min_left"`
	RestartDelay Duration `json:"restart_delay,omitempty"`
	Aim
}

var (
	_ ArmedFault    = (*KillQuorum)(nil)
	_ RefusingFault = (*KillQuorum)(nil)
	_ LastingFault  = (*KillQuorum)(nil)
)

var killQuorumKind = Kind{
	Name:    "kill-quorum",
	Summary: "kill one node of a hold that a bare majority granted, while it is valid; restart it at once (or, with delayed restarts, after the delay)",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		k := &KillQuorum{Pick: rng.IntN(max(1, s.Nodes)), MinLeft: Duration(s.TTL / 4), Aim: newAim(s)}
		if s.Restart == RestartDelayed {
			k.RestartDelay = Duration(s.TTL + s.TTL/2)
			if s.RestartDelay > 0 {
				k.RestartDelay = Duration(s.RestartDelay)
			}
			k.Active = max(k.Active, k.RestartDelay)
		}
		return k
	},
	Decode: decode[KillQuorum],
}

// Refuse says why the fault does not fit s, or "".
func (k *KillQuorum) Refuse(s Setup) string {
	if k.Pick < 0 || k.MinLeft < 0 || k.RestartDelay < 0 {
		return "kill-quorum: negative pick, min_left or restart_delay"
	}
	if k.Active < k.RestartDelay {
		return fmt.Sprintf("kill-quorum: active %v is shorter than the restart delay %v", time.Duration(k.Active), time.Duration(k.RestartDelay))
	}
	return k.refuse("kill-quorum", s.Nodes)
}

func (k *KillQuorum) String() string {
	restart := "restart at once"
	if k.RestartDelay > 0 {
		restart = "restart after " + time.Duration(k.RestartDelay).String()
	}
	s := "kill-quorum: kill one node of a hold a bare majority granted, " + restart
	if k.struck() {
		return s + decided(k.Decision, "kill "+nodeNames(k.Decision.Targets)+", "+restart)
	}
	return s + decided(k.Decision, "")
}

// Arm waits for a grant (or extend) by exactly a bare majority with at
// least MinLeft of validity left, and picks one of its nodes.
func (k *KillQuorum) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Cluster == nil {
		return false, fmt.Errorf("no cluster")
	}
	nodes := len(t.Cluster.Nodes())
	return k.decide(ctx, t, base, func(c Change, left time.Duration) (aim, bool) {
		h := c.Hold
		if (c.Kind != HoldGranted && c.Kind != HoldExtended) || !h.Reported || len(h.Granted) != quorum(nodes) || left < time.Duration(k.MinLeft) {
			return aim{}, false
		}
		return aim{targets: nth(h.Granted, k.Pick, 1)}, true
	})
}

// Start kills the chosen node and restarts it at once, or leaves it down
// for Heal to restart after the delay.
func (k *KillQuorum) Start(ctx context.Context, t *Target) error {
	if !k.struck() {
		return nil
	}
	return (&Kill{Nodes: k.Decision.Targets, RestartDelay: k.RestartDelay}).Start(ctx, t)
}

// Heal restarts the node if it is still down.
func (k *KillQuorum) Heal(ctx context.Context, t *Target) error {
	if !k.struck() {
		return nil
	}
	return (&Kill{Nodes: k.Decision.Targets}).Heal(ctx, t)
}
