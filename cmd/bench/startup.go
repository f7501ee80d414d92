package main

import (
	"context"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// startupResult is part 4: how long cluster.Start takes.
type startupResult struct {
	Nodes int
	Times []time.Duration
}

// runStartup starts and closes a cluster of 5 nodes -startup-rounds
// times; Start returns once every node answered PING through its proxy.
func runStartup(ctx context.Context, e *benchEnv, r *results) error {
	s := &r.Startup
	s.Nodes = 5
	for range e.o.startupRounds {
		start := time.Now()
		cl, err := cluster.Start(ctx, s.Nodes)
		el := time.Since(start)
		if err != nil {
			return err
		}
		if err := cl.Close(); err != nil {
			return err
		}
		s.Times = append(s.Times, el)
		e.logf("startup: %d nodes and proxies answered in %v", s.Nodes, el.Round(time.Millisecond))
	}
	return nil
}
