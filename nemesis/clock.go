package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Clock shifts the wall clock of nodes by Offset (forward when positive,
// back when negative) until Heal sets it right. Redis expires keys by the
// wall clock, so a jump forward on nodes that granted a lock expires it
// early: a RedLock holder still counts on a lease a majority no longer
// keeps, and another client can take the lock. A jump back makes leases
// outlive their TTL. With Mode "strobe" the offset alternates between
// Offset and 0 every Period. The monotonic clock (event-loop timers) is not
// touched. It needs the nodes started with the clock shim
// (cluster.WithClockShim).
type Clock struct {
	Nodes  []int    `json:"nodes"`
	Mode   string   `json:"mode"`
	Offset Duration `json:"offset"`
	Period Duration `json:"period,omitempty"` // strobe only

	bg background // a strobe's goroutine, started by Start, halted by Heal
}

var _ RefusingFault = (*Clock)(nil)

var clockKind = Kind{
	Name:    "clock",
	Family:  "clock",
	Summary: "jump the wall clock of some nodes 1.5–3 TTLs forward (or back), or strobe it",
	Needs:   Needs{Cluster: cluster.Abilities{Clock: true}, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Clock{Mode: ClockJump}
		f.Nodes = clockTargets(rng, s, minorityOrMajority)
		// 1.5 to 3 TTLs: every lease the nodes granted is over at once.
		ttl := max(s.TTL, time.Millisecond)
		off := ttl*3/2 + time.Duration(rng.Int64N(int64(ttl*3/2)+1))
		f.Offset = Duration(off.Truncate(time.Millisecond))
		switch rng.IntN(4) {
		case 0: // back: leases outlive their TTL, then end at once on Heal
			f.Offset = -f.Offset
		case 1: // strobe: expiry comes and goes a few times within a TTL
			f.Mode = ClockStrobe
			p := ttl/4 + time.Duration(rng.Int64N(int64(ttl/2)+1))
			f.Period = Duration(max(p.Truncate(time.Millisecond), 10*time.Millisecond))
		}
		return f
	},
	Decode: decode[Clock],
}

// fit checks the parameters, and the nodes against the number of nodes.
func (c *Clock) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	return checkMode(c.Mode, c.Period)
}

// Refuse says why the fault does not fit s, or "".
func (c *Clock) Refuse(s Setup) string { return refusal("clock", c.fit(s.Nodes)) }

func (c *Clock) String() string {
	off := signed(c.Offset)
	if c.Mode == ClockStrobe {
		return fmt.Sprintf("clock strobe %s/0 every %s on %s", off, time.Duration(c.Period), nodeNames(c.Nodes))
	}
	return fmt.Sprintf("clock jump %s on %s", off, nodeNames(c.Nodes))
}

// Start sets the nodes' clocks Offset off; a strobe then flips them between
// 0 and Offset every Period until Heal or until ctx is done (Heal still
// sets them right).
func (c *Clock) Start(ctx context.Context, t *Target) error {
	ns, err := clockNodes(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	if err := setClocks(ns, time.Duration(c.Offset)); err != nil {
		return err
	}
	if c.Mode == ClockStrobe {
		c.bg.start(func(stop <-chan struct{}) error {
			return strobe(ctx, stop, time.Duration(c.Period), time.Duration(c.Offset), func(d time.Duration) error { return setClocks(ns, d) })
		})
	}
	return nil
}

// Heal stops a strobe, waits for it to return (it never blocks) and sets
// every node's clock right.
func (c *Clock) Heal(_ context.Context, t *Target) error {
	return errors.Join(c.bg.halt(), resetClocks(t, c.Nodes))
}
