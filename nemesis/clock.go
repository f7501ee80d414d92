package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Modes of a clock fault.
const (
	ClockJump   = "jump"   // set the offset once
	ClockStrobe = "strobe" // alternate between the offset and 0
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
		f := &Clock{Nodes: []int{0}, Mode: ClockJump}
		if n := s.Nodes; s.MultiNode || s.Topology == cluster.TopologyFailover {
			if rng.IntN(2) == 0 {
				f.Nodes = pickMinority(rng, n)
			} else {
				f.Nodes = pickNodes(rng, n, n/2+1+rng.IntN(n-n/2)) // a majority
			}
		}
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

// Refuse says why the fault does not fit s, or "".
func (c *Clock) Refuse(s Setup) string {
	if err := c.fit(s.Nodes); err != nil {
		return "clock: " + err.Error()
	}
	return ""
}

// signed renders an offset with its sign: "+300ms", "-1s".
func signed(d Duration) string {
	if d >= 0 {
		return "+" + time.Duration(d).String()
	}
	return time.Duration(d).String()
}

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

// background is the goroutine of a clock fault that keeps changing a
// clock (a strobe, a drift, a slew): Start starts it, Heal (in the same
// goroutine as Start) halts it and takes its error.
type background struct {
	stop chan struct{} // closed by halt
	done chan struct{} // closed when f has returned
	err  error         // f's error; read once done is closed
}

// start runs f in a goroutine; f returns once stop is closed.
func (b *background) start(f func(stop <-chan struct{}) error) {
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.done)
		b.err = f(b.stop)
	}()
}

// halt stops the goroutine, waits for it and returns its error; nil when
// none was started or it was halted already.
func (b *background) halt() error {
	if b.stop == nil {
		return nil
	}
	close(b.stop)
	<-b.done
	b.stop = nil // done stays closed
	return b.err
}

// strobe flips a clock between 0 and off every period, starting shifted,
// until stop is closed or ctx is done (nil), or set fails (its error: the
// cluster or the clients are gone). Clock and ClientClock strobe with it.
func strobe(ctx context.Context, stop <-chan struct{}, period, off time.Duration, set func(time.Duration) error) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for shifted := true; ; {
		select {
		case <-ctx.Done():
			return nil
		case <-stop:
			return nil
		case <-tick.C:
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

// Heal stops a strobe, waits for it to return (it never blocks) and sets
// every node's clock right.
func (c *Clock) Heal(_ context.Context, t *Target) error {
	return errors.Join(c.bg.halt(), eachNode(t, c.Nodes, func(n *cluster.Node) error { return n.SetClockOffset(0) }))
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
