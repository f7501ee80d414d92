package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// PowerLoss cuts the power of nodes: each is SIGKILLed, what it had
// written to its append-only file but not fsynced is dropped (its data
// folder is on lazyfs, which keeps unsynced writes apart, as the page
// cache and a disk's volatile cache do), and it is restarted at once
// from what was synced. With appendfsync always a node fsyncs every
// write before it replies, so it comes back with every lock it granted;
// with everysec it fsyncs once a second, and a grant of its last second
// is lost, as the Redis documentation warns of a crash (a process kill
// alone keeps the page cache, and loses nothing). Heal restarts a node
// that is still down.
type PowerLoss struct {
	Nodes []int `json:"nodes"`
}

var _ RefusingFault = (*PowerLoss)(nil)

var powerLossKind = Kind{
	Name:    "power-loss",
	Family:  "power-loss",
	Summary: "cut nodes' power: SIGKILL, drop what they wrote but did not fsync, restart at once",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true, PowerLoss: true}, Persistent: true},
	Window:  Workload{Hold: 500 * time.Millisecond},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &PowerLoss{Nodes: targets(rng, s, someMinority)}
	},
	Decode: decode[PowerLoss],
}

// Refuse says why the fault's nodes do not fit s, or "".
func (p *PowerLoss) Refuse(s Setup) string {
	return refusal("power-loss", checkNodes(p.Nodes, s.Nodes))
}

func (p *PowerLoss) String() string {
	return fmt.Sprintf("power-loss %s: kill, drop unsynced writes, restart at once", nodeNames(p.Nodes))
}

// Start kills each node, drops its unsynced writes and restarts it.
func (p *PowerLoss) Start(ctx context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if err := n.Kill(); err != nil {
			return err
		}
		_, derr := n.DropUnsynced()
		return errors.Join(derr, n.Restart(ctx))
	})
}

// Heal restarts every node of the fault that is not running.
func (p *PowerLoss) Heal(ctx context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if n.Running() {
			return nil
		}
		return n.Restart(ctx)
	})
}
