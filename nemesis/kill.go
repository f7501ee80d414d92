package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Kill SIGKILLs nodes. With RestartDelay 0 they are restarted at once (a
// node without persistence comes back empty: it forgets every lock it
// held); otherwise they stay down for RestartDelay (the "delayed restart"
// of the Redis distributed-locks page: at least a TTL, so every lock the
// node granted has expired before it comes back) and are restarted by
// Heal. Whether data survives depends on the nodes' persistence, fixed
// when the nodes start.
type Kill struct {
	Nodes        []int    `json:"nodes"`
	RestartDelay Duration `json:"restart_delay"`
}

var (
	_ RefusingFault = (*Kill)(nil)
	_ LastingFault  = (*Kill)(nil)
)

var killKind = Kind{
	Name:    "kill",
	Family:  "kill",
	Summary: "SIGKILL nodes; restart at once, or after a delay of at least the TTL",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Kill{Nodes: someMinority.pick(rng, s.Nodes)}
		delayed := rng.IntN(2) == 1
		switch s.Restart {
		case RestartImmediate:
			delayed = false
		case RestartDelayed:
			delayed = true
		}
		if delayed {
			f.RestartDelay = Duration(s.TTL + s.TTL/2)
			if s.RestartDelay > 0 {
				f.RestartDelay = Duration(s.RestartDelay)
			}
		}
		return f
	},
	Decode: decode[Kill],
}

// Refuse says why the fault's nodes or delay do not fit s, or "".
func (k *Kill) Refuse(s Setup) string {
	if err := checkNodes(k.Nodes, s.Nodes); err != nil {
		return "kill: " + err.Error()
	}
	if k.RestartDelay < 0 {
		return fmt.Sprintf("kill: negative restart delay %v", time.Duration(k.RestartDelay))
	}
	return ""
}

// MinActive keeps a delayed restart down for its whole delay.
func (k *Kill) MinActive() time.Duration { return time.Duration(k.RestartDelay) }

func (k *Kill) String() string {
	if k.RestartDelay == 0 {
		return fmt.Sprintf("kill %s, restart at once", nodeNames(k.Nodes))
	}
	return fmt.Sprintf("kill %s, restart after %s", nodeNames(k.Nodes), time.Duration(k.RestartDelay))
}

// Start kills the nodes (and, without a delay, restarts them).
func (k *Kill) Start(ctx context.Context, t *Target) error {
	err := eachNode(t, k.Nodes, func(n *cluster.Node) error { return n.Kill() })
	if k.RestartDelay == 0 {
		err = errors.Join(err, k.Heal(ctx, t))
	}
	return err
}

// Heal restarts every node of the fault that is not running.
func (k *Kill) Heal(ctx context.Context, t *Target) error {
	return eachNode(t, k.Nodes, func(n *cluster.Node) error {
		if n.Running() {
			return nil
		}
		return n.Restart(ctx)
	})
}
