package harness

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
)

// observers are a run's node observers: one per node, on a connection that
// bypasses the fault proxies, recording each notification of a lock key as a
// history.NodeKey event.
type observers []*cluster.Observer

// observe starts an observer on every node for keys. A node that refuses
// (CONFIG SET) is said on log and left out: the history lacks its
// observations.
func (r *run) observe(ctx context.Context, cl *cluster.Cluster, keys []string, log io.Writer) observers {
	if cl.Server() != cluster.ServerRedis {
		return nil // etcd members have no keyspace notifications
	}
	keep := make(map[string]bool, len(keys))
	for _, k := range keys {
		keep[k] = true
	}
	var obs observers
	for _, n := range cl.Nodes() {
		o, err := n.Observe(ctx, func(k string) bool { return keep[k] }, func(ob cluster.Observation) {
			// A write error reaches the clients too, which end the run.
			_ = r.rec.Append(history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess,
				Time: max(1, r.rec.Offset(ob.At)), Key: ob.Key, Node: history.Int(ob.Node), Value: ob.Event})
		})
		if err != nil {
			if log != nil {
				fmt.Fprintf(log, "node %s not observed: %v\n", n.Name(), err)
			}
			continue
		}
		obs = append(obs, o)
	}
	return obs
}

// stop stops every observer once what its node sent so far is recorded (Sync,
// on a node that answers).
func (obs observers) stop(ctx context.Context) error {
	var errs []error
	for _, o := range obs {
		errs = append(errs, o.Sync(ctx), o.Stop())
	}
	return errors.Join(errs...)
}
