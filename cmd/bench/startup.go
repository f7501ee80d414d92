package main

import (
	"context"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// startupResult is part 4: how long cluster.Start takes to have 5 nodes
// and their proxies answering PING.
type startupResult struct {
	Nodes int
	Times []time.Duration
}

// startup starts and closes a cluster of n nodes rounds times.
func startup(ctx context.Context, n, rounds int, logf func(string, ...any)) (startupResult, error) {
	r := startupResult{Nodes: n}
	for range rounds {
		start := time.Now()
		cl, err := cluster.Start(ctx, n)
		el := time.Since(start)
		if err != nil {
			return r, err
		}
		// Start returns once every node answered PING through its proxy.
		if err := cl.Close(); err != nil {
			return r, err
		}
		r.Times = append(r.Times, el)
		logf("startup: %d nodes and proxies answered in %v", n, el.Round(time.Millisecond))
	}
	return r, nil
}

// medianDur is the median of ds.
func medianDur(ds []time.Duration) time.Duration {
	f := make([]float64, len(ds))
	for i, d := range ds {
		f[i] = float64(d)
	}
	return time.Duration(median(f))
}
