package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// ClockBackSlew jumps the wall clock of nodes back by Offset (negative),
// keeps it there for Hold, then brings it back to the real time by
// slewing: the offset moves to 0 at Rate, rewritten every few
// milliseconds, so the node's clock runs at most Rate faster than real
// time, never jumping forward by more than Rate × 5 ms. A backward jump
// only makes keys live longer; the slew makes a key set while it runs
// expire up to Rate × TTL early, which the drift allowance covers while
// Rate < 1%. So the fault should cost liveness only (a crashed holder's
// key lives up to |Offset| longer), unlike clock's backward jump, whose
// heal is a forward jump that expires keys early. The slew runs within
// the fault's active time (MinActive); Heal waits for it and sets any
// rest right at once, reporting it as an error. It needs the clock shim.
type ClockBackSlew struct {
	Nodes  []int    `json:"nodes"`
	Offset Duration `json:"offset"`
	Hold   Duration `json:"hold"`
	Rate   float64  `json:"rate"`

	bg background // the slew's goroutine
}

var (
	_ RefusingFault = (*ClockBackSlew)(nil)
	_ LastingFault  = (*ClockBackSlew)(nil)
)

var clockBackSlewKind = Kind{
	Name:    "clock-back-slew",
	Family:  "clock",
	Summary: "jump the wall clock of some nodes 0.1–0.2 TTL back, then slew it back at 0.8% (no forward jump)",
	Needs:   Needs{Cluster: cluster.Abilities{Clock: true}, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ClockBackSlew{Nodes: clockTargets(rng, s, minorityOrMajority), Rate: SlewRate}
		ttl := max(s.TTL, time.Millisecond)
		off := ttl/10 + time.Duration(rng.Int64N(int64(ttl/10)+1))
		f.Offset = -Duration(max(off.Truncate(time.Millisecond), time.Millisecond))
		f.Hold = Duration(ttl)
		return f
	},
	Decode: decode[ClockBackSlew],
}

func (c *ClockBackSlew) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	switch {
	case c.Offset >= 0:
		return fmt.Errorf("offset %s: want a backward jump (negative)", time.Duration(c.Offset))
	case c.Hold < 0:
		return errors.New("negative hold")
	}
	return checkRate(c.Rate)
}

// Refuse says why the fault does not fit s, or "".
func (c *ClockBackSlew) Refuse(s Setup) string { return refusal("clock-back-slew", c.fit(s.Nodes)) }

// MinActive is Hold plus the slew's time, |Offset| / Rate, and a tick.
func (c *ClockBackSlew) MinActive() time.Duration {
	if c.Rate <= 0 {
		return time.Duration(c.Hold)
	}
	return time.Duration(c.Hold) + time.Duration(float64(-c.Offset)/c.Rate) + slewTick
}

func (c *ClockBackSlew) String() string {
	return fmt.Sprintf("clock jump %s on %s, slewed back at %.2g%%", time.Duration(c.Offset), nodeNames(c.Nodes), c.Rate*100)
}

// Start sets the nodes' clocks Offset back, and slews them to 0 after Hold.
func (c *ClockBackSlew) Start(ctx context.Context, t *Target) error {
	ns, err := clockNodes(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	if err := setClocks(ns, time.Duration(c.Offset)); err != nil {
		return err
	}
	c.bg.start(func(stop <-chan struct{}) error {
		if await(ctx, stop, time.After(time.Duration(c.Hold))) != nil {
			return nil
		}
		err := Slew(ctx, stop, func(d time.Duration) error { return setClocks(ns, d) }, time.Duration(c.Offset), c.Rate, slewTick)
		if ctx.Err() != nil { // the run's end is no error: Heal sets the rest
			return nil
		}
		return err
	})
	return nil
}

// Heal waits for the slew to reach 0, or ctx's end, and then sets every
// node's clock right; a slew that had not finished is an error (the rest
// was a forward jump).
func (c *ClockBackSlew) Heal(ctx context.Context, t *Target) error {
	var err error
	if c.bg.stop != nil {
		select {
		case <-c.bg.done:
			err = c.bg.halt()
		case <-ctx.Done():
			c.bg.halt()
			err = fmt.Errorf("slew cut short (%w): the rest was set right at once", ctx.Err())
		}
	}
	return errors.Join(err, resetClocks(t, c.Nodes))
}
