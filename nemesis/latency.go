package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Latency slows nodes down until Heal: every chunk of their replies (and of
// the commands sent to them, with Upstream) is held Latency ± Jitter,
// uniformly drawn, on the proxies of every client group, for connections
// open or new. Toxiproxy counts in whole milliseconds; finer parts are
// dropped. Plan draws delays up to 0.9 × TTL, so a lock's own time
// accounting (validity = TTL − elapsed − drift) matters.
type Latency struct {
	Nodes    []int    `json:"nodes"`
	Latency  Duration `json:"latency"`
	Jitter   Duration `json:"jitter"`
	Upstream bool     `json:"upstream,omitempty"`
}

var _ RefusingFault = (*Latency)(nil)

// Names of the toxics a latency fault adds.
const (
	latencyUp   = "latency_" + upstream
	latencyDown = "latency_" + downstream
)

var latencyKind = Kind{
	Name:    "latency",
	Family:  "latency",
	Summary: "delay replies (and maybe commands) of some or all nodes by up to 0.9 × TTL",
	// The failover topology has faults of its own (kind failover).
	Needs: Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Latency{Nodes: targets(rng, s, allOrMinority)}
		d := [...]time.Duration{s.TTL / 10, s.TTL / 2, s.TTL * 9 / 10}[rng.IntN(3)]
		d = max(d.Truncate(time.Millisecond), time.Millisecond)
		f.Latency = Duration(d)
		f.Jitter = Duration(time.Duration(rng.Int64N(int64(d/10) + 1)).Truncate(time.Millisecond))
		f.Upstream = rng.IntN(2) == 1
		return f
	},
	Decode: decode[Latency],
}

// fit checks the parameters, and the nodes against the number of nodes
// when nodes ≥ 0.
func (l *Latency) fit(nodes int) error {
	if err := checkNodes(l.Nodes, nodes); err != nil {
		return err
	}
	if l.Latency < Duration(time.Millisecond) || l.Jitter < 0 || l.Jitter > l.Latency {
		return fmt.Errorf("latency %v, jitter %v: want latency ≥ 1ms and 0 ≤ jitter ≤ latency",
			time.Duration(l.Latency), time.Duration(l.Jitter))
	}
	return nil
}

// Refuse says why the fault's nodes do not fit s, or "". Load calls it on
// every decoded step.
func (l *Latency) Refuse(s Setup) string {
	if err := l.fit(s.Nodes); err != nil {
		return err.Error()
	}
	return ""
}

func (l *Latency) String() string {
	way := "replies"
	if l.Upstream {
		way = "commands and replies"
	}
	return fmt.Sprintf("latency %v±%v on %s (%s)", time.Duration(l.Latency), time.Duration(l.Jitter), nodeNames(l.Nodes), way)
}

// Start adds the latency toxics to every group's proxy of each node.
func (l *Latency) Start(ctx context.Context, t *Target) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	if err := l.fit(len(t.Cluster.Nodes())); err != nil {
		return err
	}
	attrs := map[string]int64{
		"latency": time.Duration(l.Latency).Milliseconds(),
		"jitter":  time.Duration(l.Jitter).Milliseconds(),
	}
	specs := []toxicSpec{{Name: latencyDown, Type: "latency", Stream: downstream, Attributes: attrs}}
	if l.Upstream {
		specs = append(specs, toxicSpec{Name: latencyUp, Type: "latency", Stream: upstream, Attributes: attrs})
	}
	var errs []error
	for _, i := range l.Nodes {
		for g := range t.Cluster.Groups() {
			for _, spec := range specs {
				errs = append(errs, injectToxic(ctx, t.Cluster.Node(i).GroupLink(g), spec))
			}
		}
	}
	return errors.Join(errs...)
}

// Heal removes the latency toxics from every proxy. Data they were holding
// is passed on at once, not dropped.
func (l *Latency) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyUp, latencyDown)
}
