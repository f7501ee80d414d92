package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// ClientPause stalls one lock holder between its last validity check and
// its access to the resource for longer than the TTL: the GC pause of
// Kleppmann's "How to do distributed locking".
type ClientPause struct {
	Stall Duration `json:"stall"`

	armed
}

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

func (c *ClientPause) Refuse(Setup) string {
	if c.Stall <= 0 {
		return fmt.Sprintf("client-pause: stall %v: want a positive stall", time.Duration(c.Stall))
	}
	return ""
}

// MinActive is the stall, and as long for the stalled write to land.
func (c *ClientPause) MinActive() time.Duration { return 2 * time.Duration(c.Stall) }

func (c *ClientPause) String() string {
	return fmt.Sprintf("client-pause %s", time.Duration(c.Stall))
}

func (c *ClientPause) Start(_ context.Context, t *Target) error {
	if t.Clients == nil {
		return errors.New("no client hook to stall holders")
	}
	c.arm(t.Clients.Stall(time.Duration(c.Stall)))
	return nil
}

// HoldStaller is a ClientStaller that sizes a stall when it begins.
type HoldStaller interface {
	ClientStaller
	// StallHold makes the next client that passes its last validity
	// check before a resource access wait size(client, validity left).
	// The returned function withdraws a stall that has not begun yet.
	StallHold(size func(client int, left time.Duration) time.Duration) (withdraw func())
}

// PauseHolder stalls the next holder right after its last validity check
// for the validity it has left plus Margin (or Stall, which the safety
// envelope sweeps): the shortest GC pause that outlives the lease.
type PauseHolder struct {
	Margin Duration `json:"margin"`
	Stall  Duration `json:"stall,omitempty"`
	Aim

	armed // a replay's stall
}

var pauseHolderKind = Kind{
	Name:    "pause-holder",
	Family:  "client-pause",
	Twin:    Twin{Kinds: []string{"client-pause"}},
	Window:  Workload{Keys: 1, TTL: 500 * time.Millisecond, Hold: 100 * time.Millisecond, Interval: time.Second},
	Summary: "stall a holder right after its last validity check for just over the validity it has left",
	Needs:   Needs{TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Stalled for up to a TTL, then a TTL for the late write to land.
		a := newAim(s)
		a.Active = Duration(2 * s.TTL)
		return &PauseHolder{Margin: Duration(s.TTL / 5), Aim: a}
	},
	Decode: decodeAimed[PauseHolder],
}

func (p *PauseHolder) Refuse(Setup) string {
	if p.Margin <= 0 && p.Stall <= 0 {
		return fmt.Sprintf("pause-holder: margin %v, stall %v: want a positive margin or stall", time.Duration(p.Margin), time.Duration(p.Stall))
	}
	return p.refuse("pause-holder", -1)
}

func (p *PauseHolder) String() string {
	s := "pause-holder: stall a holder after its last check just past its validity"
	return s + p.says(func(d *Decision) string {
		return fmt.Sprintf("stall client %d for %s", d.Targets[0], time.Duration(d.Amount).Round(time.Millisecond))
	})
}

// Arm arms a stall sized at the holder's last check and waits until a
// holder takes it; a replay arms the recorded stall at the recorded
// offset.
func (p *PauseHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Clients == nil {
		return false, errors.New("no client hook to stall holders")
	}
	if p.Decision != nil {
		d := replay(ctx, t, base, p.Decision)
		if p.Decision = d; d.Missed != "" {
			return false, nil
		}
		p.arm(t.Clients.Stall(time.Duration(d.Amount)))
		return true, nil
	}
	hs, ok := t.Clients.(HoldStaller)
	if !ok {
		return false, errors.New("the client hook cannot size a stall at the holder's check")
	}
	type taken struct {
		client      int
		left, stall time.Duration
		at          int64
	}
	ch := make(chan taken, 1)
	margin, fixed := time.Duration(p.Margin), time.Duration(p.Stall)
	ttl := time.Duration(p.Active) / 2 // Plan: stalled up to a TTL, then a TTL for the late write
	withdraw := hs.StallHold(func(client int, left time.Duration) time.Duration {
		// At most a TTL and the margin: a lease that claims no validity
		// (a lock that renews itself) would be stalled for ever.
		st := min(max(left, 0), ttl) + margin
		if fixed > 0 {
			st = fixed
		}
		ch <- taken{client, left, st, runNow(base)}
		return st
	})
	var tk taken
	select {
	case tk = <-ch:
	case <-ctx.Done():
		withdraw()
		select {
		case tk = <-ch: // taken as the window closed
		default:
			p.Decision = &Decision{Missed: "no holder passed its last check within the step's window"}
			return false, nil
		}
	}
	tr := &Trigger{Change: HoldChecked, Client: tk.client, Left: Duration(tk.left)}
	if t.View != nil {
		holds, _ := t.View.Holds()
		if i := slices.IndexFunc(holds, func(h Hold) bool { return h.Client == tk.client }); i >= 0 {
			tr.Key, tr.Granted = holds[i].Key, holds[i].Granted
		}
	}
	p.Decision = &Decision{At: Duration(tk.at), Trigger: tr, Targets: []int{tk.client}, Amount: Duration(tk.stall)}
	return true, nil
}

func (p *PauseHolder) Start(context.Context, *Target) error { return nil }

// ClientCrash makes the client that next acquires abandon its lease
// unreleased; a fresh client takes its place.
type ClientCrash struct {
	armed
}

// armed is the withdraw function of what a fault armed in the clients.
type armed struct {
	mu       sync.Mutex
	withdraw func()
}

func (a *armed) arm(withdraw func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.withdraw = withdraw
}

// Heal withdraws what was not taken yet; what was runs its course.
func (a *armed) Heal(context.Context, *Target) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.withdraw != nil {
		a.withdraw()
		a.withdraw = nil
	}
	return nil
}

// ClientCrasher is an optional ability of a Target's Clients.
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

func (c *ClientCrash) Refuse(Setup) string { return "" }

func (c *ClientCrash) Start(_ context.Context, t *Target) error {
	cr, ok := t.Clients.(ClientCrasher)
	if !ok {
		return errors.New("no client hook to crash holders")
	}
	c.arm(cr.Crash())
	return nil
}

// ClientStop stops a holder's whole client process (SIGSTOP of its
// process group) right after its grant, and continues it Pause later: a
// GC or VM pause of the whole client, its watchdog included. The hook
// must offer ProcessStopper.
type ClientStop struct {
	Pause Duration `json:"pause"`
	Aim

	stopped
}

// ProcessStopper is an optional ability of a Target's Clients.
type ProcessStopper interface {
	// StopHolder stops the client process that serves client's hold of
	// token (SIGSTOP to its process group), and the client with it, until
	// cont continues both. It fails when no live process serves that
	// lease (it was released).
	StopHolder(client int, token string) (cont func() error, err error)
	// StopProcess stops the pick-th (modulo their number, in the order
	// they started) of the client processes running now, and the client
	// whose lease it serves, if any. It returns what it stopped, as
	// "client 3's process (pid 4242)" or "an idle client process (pid
	// 4242)".
	StopProcess(pick int) (what string, cont func() error, err error)
}

func drawPause(rng *rand.Rand, ttl time.Duration) Duration {
	return Duration((ttl + ttl/2 + time.Duration(rng.Int64N(int64(max(ttl, 1))))).Truncate(time.Millisecond))
}

func stopKind[T any, P aimedOf[T]](name, summary string, plan func(*rand.Rand, Setup) Fault) Kind {
	return Kind{Name: name, Family: "client-stop", Summary: summary, Needs: Needs{TTL: true, ClientProcesses: true}, Plan: plan, Decode: decodeAimed[T, P]}
}

func stopper(t *Target) (ProcessStopper, error) {
	ps, ok := t.Clients.(ProcessStopper)
	if !ok {
		return nil, errors.New("the client hook cannot stop client processes")
	}
	return ps, nil
}

var clientStopKind = stopKind[ClientStop]("client-stop", "stop a holder's whole client process (SIGSTOP) right after its grant, for 1.5–2.5 TTLs (client processes only)",
	func(rng *rand.Rand, s Setup) Fault {
		// Stopped for its pause, then a TTL for what it does when it
		// runs again (a late write, a late notice) to land.
		f := &ClientStop{Pause: drawPause(rng, s.TTL), Aim: newAim(s)}
		f.Active = f.Pause + Duration(max(s.TTL, time.Millisecond))
		return f
	})

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

// Arm waits for the next grant (a replay: after the recorded offset) and
// stops the holder's process at once, or, released already, the next.
func (c *ClientStop) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	ps, err := stopper(t)
	if err != nil {
		return false, err
	}
	if t.View == nil {
		return false, errNoView
	}
	rec := c.Decision
	if rec != nil {
		if d := replay(ctx, t, base, rec); d.Missed != "" {
			c.Decision = d
			return false, nil
		}
	}
	_, after := t.View.Holds()
	for {
		ch, err := WaitFor(ctx, t.View, after, func(ch Change) bool { return ch.Kind == HoldGranted && ch.Hold.Ended == 0 })
		if err != nil {
			c.Decision = judged(rec, &Decision{Missed: "no grant within the step's window"}, 0)
			return false, nil
		}
		after = ch.Seq
		cont, err := ps.StopHolder(ch.Hold.Client, ch.Hold.Token)
		if err != nil {
			continue // released already: the next grant
		}
		now := runNow(base)
		c.begin(cont, time.Duration(c.Pause))
		c.Decision = judged(rec, &Decision{At: Duration(now), Trigger: holdTrigger(HoldGranted, ch.Hold, now), Targets: []int{ch.Hold.Client}, Amount: c.Pause}, sameHolder)
		return true, nil
	}
}

// ClientStopRandom is client-stop's random form: at the step's start it
// stops the Pick-th client process, holder or not, for Pause.
type ClientStopRandom struct {
	Pick    int      `json:"pick"`
	Pause   Duration `json:"pause"`
	Active  Duration `json:"active"`
	Stopped string   `json:"stopped,omitempty"`

	stopped
}

var clientStopRandomKind = stopKind[ClientStopRandom]("client-stop-random", "stop a client process drawn from the seed (SIGSTOP), holder or not, for 1.5–2.5 TTLs (client processes only)",
	func(rng *rand.Rand, s Setup) Fault {
		f := &ClientStopRandom{Pick: rng.IntN(1 << 16), Pause: drawPause(rng, s.TTL)}
		f.Active = f.Pause + Duration(max(s.TTL, time.Millisecond))
		return f
	})

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

func (c *ClientStopRandom) MinActive() time.Duration { return time.Duration(c.Active) }

func (c *ClientStopRandom) Lasts() time.Duration { return time.Duration(c.Active) }

// Arm stops the process at once, so that String names it.
func (c *ClientStopRandom) Arm(_ context.Context, t *Target, _ time.Time) (bool, error) {
	ps, err := stopper(t)
	if err != nil {
		return false, err
	}
	what, cont, err := ps.StopProcess(c.Pick)
	if err != nil {
		return false, err
	}
	c.Stopped = what
	c.begin(cont, time.Duration(c.Pause))
	return true, nil
}

// stopped is a stopped process, continued after the pause or at the
// heal, whichever comes first, once.
type stopped struct {
	mu    sync.Mutex
	cont  func() error
	timer *time.Timer
	err   error
	done  chan struct{}
}

func (s *stopped) begin(cont func() error, pause time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cont = cont
	if s.done == nil {
		s.done = make(chan struct{})
	}
	s.timer = time.AfterFunc(pause, func() { s.end() })
}

func (s *stopped) Start(context.Context, *Target) error { return nil }

func (s *stopped) Heal(context.Context, *Target) error { return s.end() }

// Ended is closed once the process was continued.
func (s *stopped) Ended() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// end continues the process unless it was, and returns cont's error.
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
