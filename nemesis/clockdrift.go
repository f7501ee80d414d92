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
		f := &ClockDrift{Nodes: []int{0}}
		if n := s.Nodes; s.MultiNode || s.Topology == cluster.TopologyFailover {
			f.Nodes = pickNodes(rng, n, n/2+1+rng.IntN(n-n/2))
		}
		f.Rate = float64(5+rng.IntN(46)) / 1000
		return f
	},
	Decode: decode[ClockDrift],
}

func (c *ClockDrift) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	if !(c.Rate > 0 && c.Rate <= 1) {
		return fmt.Errorf("rate %g: want 0 < rate ≤ 1", c.Rate)
	}
	return nil
}

// Refuse says why the fault does not fit s, or "".
func (c *ClockDrift) Refuse(s Setup) string {
	if err := c.fit(s.Nodes); err != nil {
		return "clock-drift: " + err.Error()
	}
	return ""
}

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
	return errors.Join(c.bg.halt(), eachNode(t, c.Nodes, func(n *cluster.Node) error { return n.SetClockOffset(0) }))
}

// Drift sets an offset of rate × the time since Drift began every tick,
// until stop is closed (ErrSlewStopped) or ctx is done, or set fails: a
// clock that runs rate fast.
func Drift(ctx context.Context, stop <-chan struct{}, set func(time.Duration) error, rate float64, tick time.Duration) error {
	began := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := set(time.Duration(rate * float64(time.Since(began)))); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return ErrSlewStopped
		case <-t.C:
		}
	}
}
