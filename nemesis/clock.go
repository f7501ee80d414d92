package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The clock family moves wall clocks through the clock shim
// (cluster.WithClockShim): Redis expires keys by the wall clock; the
// monotonic clock (event-loop timers) is not touched.

// Modes of a clock fault.
const (
	ClockJump   = "jump"   // set the offset once
	ClockStrobe = "strobe" // alternate between the offset and 0
)

// clockTargets is targets, except that the failover topology, whose
// primary's and replica's clocks both count, draws sp's nodes too.
func clockTargets(rng *rand.Rand, s Setup, sp nodeSpec) []int {
	if s.Topology == cluster.TopologyFailover {
		return sp.pick(rng, s.Nodes)
	}
	return targets(rng, s, sp)
}

func checkRate(rate float64) error {
	if !(rate > 0 && rate <= 1) {
		return fmt.Errorf("rate %g: want 0 < rate ≤ 1", rate)
	}
	return nil
}

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

// jumpText is "jump +300ms" or "strobe -1s/0 every 250ms".
func jumpText(mode string, off, period Duration) string {
	sign := ""
	if off >= 0 {
		sign = "+"
	}
	if mode == ClockStrobe {
		return fmt.Sprintf("strobe %s%s/0 every %s", sign, time.Duration(off), time.Duration(period))
	}
	return fmt.Sprintf("jump %s%s", sign, time.Duration(off))
}

// startJump sets a clock off; a strobe then flips it in bg between 0 and
// off every period until Heal, ctx's end or an error of set.
func startJump(ctx context.Context, bg *background, mode string, off, period Duration, set func(time.Duration) error) error {
	if err := set(time.Duration(off)); err != nil || mode != ClockStrobe {
		return err
	}
	bg.start(func(stop <-chan struct{}) error {
		tick := time.NewTicker(time.Duration(period))
		defer tick.Stop()
		for shifted := true; ; {
			if await(ctx, stop, tick.C) != nil {
				return nil
			}
			shifted = !shifted
			d := time.Duration(0)
			if shifted {
				d = time.Duration(off)
			}
			if err := set(d); err != nil {
				return err
			}
		}
	})
	return nil
}

// clockSetter sets the clocks of the target's nodes idx, once fit.
func clockSetter(t *Target, idx []int, fit func(nodes int) error) (func(time.Duration) error, error) {
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
	return func(off time.Duration) error {
		var errs []error
		for _, n := range ns {
			errs = append(errs, n.SetClockOffset(off))
		}
		return errors.Join(errs...)
	}, nil
}

// healClocks halts bg and sets the clocks of t's nodes idx right.
func healClocks(bg *background, t *Target, idx []int, err error) error {
	return errors.Join(err, bg.halt(), eachNode(t, idx, func(n *cluster.Node) error { return n.SetClockOffset(0) }))
}

// setClocks sets the decision's nodes' clocks to its amount (jumped) or 0.
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

// SlewRate is the rate at which clock-back-slew brings a node's clock back
// to the real time: 0.8% fast, below the 1% clock drift the locks' drift
// allowance assumes (TTL×1% + 2 ms, RedLock's drift factor), as NTP's
// slewing (at most 0.05%) is below it.
const SlewRate = 0.008

// slewTick is how often a slew rewrites the offset.
const slewTick = 5 * time.Millisecond

// Slew moves an offset from from (negative) to 0 at rate, setting it
// every tick, until it is 0, stop is closed (ErrSlewStopped) or ctx is
// done: the clock runs at most rate fast, plus a tick's rounding.
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

// Drift sets an offset of rate × the time since it began every tick, until
// stop is closed (ErrSlewStopped), ctx is done or set fails.
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

// Clock shifts the wall clock of nodes by Offset until Heal: forward, it
// expires their leases early; back, they outlive their TTL.
type Clock struct {
	Nodes  []int    `json:"nodes"`
	Mode   string   `json:"mode"`
	Offset Duration `json:"offset"`
	Period Duration `json:"period,omitempty"` // strobe only

	bg background // a strobe's goroutine
}

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

func (c *Clock) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	return checkMode(c.Mode, c.Period)
}

func (c *Clock) Refuse(s Setup) string { return refusal("clock", c.fit(s.Nodes)) }

func (c *Clock) String() string {
	return "clock " + jumpText(c.Mode, c.Offset, c.Period) + " on " + nodeNames(c.Nodes)
}

func (c *Clock) Start(ctx context.Context, t *Target) error {
	set, err := clockSetter(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	return startJump(ctx, &c.bg, c.Mode, c.Offset, c.Period, set)
}

func (c *Clock) Heal(_ context.Context, t *Target) error { return healClocks(&c.bg, t, c.Nodes, nil) }

// ClockBackSlew jumps the wall clock of nodes back by Offset, keeps it
// there for Hold, then slews it back at Rate: no forward jump, and a key
// set meanwhile expires at most Rate × TTL early, within the drift
// allowance while Rate < 1%: liveness only.
type ClockBackSlew struct {
	Nodes  []int    `json:"nodes"`
	Offset Duration `json:"offset"`
	Hold   Duration `json:"hold"`
	Rate   float64  `json:"rate"`

	bg background // the slew's goroutine
}

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

func (c *ClockBackSlew) Start(ctx context.Context, t *Target) error {
	set, err := clockSetter(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	if err := set(time.Duration(c.Offset)); err != nil {
		return err
	}
	c.bg.start(func(stop <-chan struct{}) error {
		if await(ctx, stop, time.After(time.Duration(c.Hold))) != nil {
			return nil
		}
		err := Slew(ctx, stop, set, time.Duration(c.Offset), c.Rate, slewTick)
		if ctx.Err() != nil { // the run's end is no error: Heal sets the rest
			return nil
		}
		return err
	})
	return nil
}

// Heal waits for the slew, or ctx's end: a slew cut short is an error
// (the rest is a forward jump).
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
	return healClocks(&c.bg, t, c.Nodes, err)
}

// ClockDrift runs the wall clock of nodes Rate fast (0.02: 2%) until
// Heal: a key set there lives TTL/(1+Rate), which RedLock's drift
// allowance covers up to about 1%; the safety envelope sweeps Rate.
type ClockDrift struct {
	Nodes []int   `json:"nodes"`
	Rate  float64 `json:"rate"`

	bg background // the drift's goroutine
}

var clockDriftKind = Kind{
	Name:    "clock-drift",
	Family:  "clock",
	Summary: "run the wall clock of some nodes 0.5–5% fast until the heal (a backward jump back to the real time)",
	Needs:   Needs{Cluster: cluster.Abilities{Clock: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ClockDrift{Nodes: clockTargets(rng, s, someMajority)}
		f.Rate = float64(5+rng.IntN(46)) / 1000
		return f
	},
	Decode: decode[ClockDrift],
}

func (c *ClockDrift) fit(nodes int) error {
	if err := checkNodes(c.Nodes, nodes); err != nil {
		return err
	}
	return checkRate(c.Rate)
}

func (c *ClockDrift) Refuse(s Setup) string { return refusal("clock-drift", c.fit(s.Nodes)) }

func (c *ClockDrift) String() string {
	return fmt.Sprintf("clock-drift: clocks %.3g%% fast on %s", c.Rate*100, nodeNames(c.Nodes))
}

func (c *ClockDrift) Start(ctx context.Context, t *Target) error {
	set, err := clockSetter(t, c.Nodes, c.fit)
	if err != nil {
		return err
	}
	c.bg.start(func(stop <-chan struct{}) error {
		err := Drift(ctx, stop, set, c.Rate, slewTick)
		if ctx.Err() != nil || errors.Is(err, ErrSlewStopped) {
			return nil
		}
		return err
	})
	return nil
}

func (c *ClockDrift) Heal(_ context.Context, t *Target) error {
	return healClocks(&c.bg, t, c.Nodes, nil)
}

// ClientClock shifts the wall clock of the lock's client processes, as
// Clock does the nodes': a client that counts a round's elapsed time on
// the wall clock (redlock-py-wall) over-claims by a backward jump.
type ClientClock struct {
	Mode   string   `json:"mode"`
	Offset Duration `json:"offset"`
	Period Duration `json:"period,omitempty"` // strobe only

	bg background // a strobe's goroutine
}

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

func (c *ClientClock) Refuse(s Setup) string {
	if err := checkMode(c.Mode, c.Period); err != nil {
		return "client-clock: " + err.Error()
	}
	if !s.ClientProcesses || s.GoClients {
		return clientClockKind.Needs.refuse(s)
	}
	return ""
}

func (c *ClientClock) String() string { return "client clock " + jumpText(c.Mode, c.Offset, c.Period) }

func (c *ClientClock) Start(ctx context.Context, t *Target) error {
	if t.ClientClock == nil {
		return errors.New("no client clock (the run started its clients without the clock shim)")
	}
	if err := checkMode(c.Mode, c.Period); err != nil {
		return err
	}
	return startJump(ctx, &c.bg, c.Mode, c.Offset, c.Period, t.ClientClock.SetOffset)
}

func (c *ClientClock) Heal(_ context.Context, t *Target) error {
	err := c.bg.halt()
	if t.ClientClock == nil {
		return err
	}
	return errors.Join(err, t.ClientClock.SetOffset(0))
}

func saysJump(d *Decision) string {
	return fmt.Sprintf("jump +%s on %s", time.Duration(d.Amount).Round(time.Millisecond), nodeNames(d.Targets))
}

// The scopes of a targeted clock jump, each a kind (a cell) of its own.
const (
	// ScopeHolder: one granting node of a bare majority's hold.
	ScopeHolder = "holder"
	// ScopeMinority: as many granting nodes as leave the rest a majority,
	// at most a minority: RedLock's assumption holds. Only holds all
	// nodes granted missed every hold of a run on a loaded machine.
	ScopeMinority = "minority"
	ScopeMajority = "majority"
)

// ClockHold jumps the clock of some of a live hold's nodes forward by the
// validity left plus Margin (what the lock's validity does not count: the
// drift allowance and the round trip), or by Jump, which the safety
// envelope sweeps.
type ClockHold struct {
	Scope  string   `json:"scope"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Jump   Duration `json:"jump,omitempty"`
	Aim
}

func clockHoldKind(scope, summary string, multi bool) Kind {
	return Kind{
		Name:    "clock-" + scope,
		Family:  "clock",
		Twin:    Twin{Kinds: []string{"clock"}},
		Summary: summary,
		Needs:   Needs{MultiNode: multi, Cluster: cluster.Abilities{Clock: true}, TTL: true},
		Window:  Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
		Plan: func(rng *rand.Rand, s Setup) Fault {
			return &ClockHold{Scope: scope, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Aim: newAim(s)}
		},
		Decode: func(params json.RawMessage) (Fault, error) {
			f, err := decodeAimed[ClockHold](params)
			if err != nil {
				return nil, err
			}
			if c := f.(*ClockHold); c.Scope != scope {
				return nil, fmt.Errorf("nemesis: clock-%s: scope %q, want %q", scope, c.Scope, scope)
			}
			return f, nil
		},
	}
}

var (
	clockHolderKind   = clockHoldKind(ScopeHolder, "jump the clock of one node of a live hold (of a bare majority's, on a multi-node lock) just past its validity", false)
	clockMinorityKind = clockHoldKind(ScopeMinority, "jump the clock of a minority of a live hold's nodes just past its validity, leaving it a majority", true)
	clockMajorityKind = clockHoldKind(ScopeMajority, "jump the clock of a majority of a live hold's nodes just past its validity", true)
)

func (c *ClockHold) Refuse(s Setup) string {
	kind := "clock-" + c.Scope
	switch {
	case c.Pick < 0 || c.Margin < 0 || c.Jump < 0:
		return kind + ": negative pick, margin or jump"
	case c.Scope == ScopeMinority && (s.Nodes-1)/2 < 1:
		return fmt.Sprintf("%s: %d nodes have no minority to jump", kind, s.Nodes)
	}
	return c.refuse(kind, s.Nodes)
}

func (c *ClockHold) String() string {
	s := fmt.Sprintf("clock-%s: jump the clock of %s of a live hold's nodes just past its validity", c.Scope, map[string]string{ScopeHolder: "one", ScopeMinority: "a minority", ScopeMajority: "a majority"}[c.Scope])
	return s + c.says(saysJump)
}

func (c *ClockHold) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	q := quorum(nodes)
	return c.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		granted, ok := grantedBy(ch, nodes)
		if !ok {
			return aim{}, false
		}
		var k int
		switch {
		case c.Scope == ScopeHolder && (nodes == 1 || len(granted) == q):
			k = 1
		case c.Scope == ScopeMinority && len(granted) > q:
			k = min((nodes-1)/2, len(granted)-q)
		case c.Scope == ScopeMajority && len(granted) >= q:
			k = q
		}
		if k == 0 || len(granted) < k {
			return aim{}, false
		}
		amount := left + time.Duration(c.Margin)
		if c.Jump > 0 {
			amount = time.Duration(c.Jump)
		}
		return aim{targets: nth(granted, c.Pick, k), amount: amount}, true
	})
}

func (c *ClockHold) Start(_ context.Context, t *Target) error { return c.setClocks(t, true) }

func (c *ClockHold) Heal(_ context.Context, t *Target) error { return c.setClocks(t, false) }

// ClockPartition is Kleppmann's scenario against RedLock: the client
// groups are split onto two bare majorities sharing a node (shape split);
// at a hold, the shared node's clock jumps past its validity, and with
// the other side it grants the lock again. Settle: a lease granted before
// the split whose release the cut dropped holds the other side's node
// until it expires, so only a hold granted Settle after the split is
// struck at.
type ClockPartition struct {
	Sides  [][]int  `json:"sides"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Settle Duration `json:"settle,omitempty"`
	Aim
}

var clockPartitionKind = Kind{
	Name:    "clock-partition",
	Family:  "clock",
	Twin:    Twin{Kinds: []string{"clock", "partition"}},
	Window:  Workload{Clients: 2, Keys: 1, Hold: 500 * time.Millisecond, Interval: 250 * time.Millisecond},
	Summary: "split the client groups onto two overlapping bare majorities, then jump the clock of a shared node of a live hold just past its validity (Kleppmann)",
	Needs:   Needs{MultiNode: true, Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Clock: true, Network: true}, Groups: 2, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		p := planPartition(rng, ShapeSplit, s)
		c := &ClockPartition{Sides: p.Sides, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Settle: Duration(s.TTL), Aim: newAim(s)}
		c.Window += c.Settle
		return c
	},
	Decode: decodeAimed[ClockPartition],
}

func (c *ClockPartition) split() *Partition { return &Partition{Shape: ShapeSplit, Sides: c.Sides} }

func (c *ClockPartition) Refuse(s Setup) string {
	if c.Pick < 0 || c.Margin < 0 || c.Settle < 0 {
		return "clock-partition: negative pick, margin or settle"
	}
	if why := c.split().Refuse(s); why != "" {
		return "clock-partition: " + why
	}
	return c.refuse("clock-partition", s.Nodes)
}

func (c *ClockPartition) String() string {
	s := fmt.Sprintf("clock-partition: client group 0 reaches %s, group 1 %s, then a clock jump on a shared node of a hold", sideNames(c.Sides, 0), sideNames(c.Sides, 1))
	return s + c.says(saysJump)
}

// Arm splits the groups, then waits for a settled hold of a bare majority
// with a shared node; without one it lifts the split.
func (c *ClockPartition) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Cluster == nil {
		return false, errors.New("no cluster")
	}
	heal := func() error { return clearToxics(context.WithoutCancel(ctx), t, partitionUp, partitionDown) }
	if err := c.split().Start(ctx, t); err != nil {
		return false, errors.Join(err, heal())
	}
	q := quorum(len(t.Cluster.Nodes()))
	settled := runNow(base) + int64(c.Settle)
	struck, err := c.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		h := ch.Hold
		if (ch.Kind != HoldGranted && ch.Kind != HoldExtended) || !h.Reported || len(h.Granted) != q || (c.Settle > 0 && ch.Time < settled) {
			return aim{}, false
		}
		shared := slices.DeleteFunc(slices.Clone(h.Granted), func(n int) bool {
			return !slices.Contains(c.Sides[0], n) || !slices.Contains(c.Sides[1], n)
		})
		if len(shared) == 0 {
			return aim{}, false
		}
		return aim{targets: nth(shared, c.Pick, 1), amount: left + time.Duration(c.Margin)}, true
	})
	if !struck {
		err = errors.Join(err, heal())
	}
	return struck, err
}

func (c *ClockPartition) Start(_ context.Context, t *Target) error { return c.setClocks(t, true) }

func (c *ClockPartition) Heal(ctx context.Context, t *Target) error {
	if !c.struck() {
		return nil
	}
	return errors.Join(clearToxics(ctx, t, partitionUp, partitionDown), c.setClocks(t, false))
}
