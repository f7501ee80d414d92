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
	Summary: "SIGKILL nodes; restart at once, or after a delay of at least the TTL",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// A minority of the nodes (one node when there is only one).
		k := max(1, (s.Nodes-1)/2)
		f := &Kill{Nodes: pickNodes(rng, s.Nodes, 1+rng.IntN(k))}
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
	var errs []error
	for _, i := range k.Nodes {
		n, err := node(t, i)
		if err != nil {
			return err
		}
		if err := n.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	if k.RestartDelay == 0 {
		errs = append(errs, restart(ctx, t, k.Nodes))
	}
	return errors.Join(errs...)
}

// Heal restarts every node of the fault that is not running.
func (k *Kill) Heal(ctx context.Context, t *Target) error { return restart(ctx, t, k.Nodes) }

func restart(ctx context.Context, t *Target, idx []int) error {
	var errs []error
	for _, i := range idx {
		n, err := node(t, i)
		if err != nil {
			return err
		}
		if n.Running() {
			continue
		}
		if err := n.Restart(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// node returns node i of the target's cluster, or an error naming it.
func node(t *Target, i int) (*cluster.Node, error) {
	if t.Cluster == nil || i < 0 || i >= len(t.Cluster.Nodes()) {
		return nil, fmt.Errorf("no node n%d", i+1)
	}
	return t.Cluster.Node(i), nil
}
