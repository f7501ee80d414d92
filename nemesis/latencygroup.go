package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// LatencyGroup delays the replies of every node to one client group only
// (Group), by Latency, until Heal; the other group's replies are prompt.
// That is the shape in which a lock's time accounting shows: a holder of
// the slow group counts on the lease from a reply that came Latency after
// the node set the key, while a client of the fast group is granted the
// key the moment it expires on the node and learns it at once. A lock
// whose validity runs from before the request ends its lease before the
// key expires whatever the latency; one that counts from the reply (no
// elapsed term) overlaps the next holder once latency plus hold exceed
// the TTL. A latency on every client's replies alike shows neither: the
// next holder's reply is late by as much. Plan draws delays below a
// tenth of the TTL, the locks' per-call timeout, above which nothing is
// granted to the slow group at all.
type LatencyGroup struct {
	Group   int      `json:"group"`
	Latency Duration `json:"latency"`
}

var _ RefusingFault = (*LatencyGroup)(nil)

var latencyGroupKind = Kind{
	Name:    "latency-group",
	Family:  "latency-group",
	Summary: "delay the replies of every node to one client group only, below the per-call timeout (TTL/10): a slow holder beside a prompt next holder",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, Groups: 2},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		d := [...]time.Duration{s.TTL / 40, s.TTL / 20, s.TTL / 12}[rng.IntN(3)]
		return &LatencyGroup{Group: rng.IntN(max(1, min(2, s.Groups))), Latency: Duration(max(d.Truncate(time.Millisecond), time.Millisecond))}
	},
	Decode: decode[LatencyGroup],
}

// Refuse says why the fault does not fit s, or "".
func (l *LatencyGroup) Refuse(s Setup) string {
	switch {
	case l.Latency < Duration(time.Millisecond):
		return fmt.Sprintf("latency-group: latency %v: want ≥ 1ms", time.Duration(l.Latency))
	case l.Group < 0 || (s.Groups > 0 && l.Group >= s.Groups):
		return fmt.Sprintf("latency-group: group %d of %d", l.Group, s.Groups)
	}
	return ""
}

func (l *LatencyGroup) String() string {
	return fmt.Sprintf("latency-group: replies to client group %d late by %v", l.Group, time.Duration(l.Latency))
}

// Start adds the latency toxic to the group's proxy of every node.
func (l *LatencyGroup) Start(ctx context.Context, t *Target) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	if l.Group >= t.Cluster.Groups() {
		return fmt.Errorf("latency-group: group %d, the cluster has %d", l.Group, t.Cluster.Groups())
	}
	spec := toxicSpec{Name: latencyDown, Type: "latency", Stream: downstream, Attributes: map[string]int64{"latency": time.Duration(l.Latency).Milliseconds()}}
	var errs []error
	for _, n := range t.Cluster.Nodes() {
		errs = append(errs, injectToxic(ctx, n.GroupLink(l.Group), spec))
	}
	return errors.Join(errs...)
}

// Heal removes the latency toxics from every proxy.
func (l *LatencyGroup) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyDown)
}
