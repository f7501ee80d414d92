package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/locktorture/locktorture/cluster"
)

// Pause SIGSTOPs nodes until Heal SIGCONTs them. Commands sent to a
// paused node on connections opened before the pause are executed after
// it resumes: late writes land. Keys keep expiring by the wall clock
// while the node is stopped.
type Pause struct {
	Nodes []int `json:"nodes"`
}

var _ RefusingFault = (*Pause)(nil)

var pauseKind = Kind{
	Name:    "pause",
	Family:  "pause",
	Summary: "SIGSTOP nodes, SIGCONT them when healed",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &Pause{Nodes: someMinority.pick(rng, s.Nodes)}
	},
	Decode: decode[Pause],
}

// Refuse says why the fault's nodes do not fit s, or "".
func (p *Pause) Refuse(s Setup) string {
	return refusal("pause", checkNodes(p.Nodes, s.Nodes))
}

func (p *Pause) String() string { return fmt.Sprintf("pause %s", nodeNames(p.Nodes)) }

// Start stops the nodes.
func (p *Pause) Start(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error { return n.Pause() })
}

// Heal resumes them.
func (p *Pause) Heal(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if !n.Paused() {
			return nil
		}
		return n.Resume()
	})
}
