package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/locktorture/locktorture/cluster"
)

// Toxiproxy's streams: upstream the client's commands, downstream the
// replies.
const (
	upstream   = "upstream"
	downstream = "downstream"
)

// The names of the toxics the kinds add, each kind's its own, so that a
// heal removes what its kind added and nothing of a composed fault's.
const (
	partitionUp      = "partition_" + upstream // and clock-partition's split
	partitionDown    = "partition_" + downstream
	holderCutUp      = "holder_cut_" + upstream
	holderCutDown    = "holder_cut_" + downstream
	latencyUp        = "latency_" + upstream // and latency-group's
	latencyDown      = "latency_" + downstream
	killQuorumUp     = "kill_quorum_" + upstream
	killQuorumDown   = "kill_quorum_" + downstream
	delayGrantDown   = "delay_grant_" + downstream
	resetPeerToxic   = "reset_peer"
	limitDataToxic   = "limit_data"
	slicerToxic      = "slicer"
	bandwidthToxic   = "bandwidth"
	connDropUp       = "conn_drop_" + upstream
	connDropDown     = "conn_drop_" + downstream
	failoverUp       = "failover_upstream" // on the topology's own proxies
	failoverDown     = "failover_downstream"
	replicaCutUp     = "replica_cut_" + upstream
	replicaCutDown   = "replica_cut_" + downstream
	replicaLatencyUp = "replica_latency_" + upstream
	replicaLatencyDn = "replica_latency_" + downstream
)

type toxicSpec = cluster.Toxic

// injectToxic adds specs to l, each acting on every connection, open or
// new, in one direction (with a Toxicity below 1, on each by a draw of
// toxiproxy's; 0 is 1).
func injectToxic(ctx context.Context, l *cluster.Link, specs ...toxicSpec) error {
	var errs []error
	for _, spec := range specs {
		if l == nil {
			errs = append(errs, fmt.Errorf("toxic %s: the node has no proxy", spec.Name))
			continue
		}
		if spec.Toxicity == 0 {
			spec.Toxicity = 1
		}
		errs = append(errs, l.AddToxic(ctx, spec))
	}
	return errors.Join(errs...)
}

// injectToxics adds specs to every group's proxy of the target's nodes idx.
func injectToxics(ctx context.Context, t *Target, idx []int, specs ...toxicSpec) error {
	return eachNode(t, idx, func(n *cluster.Node) error {
		var errs []error
		for g := range t.Cluster.Groups() {
			if l := n.GroupLink(g); l != nil {
				errs = append(errs, injectToxic(ctx, l, specs...))
				continue
			}
			for _, spec := range specs {
				errs = append(errs, fmt.Errorf("toxic %s: %s has no proxy", spec.Name, n.Name()))
			}
		}
		return errors.Join(errs...)
	})
}

// blackHoleSpecs are a black hole's toxics, named up and down: timeout
// toxics with timeout 0 on both streams, commands first. Bytes are
// dropped and no connection is closed, as in a real partition: the
// client learns nothing until its own timeout fires, and new connections
// hang in their first command. Disabling the proxy instead would refuse
// and reset connections at once: a fast, explicit failure a real
// partition does not give, sparing the lock its timeout paths.
func blackHoleSpecs(up, down string) []toxicSpec {
	return []toxicSpec{
		{Name: up, Type: "timeout", Stream: upstream, Attributes: map[string]int64{"timeout": 0}},
		{Name: down, Type: "timeout", Stream: downstream, Attributes: map[string]int64{"timeout": 0}},
	}
}

func blackHole(ctx context.Context, l *cluster.Link, up, down string) error {
	return injectToxic(ctx, l, blackHoleSpecs(up, down)...)
}

// clearToxics removes the toxics names from every proxy, ignoring those
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

func removeToxics(ctx context.Context, l *cluster.Link, names []string) error {
	var errs []error
	for _, name := range names {
		if err := l.RemoveToxic(ctx, name); err != nil && !errors.Is(err, cluster.ErrNoToxic) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
