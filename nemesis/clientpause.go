package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ClientPause stalls one lock holder between its last validity check and
// its access to the protected resource, for longer than the TTL: the
// GC-pause scenario of Kleppmann's "How to do distributed locking". When
// the holder wakes, its lease has expired and another client may hold
// the lock; without fencing its write loses that client's update.
type ClientPause struct {
	Stall Duration `json:"stall"`

	armed
}

var (
	_ RefusingFault = (*ClientPause)(nil)
	_ LastingFault  = (*ClientPause)(nil)
)

var clientPauseKind = Kind{
	Name:    "client-pause",
	Family:  "client-pause",
	Summary: "stall a lock holder past its TTL between its validity check and its write",
	Needs:   Needs{TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Between 1.5 and 2.5 TTLs: well past the lease, short enough for
		// another client to acquire and write meanwhile.
		return &ClientPause{Stall: Duration(s.TTL + s.TTL/2 + time.Duration(rng.Int64N(int64(s.TTL))))}
	},
	Decode: decode[ClientPause],
}

// Refuse says why the fault does not fit s, or "": a stall of nothing is
// a fault that does nothing.
func (c *ClientPause) Refuse(Setup) string {
	if c.Stall <= 0 {
		return fmt.Sprintf("client-pause: stall %v: want a positive stall", time.Duration(c.Stall))
	}
	return ""
}

// MinActive keeps the fault active while the stall lasts, plus a TTL for
// the stalled write to land before the heal is recorded.
func (c *ClientPause) MinActive() time.Duration { return 2 * time.Duration(c.Stall) }

func (c *ClientPause) String() string {
	return fmt.Sprintf("client-pause %s", time.Duration(c.Stall))
}

// Start arms the stall: the next holder to pass its last validity check
// waits.
func (c *ClientPause) Start(_ context.Context, t *Target) error {
	if t.Clients == nil {
		return errors.New("no client hook to stall holders")
	}
	c.arm(t.Clients.Stall(time.Duration(c.Stall)))
	return nil
}

// Heal withdraws the stall if no client has taken it yet; a stall under
// way runs its course (the client wakes on its own).
func (c *ClientPause) Heal(context.Context, *Target) error {
	c.disarm()
	return nil
}
