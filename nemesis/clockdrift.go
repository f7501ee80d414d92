package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// ClockDrift runs the wall clock of nodes fast by Rate (0.02: 2% fast)
// until Heal, by the slew's mechanism: the offset, rewritten every few
// milliseconds, grows by Rate × the real time elapsed. A key set on such
// a node lives TTL/(1+Rate) of real time, not TTL; RedLock's drift
// allowance (TTL×1% + 2 ms) covers a Rate up to about 1%. Heal sets the
// offset back to 0: a backward jump, which only makes keys live longer.
// It needs the clock shim; the safety envelope sweeps Rate (torture
// envelope --fault drift).
type ClockDrift struct {
	Nodes []int   `json:"nodes"`
	Rate  float64 `json:"rate"`

	bg background // the drift's goroutine
}

var _ RefusingFault = (*ClockDrift)(nil)

var clockDriftKind = Kind{
	Name:    "clock-drift",
	Family:  "clock",
	Summary: "run the wall clock of some nodes 0.5–5% fast until the heal (a backward jump back to the real time)",
	Needs:   Needs{Cluster: cluster.Abilities{Clock: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ClockDrift{Nodes: clockTargets(rng, s, someMajority)}
		f.Rate = float64(5+rng.IntN(46)) / 1000
		return f
	},
	Decode: decode[ClockDrift],
}

func (c *ClockDrift) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	return checkRate(c.Rate)
}

// Refuse says why the fault does not fit s, or "".
func (c *ClockDrift) Refuse(s Setup) string { return refusal("clock-drift", c.fit(s.Nodes)) }

func (c *ClockDrift) String() string {
	return fmt.Sprintf("clock-drift: clocks %.3g%% fast on %s", c.Rate*100, nodeNames(c.Nodes))
}

// Start makes the nodes' clocks run Rate fast until Heal.
func (c *ClockDrift) Start(ctx context.Context, t *Target) error {
	ns, err := clockNodes(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	c.bg.start(func(stop <-chan struct{}) error {
		err := Drift(ctx, stop, func(d time.Duration) error { return setClocks(ns, d) }, c.Rate, slewTick)
		if ctx.Err() != nil || errors.Is(err, ErrSlewStopped) {
			return nil
		}
		return err
	})
	return nil
}

// Heal stops the drift and sets the clocks right.
func (c *ClockDrift) Heal(_ context.Context, t *Target) error {
	return errors.Join(c.bg.halt(), resetClocks(t, c.Nodes))
}
