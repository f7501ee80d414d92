package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// ClientStop stops a lock holder's whole client process (SIGSTOP of its
// process group) right after its acquire returned ok, and continues it
// (SIGCONT) Pause later: the GC or VM pause of a whole client, its lock's
// renewal thread (a watchdog) and its work alike, not one goroutine. A
// Pause longer than the TTL lets the key expire and another client take
// it while the holder is stopped; when it runs again, it goes on as the
// holder until it releases or its lock tells it of the loss, which a
// watchdog does only now: too late. The client in the harness that drives
// the process is stopped with it (it takes no further step until the
// process continues).
//
// It is aimed like pause-holder (targeted.go): Arm follows the run's view
// and strikes at the next grant, its Decision (the client, its hold, the
// pause) kept in schedule.json; a replay waits for the recorded offset,
// then strikes at the next grant, and says whether it was the recorded
// client's hold of the recorded key. Its random form, client-stop-random
// (ClientStopRandom), stops a client process drawn from the seed at the
// step's start, holder or not.
//
// Only a client that runs as a process of its own can be stopped: the
// kinds need Needs.ClientProcesses and refuse a lock that runs in this
// process (add --client-process for a Go lock). The target's client hook
// must offer ProcessStopper.
type ClientStop struct {
	Pause Duration `json:"pause"`
	Aim

	stop stopped
}

// ProcessStopper stops and continues the client processes of a run's
// lock: an optional ability of a Target's Clients, found by type
// assertion, for the client-stop kinds.
type ProcessStopper interface {
	// StopHolder stops the client process that serves client's hold of
	// token (SIGSTOP to its process group), and the client with it: it
	// takes no further step until cont continues both (SIGCONT). It fails
	// when no live process serves that lease (it was released).
	StopHolder(client int, token string) (cont func() error, err error)
	// StopProcess stops the pick-th (modulo their number, in the order
	// they started) of the client processes running now, and the client
	// whose lease it serves, if any. It returns what it stopped, as
	// "client 3's process (pid 4242)" or "an idle client process (pid
	// 4242)".
	StopProcess(pick int) (what string, cont func() error, err error)
}

var (
	_ aimedFault  = (*ClientStop)(nil)
	_ aimedFault  = (*ClientStopRandom)(nil)
	_ EndingFault = (*ClientStop)(nil)
	_ EndingFault = (*ClientStopRandom)(nil)
)

// drawPause draws a pause from 1.5 to 2.5 TTLs, as client-pause's stall:
// well past the lease, short enough for another client to acquire and
// write meanwhile.
func drawPause(rng *rand.Rand, ttl time.Duration) Duration {
	return Duration((ttl + ttl/2 + time.Duration(rng.Int64N(int64(max(ttl, 1))))).Truncate(time.Millisecond))
}

var clientStopKind = Kind{
	Name:    "client-stop",
	Family:  "client-stop",
	Summary: "stop a holder's whole client process (SIGSTOP) right after its grant, for 1.5–2.5 TTLs (client processes only)",
	Needs:   Needs{TTL: true, ClientProcesses: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Stopped for its pause, then a TTL for what it does when it
		// runs again (a late write, a late notice) to land.
		f := &ClientStop{Pause: drawPause(rng, s.TTL), Aim: newAim(s)}
		f.Active = f.Pause + Duration(max(s.TTL, time.Millisecond))
		return f
	},
	Decode: decode[ClientStop],
}

// Refuse says why the fault does not fit s, or "".
func (c *ClientStop) Refuse(s Setup) string {
	if c.Pause <= 0 {
		return fmt.Sprintf("client-stop: pause %v: want a positive pause", time.Duration(c.Pause))
	}
	if why := c.refuse("client-stop", -1); why != "" {
		return why
	}
	return clientStopKind.Needs.refuse(s)
}

func (c *ClientStop) String() string {
	s := fmt.Sprintf("client-stop: stop a holder's process right after its grant for %s", time.Duration(c.Pause))
	if c.struck() {
		tr := c.Decision.Trigger
		return fmt.Sprintf("client-stop: stop client %d's process for %s, at client %d's hold of %s", c.Decision.Targets[0], time.Duration(c.Decision.Amount), tr.Client, tr.Key)
	}
	return s + decided(c.Decision, "")
}

// Arm waits for the next grant (a replay: first for the recorded offset)
// and stops the holder's process at once; a hold released before its
// process could be stopped is passed over for the next grant.
func (c *ClientStop) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	ps, ok := t.Clients.(ProcessStopper)
	if !ok {
		return false, errors.New("the client hook cannot stop client processes")
	}
	if t.View == nil {
		return false, errors.New("no view of the run's holds to aim at")
	}
	rec := c.Decision
	if rec != nil {
		d, err := replay(ctx, t, base, rec)
		if err != nil || d.Missed != "" {
			c.Decision = d
			return false, err
		}
	}
	_, after := t.View.Holds()
	for {
		ch, err := WaitFor(ctx, t.View, after, func(ch Change) bool { return ch.Kind == HoldGranted && ch.Hold.Ended == 0 })
		if err != nil {
			c.Decision = &Decision{Missed: "no grant within the step's window"}
			if rec != nil {
				c.Decision.Replay = verdict(rec, c.Decision, 0)
			}
			return false, nil
		}
		after = ch.Seq
		cont, err := ps.StopHolder(ch.Hold.Client, ch.Hold.Token)
		if err != nil {
			continue // released already: the next grant
		}
		now := runNow(base)
		c.stop.begin(cont, time.Duration(c.Pause))
		c.Decision = &Decision{
			At:      Duration(now),
			Trigger: &Trigger{Change: HoldGranted, Client: ch.Hold.Client, Key: ch.Hold.Key, Granted: ch.Hold.Granted, Left: Duration(ch.Hold.ValidUntil - now)},
			Targets: []int{ch.Hold.Client},
			Amount:  c.Pause,
		}
		if rec != nil {
			c.Decision.Replay = verdict(rec, c.Decision, sameHolder)
		}
		return true, nil
	}
}

// Start does nothing more: the process was stopped when Arm struck.
func (c *ClientStop) Start(context.Context, *Target) error { return nil }

// Heal continues the process if its pause has not run out yet.
func (c *ClientStop) Heal(context.Context, *Target) error { return c.stop.end() }

// Ended is closed when the process has been continued: the stop, not the
// step, is the fault's window.
func (c *ClientStop) Ended() <-chan struct{} { return c.stop.ended() }

// ClientStopRandom is client-stop's random form: at the step's start it
// stops the Pick-th client process running then (modulo their number),
// whether its client holds a lease or not, for Pause. Its decision is
// what it stopped (Stopped); a replay stops the same pick at the same
// offset.
type ClientStopRandom struct {
	Pick    int      `json:"pick"`
	Pause   Duration `json:"pause"`
	Active  Duration `json:"active"`
	Stopped string   `json:"stopped,omitempty"`

	stop stopped
}

var clientStopRandomKind = Kind{
	Name:    "client-stop-random",
	Family:  "client-stop",
	Summary: "stop a client process drawn from the seed (SIGSTOP), holder or not, for 1.5–2.5 TTLs (client processes only)",
	Needs:   Needs{TTL: true, ClientProcesses: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ClientStopRandom{Pick: rng.IntN(1 << 16), Pause: drawPause(rng, s.TTL)}
		f.Active = f.Pause + Duration(max(s.TTL, time.Millisecond))
		return f
	},
	Decode: decode[ClientStopRandom],
}

// Refuse says why the fault does not fit s, or "".
func (c *ClientStopRandom) Refuse(s Setup) string {
	if c.Pause <= 0 || c.Active < c.Pause || c.Pick < 0 {
		return fmt.Sprintf("client-stop-random: pick %d, pause %v, active %v: want a pick ≥ 0, a positive pause and an active time at least as long", c.Pick, time.Duration(c.Pause), time.Duration(c.Active))
	}
	return clientStopRandomKind.Needs.refuse(s)
}

func (c *ClientStopRandom) String() string {
	if c.Stopped != "" {
		return fmt.Sprintf("client-stop-random: stop %s for %s", c.Stopped, time.Duration(c.Pause))
	}
	return fmt.Sprintf("client-stop-random: stop client process #%d (modulo their number) for %s", c.Pick, time.Duration(c.Pause))
}

// MinActive is the active time: Plan gives the step that much.
func (c *ClientStopRandom) MinActive() time.Duration { return time.Duration(c.Active) }

// Lasts implements ArmedFault.
func (c *ClientStopRandom) Lasts() time.Duration { return time.Duration(c.Active) }

// Arm stops the process at once: the random form has no moment to wait
// for, and its description names what it stopped.
func (c *ClientStopRandom) Arm(_ context.Context, t *Target, _ time.Time) (bool, error) {
	ps, ok := t.Clients.(ProcessStopper)
	if !ok {
		return false, errors.New("the client hook cannot stop client processes")
	}
	what, cont, err := ps.StopProcess(c.Pick)
	if err != nil {
		return false, err
	}
	c.Stopped = what
	c.stop.begin(cont, time.Duration(c.Pause))
	return true, nil
}

// Start does nothing more: Arm stopped the process.
func (c *ClientStopRandom) Start(context.Context, *Target) error { return nil }

// Heal continues the process if its pause has not run out yet.
func (c *ClientStopRandom) Heal(context.Context, *Target) error { return c.stop.end() }

// Ended is closed when the process has been continued.
func (c *ClientStopRandom) Ended() <-chan struct{} { return c.stop.ended() }

// stopped is a stopped process and its continuation: after the pause, or
// at the heal, whichever comes first, once; done is closed once it ran.
type stopped struct {
	mu    sync.Mutex
	cont  func() error
	timer *time.Timer
	err   error
	done  chan struct{}
}

// begin continues the process with cont after pause.
func (s *stopped) begin(cont func() error, pause time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cont = cont
	if s.done == nil {
		s.done = make(chan struct{})
	}
	s.timer = time.AfterFunc(pause, func() { s.end() })
}

// ended is closed once the process was continued (never, before begin).
func (s *stopped) ended() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// end continues the process now, unless it was already, and returns the
// continuation's error.
func (s *stopped) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.cont != nil {
		s.err = s.cont()
		s.cont = nil
		close(s.done)
	}
	return s.err
}
