package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The clock family's shared code: what every kind that moves a node's
// wall clock through the clock shim (clock, clock-back-slew, clock-drift,
// clock-holder, clock-minority, clock-majority, clock-partition) and
// the clients' clock (client-clock) draw, check, set and heal with.

// Modes of a clock fault.
const (
	ClockJump   = "jump"   // set the offset once
	ClockStrobe = "strobe" // alternate between the offset and 0
)

// clockTargets draws the nodes a clock fault takes: sp's nodes of a
// multi-node lock, or of the failover topology (a primary and its
// replica, whose clocks both count); the one node of a single-instance
// lock.
func clockTargets(rng *rand.Rand, s Setup, sp nodeSpec) []int {
	if s.Topology == cluster.TopologyFailover {
		return sp.pick(rng, s.Nodes)
	}
	return targets(rng, s, sp)
}

// checkRate checks the rate of a clock that runs fast (a slew, a drift).
func checkRate(rate float64) error {
	if !(rate > 0 && rate <= 1) {
		return fmt.Errorf("rate %g: want 0 < rate ≤ 1", rate)
	}
	return nil
}

// checkMode checks a clock fault's mode and period (Clock, ClientClock).
func checkMode(mode string, period Duration) error {
	switch {
	case mode == ClockJump && period != 0:
		return fmt.Errorf("mode %q takes no period", mode)
	case mode == ClockStrobe && period <= 0:
		return fmt.Errorf("mode %q needs a positive period", mode)
	case mode != ClockJump && mode != ClockStrobe:
		return fmt.Errorf("mode %q: want %q or %q", mode, ClockJump, ClockStrobe)
	}
	return nil
}

// signed renders an offset with its sign: "+300ms", "-1s".
func signed(d Duration) string {
	if d >= 0 {
		return "+" + time.Duration(d).String()
	}
	return time.Duration(d).String()
}

// clockNodes returns the target's nodes idx of a clock fault, after fit
// checked the fault against the cluster's size (Clock, ClockBackSlew,
// ClockDrift).
func clockNodes(t *Target, idx []int, fit func(nodes int) error) ([]*cluster.Node, error) {
	if t.Cluster == nil {
		return nil, errors.New("no cluster")
	}
	if err := fit(len(t.Cluster.Nodes())); err != nil {
		return nil, err
	}
	ns := make([]*cluster.Node, len(idx))
	for j, i := range idx {
		ns[j] = t.Cluster.Node(i)
	}
	return ns, nil
}

func setClocks(ns []*cluster.Node, off time.Duration) error {
	var errs []error
	for _, n := range ns {
		errs = append(errs, n.SetClockOffset(off))
	}
	return errors.Join(errs...)
}

// resetClocks sets the clocks of t's nodes idx right: every clock
// fault's heal.
func resetClocks(t *Target, idx []int) error {
	return eachNode(t, idx, func(n *cluster.Node) error { return n.SetClockOffset(0) })
}

// setClocks sets the clocks of the decision's target nodes to the
// decision's amount (jumped) or to 0; nothing when it did not strike.
func (a *Aim) setClocks(t *Target, jumped bool) error {
	if !a.struck() {
		return nil
	}
	off := time.Duration(0)
	if jumped {
		off = time.Duration(a.Decision.Amount)
	}
	return eachNode(t, a.Decision.Targets, func(n *cluster.Node) error { return n.SetClockOffset(off) })
}

// strobe flips a clock between 0 and off every period, starting shifted,
// until stop is closed or ctx is done (nil), or set fails (its error: the
// cluster or the clients are gone). Clock and ClientClock strobe with it.
func strobe(ctx context.Context, stop <-chan struct{}, period, off time.Duration, set func(time.Duration) error) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for shifted := true; ; {
		if await(ctx, stop, tick.C) != nil {
			return nil
		}
		shifted = !shifted
		d := time.Duration(0)
		if shifted {
			d = off
		}
		if err := set(d); err != nil {
			return err
		}
	}
}

// SlewRate is the rate at which clock-back-slew brings a node's clock back
// to the real time: the clock runs 0.8% fast while it catches up, below
// the 1% clock drift the locks' drift allowance assumes (TTL×1% + 2 ms,
// RedLock's drift factor), as NTP's slewing (at most 0.05%) is below it.
const SlewRate = 0.008

// slewTick is how often a slew rewrites the offset: each rewrite moves the
// clock forward by Rate × slewTick (40 µs at 0.8% and 5 ms).
const slewTick = 5 * time.Millisecond

// Slew moves an offset from from (negative) to 0 at rate, calling set
// every tick with the offset due then (from + rate × the time since Slew
// began, at most 0), until it has set 0, stop is closed (then it returns
// ErrSlewStopped) or ctx is done. The clock it sets runs at most rate
// faster than the real time, plus one tick's rounding.
func Slew(ctx context.Context, stop <-chan struct{}, set func(time.Duration) error, from time.Duration, rate float64, tick time.Duration) error {
	began := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		off := min(from+time.Duration(rate*float64(time.Since(began))), 0)
		if err := set(off); err != nil {
			return err
		}
		if off == 0 {
			return nil
		}
		if err := await(ctx, stop, t.C); err != nil {
			return err
		}
	}
}

// ErrSlewStopped is returned by Slew when it was stopped before reaching 0.
var ErrSlewStopped = errors.New("nemesis: slew stopped before the clock caught up")

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
		if err := await(ctx, stop, t.C); err != nil {
			return err
		}
	}
}
