package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/locktorture/locktorture/cluster"
)

// Toxiproxy's two streams: upstream carries the client's commands to Redis,
// downstream Redis's replies to the client.
const (
	upstream   = "upstream"
	downstream = "downstream"
)

// The names of the toxics the kinds add, each kind's its own, so that a
// heal removes what its kind added and nothing of another's (a step's
// faults may be composed).
const (
	// partition, and clock-partition's split
	partitionUp   = "partition_" + upstream
	partitionDown = "partition_" + downstream
	// partition-holder
	holderCutUp   = "holder_cut_" + upstream
	holderCutDown = "holder_cut_" + downstream
	// latency, latency-group
	latencyUp   = "latency_" + upstream
	latencyDown = "latency_" + downstream
	// kill-quorum
	killQuorumUp   = "kill_quorum_" + upstream
	killQuorumDown = "kill_quorum_" + downstream
	// delay-grant
	delayGrantDown = "delay_grant_" + downstream
	// the connection kinds
	resetPeerToxic = "reset_peer"
	limitDataToxic = "limit_data"
	slicerToxic    = "slicer"
	connDropUp     = "conn_drop_" + upstream
	connDropDown   = "conn_drop_" + downstream
	// failover, failover-unreplicated (on the topology's own proxies)
	failoverUp   = "failover_upstream"
	failoverDown = "failover_downstream"
	// the replication-link kinds
	replicaCutUp     = "replica_cut_" + upstream
	replicaCutDown   = "replica_cut_" + downstream
	replicaLatencyUp = "replica_latency_" + upstream
	replicaLatencyDn = "replica_latency_" + downstream
)

// toxicSpec is a toxic as toxiproxy's API takes it.
type toxicSpec = cluster.Toxic

// injectToxic adds a toxic to l that acts on every connection, open or
// new, in one direction: on each, with a Toxicity below 1, by a draw of
// toxiproxy's (0 is 1: on every connection).
func injectToxic(ctx context.Context, l *cluster.Link, spec toxicSpec) error {
	if l == nil {
		return fmt.Errorf("toxic %s: the node has no proxy", spec.Name)
	}
	if spec.Toxicity == 0 {
		spec.Toxicity = 1
	}
	return l.AddToxic(ctx, spec)
}

// injectToxics adds specs to every client group's proxy of the target's
// nodes idx, one node after the other.
func injectToxics(ctx context.Context, t *Target, idx []int, specs ...toxicSpec) error {
	return eachNode(t, idx, func(n *cluster.Node) error {
		var errs []error
		for g := range t.Cluster.Groups() {
			l := n.GroupLink(g)
			for _, spec := range specs {
				if l == nil {
					errs = append(errs, fmt.Errorf("toxic %s: %s has no proxy", spec.Name, n.Name()))
					continue
				}
				errs = append(errs, injectToxic(ctx, l, spec))
			}
		}
		return errors.Join(errs...)
	})
}

// blackHoleSpecs are the toxics of a black hole, under the names up and
// down: timeout toxics with timeout 0 on both streams, commands first,
// which drop every byte and close no connection until they are removed
// (see Partition).
func blackHoleSpecs(up, down string) []toxicSpec {
	return []toxicSpec{
		{Name: up, Type: "timeout", Stream: upstream, Attributes: map[string]int64{"timeout": 0}},
		{Name: down, Type: "timeout", Stream: downstream, Attributes: map[string]int64{"timeout": 0}},
	}
}

// blackHole drops every byte through l both ways (blackHoleSpecs).
func blackHole(ctx context.Context, l *cluster.Link, up, down string) error {
	var errs []error
	for _, spec := range blackHoleSpecs(up, down) {
		errs = append(errs, injectToxic(ctx, l, spec))
	}
	return errors.Join(errs...)
}

// clearToxics removes the toxics called names from every proxy of every
// node, those of every client group included, ignoring the ones that are
// not there: a heal that works after a half-done start, and twice.
func clearToxics(ctx context.Context, t *Target, names ...string) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	var errs []error
	for _, n := range t.Cluster.Nodes() {
		for g := range t.Cluster.Groups() {
			if l := n.GroupLink(g); l != nil {
				errs = append(errs, removeToxics(ctx, l, names))
			}
		}
	}
	return errors.Join(errs...)
}

// removeToxics removes the toxics called names from the proxy l,
// ignoring the ones that are not there.
func removeToxics(ctx context.Context, l *cluster.Link, names []string) error {
	var errs []error
	for _, name := range names {
		if err := l.RemoveToxic(ctx, name); err != nil && !errors.Is(err, cluster.ErrNoToxic) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
