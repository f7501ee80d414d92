package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The replication-link kinds fault the link between the primary of the
// failover topology and its replica, and nothing else: the sentinels and
// the clients reach both nodes as before (cluster.Failover.ReplicationLink).
//
//   - replica-partition black-holes the link both ways (toxiproxy timeout
//     toxics, as a partition's): the primary keeps granting, the replica
//     gets none of it, and the sentinels, who still reach the primary,
//     promote nobody. Heal lifts the cut, which closes the link; the
//     replica reconnects and catches up.
//   - replica-latency holds the replication stream (and the replica's
//     acknowledgements) by Latency ± Jitter: the replica lags.
//
// Alone neither breaks a lock that talks to the primary only: the
// replica's copy matters once it is promoted, which a fault composed
// with it (a kill of the primary, a failover) makes happen. A lock that
// waits for its replica (setnx with WAIT 1) refuses its grants while the
// link is cut. Each acts on the primary of the moment it starts; Heal
// clears every replication link and waits until the topology is healthy.
type ReplicaPartition struct{}

// ReplicaLatency slows the replication link (see ReplicaPartition).
type ReplicaLatency struct {
	Latency Duration `json:"latency"`
	Jitter  Duration `json:"jitter"`
}

var _ RefusingFault = (*ReplicaLatency)(nil)

// Names of the toxics of the replication-link kinds.
const (
	replicaCutUp     = "replica_cut_" + upstream
	replicaCutDown   = "replica_cut_" + downstream
	replicaLatencyUp = "replica_latency_" + upstream
	replicaLatencyDn = "replica_latency_" + downstream
)

var replicaNeeds = Needs{Topology: cluster.TopologyFailover, Cluster: cluster.Abilities{Links: true}, TTL: true}

var replicaPartitionKind = Kind{
	Name:    "replica-partition",
	Family:  "replica-link",
	Summary: "cut the replication link between the primary and its replica both ways; the sentinels and the clients still reach both",
	Needs:   replicaNeeds,
	Plan:    func(*rand.Rand, Setup) Fault { return &ReplicaPartition{} },
	Decode:  decode[ReplicaPartition],
}

var replicaLatencyKind = Kind{
	Name:    "replica-latency",
	Family:  "replica-link",
	Summary: "delay the replication link between the primary and its replica by a tenth to half a TTL",
	Needs:   replicaNeeds,
	Plan: func(rng *rand.Rand, s Setup) Fault {
		d := [...]time.Duration{s.TTL / 10, s.TTL / 4, s.TTL / 2}[rng.IntN(3)]
		d = max(d.Truncate(time.Millisecond), time.Millisecond)
		return &ReplicaLatency{Latency: Duration(d), Jitter: Duration(time.Duration(rng.Int64N(int64(d/10) + 1)).Truncate(time.Millisecond))}
	},
	Decode: decode[ReplicaLatency],
}

func (*ReplicaPartition) String() string {
	return "replica-partition: cut the replication link of the primary both ways"
}

// Start black-holes the replication link of the current primary.
func (p *ReplicaPartition) Start(ctx context.Context, t *Target) error {
	l, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	return blackHole(ctx, l, replicaCutUp, replicaCutDown)
}

// Heal lifts every cut and waits for the replica to catch up.
func (p *ReplicaPartition) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaCutUp, replicaCutDown)
}

// Refuse says why the fault does not fit s, or "".
func (l *ReplicaLatency) Refuse(Setup) string {
	if l.Latency < Duration(time.Millisecond) || l.Jitter < 0 || l.Jitter > l.Latency {
		return fmt.Sprintf("replica-latency: latency %v, jitter %v: want latency ≥ 1ms and 0 ≤ jitter ≤ latency", time.Duration(l.Latency), time.Duration(l.Jitter))
	}
	return ""
}

func (l *ReplicaLatency) String() string {
	return fmt.Sprintf("replica-latency: the replication link of the primary %v±%v both ways", time.Duration(l.Latency), time.Duration(l.Jitter))
}

// Start slows the replication link of the current primary both ways.
func (l *ReplicaLatency) Start(ctx context.Context, t *Target) error {
	link, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	attrs := map[string]int64{"latency": time.Duration(l.Latency).Milliseconds(), "jitter": time.Duration(l.Jitter).Milliseconds()}
	return errors.Join(
		injectToxic(ctx, link, toxicSpec{Name: replicaLatencyDn, Type: "latency", Stream: downstream, Attributes: attrs}),
		injectToxic(ctx, link, toxicSpec{Name: replicaLatencyUp, Type: "latency", Stream: upstream, Attributes: attrs}))
}

// Heal removes the latency and waits for the replica to catch up.
func (l *ReplicaLatency) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaLatencyUp, replicaLatencyDn)
}

// primaryLink returns the replication link of the primary the sentinels
// agree on.
func primaryLink(ctx context.Context, t *Target) (*cluster.Link, error) {
	fo, err := failoverOf(t)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	p, err := fo.WaitPrimary(wctx)
	if err != nil {
		return nil, err
	}
	l := fo.ReplicationLink(p)
	if l == nil {
		return nil, fmt.Errorf("%s has no replication link of its own (the docker backend)", p.Name())
	}
	return l, nil
}

// healLinks removes the toxics names from every node's replication link
// and waits, at most rejoinTimeout, until the topology is healthy.
func healLinks(ctx context.Context, t *Target, names ...string) error {
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range fo.Nodes() {
		if l := fo.ReplicationLink(n); l != nil {
			errs = append(errs, removeToxics(ctx, l, names))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	if _, err := fo.WaitHealthy(wctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
