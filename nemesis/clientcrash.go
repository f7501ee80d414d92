package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
)

// ClientCrash makes one lock holder stop without releasing: the client
// that next returns from a successful acquire abandons its lease (its
// goroutine records nothing more and never releases it) and a fresh client,
// with a new process number, takes its place. The lock must become free
// again on its own: a lock whose keys expire frees it within the TTL; one
// whose keys do not (setnx-no-ttl) stays stuck, which the liveness
// verdict reports.
type ClientCrash struct {
	armed
}

// armed is what a fault armed in the clients and has not been taken
// yet: its withdraw function, called at the heal.
type armed struct {
	mu       sync.Mutex
	withdraw func()
}

// arm keeps withdraw for disarm.
func (a *armed) arm(withdraw func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.withdraw = withdraw
}

// disarm withdraws what was armed, if anything, once.
func (a *armed) disarm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.withdraw != nil {
		a.withdraw()
		a.withdraw = nil
	}
}

// ClientCrasher makes lock holders crash: an optional ability of a
// Target's Clients (a ClientStaller), found by type assertion.
type ClientCrasher interface {
	// Crash makes the next client that acquires a lock abandon it
	// without releasing, and a fresh client take its place. The returned
	// function withdraws a crash that has not happened yet.
	Crash() (withdraw func())
}

var clientCrashKind = Kind{
	Name:    "client-crash",
	Family:  "client-crash",
	Summary: "a lock holder stops without releasing; a fresh client takes its place",
	Needs:   Needs{TTL: true},
	Plan: func(*rand.Rand, Setup) Fault {
		return &ClientCrash{}
	},
	Decode: decode[ClientCrash],
}

func (c *ClientCrash) String() string { return "client-crash" }

// Start arms the crash: the next holder to return from an acquire
// abandons its lease.
func (c *ClientCrash) Start(_ context.Context, t *Target) error {
	cr, ok := t.Clients.(ClientCrasher)
	if !ok {
		return errors.New("no client hook to crash holders")
	}
	c.arm(cr.Crash())
	return nil
}

// Heal withdraws the crash if no client has taken it yet. A crashed
// holder is not brought back: a fresh client has taken its place.
func (c *ClientCrash) Heal(context.Context, *Target) error {
	c.disarm()
	return nil
}
