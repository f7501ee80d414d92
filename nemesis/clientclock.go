package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ClientClock shifts the wall clock of the lock's client processes by
// Offset (forward when positive, back when negative) until Heal sets it
// right; with Mode "strobe" it alternates between Offset and 0 every
// Period, so that every client round in flight at a flip sees the jump.
// It reaches only clients that run as processes under the clock shim
// (the process adapter; Target.ClientClock): the kind refuses a Go lock,
// whose time.Now reads the clock without libc. A client that counts its
// validity on a monotonic clock is unmoved; one that counts the time
// elapsed in a round on the wall clock (redlock-py-wall, as the
// redlock-py library) over-claims by a backward jump during the round and
// under-claims by a forward one.
type ClientClock struct {
	Mode   string   `json:"mode"`
	Offset Duration `json:"offset"`
	Period Duration `json:"period,omitempty"` // strobe only

	bg background // a strobe's goroutine
}

var _ RefusingFault = (*ClientClock)(nil)

var clientClockKind = Kind{
	Name:    "client-clock",
	Family:  "client-clock",
	Summary: "jump the wall clock of the client processes 0.5–0.9 TTL forward or back, or strobe it back and forth every 2–6 ms (process-adapter locks only)",
	Needs:   Needs{ClientClock: true, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		ttl := max(s.TTL, time.Millisecond)
		off := ttl/2 + time.Duration(rng.Int64N(int64(ttl*2/5)+1))
		f := &ClientClock{Mode: ClockJump, Offset: Duration(off.Truncate(time.Millisecond))}
		switch rng.IntN(4) {
		case 0: // forward: a round in flight under-claims, or fails
		case 1: // back: a round in flight over-claims by the jump
			f.Offset = -f.Offset
		default: // strobe back: a backward jump every other Period (4–12
			// ms), so that a round of a few ms often spans one
			f.Offset, f.Mode = -f.Offset, ClockStrobe
			f.Period = Duration(2*time.Millisecond + time.Duration(rng.IntN(5))*time.Millisecond)
		}
		return f
	},
	Decode: decode[ClientClock],
}

func (c *ClientClock) fit() error {
	return checkMode(c.Mode, c.Period)
}

// Refuse says why the fault does not fit s, or "".
func (c *ClientClock) Refuse(s Setup) string {
	if err := c.fit(); err != nil {
		return "client-clock: " + err.Error()
	}
	if !s.ClientProcesses || s.GoClients {
		return clientClockKind.Needs.refuse(s)
	}
	return ""
}

func (c *ClientClock) String() string {
	off := signed(c.Offset)
	if c.Mode == ClockStrobe {
		return fmt.Sprintf("client clock strobe %s/0 every %s", off, time.Duration(c.Period))
	}
	return fmt.Sprintf("client clock jump %s", off)
}

// Start sets the clients' clock Offset off; a strobe then flips it
// between 0 and Offset every Period until Heal or until ctx is done.
func (c *ClientClock) Start(ctx context.Context, t *Target) error {
	if t.ClientClock == nil {
		return errors.New("no client clock (the run started its clients without the clock shim)")
	}
	if err := c.fit(); err != nil {
		return err
	}
	if err := t.ClientClock.SetOffset(time.Duration(c.Offset)); err != nil {
		return err
	}
	if c.Mode == ClockStrobe {
		clk := t.ClientClock
		c.bg.start(func(stop <-chan struct{}) error {
			return strobe(ctx, stop, time.Duration(c.Period), time.Duration(c.Offset), clk.SetOffset)
		})
	}
	return nil
}

// Heal stops a strobe and sets the clients' clock right.
func (c *ClientClock) Heal(_ context.Context, t *Target) error {
	err := c.bg.halt()
	if t.ClientClock == nil {
		return err
	}
	return errors.Join(err, t.ClientClock.SetOffset(0))
}
