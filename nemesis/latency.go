package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Latency delays some nodes' replies (and, with Upstream, commands) by
// Latency ± Jitter, in whole milliseconds (toxiproxy's unit), until Heal.
// Delays up to 0.9 × TTL make the lock's validity = TTL − elapsed − drift
// matter.
type Latency struct {
	Nodes    []int    `json:"nodes"`
	Latency  Duration `json:"latency"`
	Jitter   Duration `json:"jitter"`
	Upstream bool     `json:"upstream,omitempty"`
}

var latencyKind = Kind{
	Name:    "latency",
	Family:  "latency",
	Summary: "delay replies (and maybe commands) of some or all nodes by up to 0.9 × TTL",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Latency{Nodes: targets(rng, s, allOrMinority)}
		f.Latency, f.Jitter = drawLatency(rng, s.TTL/10, s.TTL/2, s.TTL*9/10)
		f.Upstream = rng.IntN(2) == 1
		return f
	},
	Decode: decode[Latency],
}

func drawLatency(rng *rand.Rand, a, b, c time.Duration) (latency, jitter Duration) {
	d := [...]time.Duration{a, b, c}[rng.IntN(3)]
	d = max(d.Truncate(time.Millisecond), time.Millisecond)
	return Duration(d), Duration(time.Duration(rng.Int64N(int64(d/10) + 1)).Truncate(time.Millisecond))
}

func checkLatency(latency, jitter Duration) error {
	if latency < Duration(time.Millisecond) || jitter < 0 || jitter > latency {
		return fmt.Errorf("latency %v, jitter %v: want latency ≥ 1ms and 0 ≤ jitter ≤ latency", time.Duration(latency), time.Duration(jitter))
	}
	return nil
}

// latencySpecs are latency toxics named down and, unless "", up.
func latencySpecs(latency, jitter Duration, down, up string) []toxicSpec {
	attrs := map[string]int64{"latency": time.Duration(latency).Milliseconds(), "jitter": time.Duration(jitter).Milliseconds()}
	specs := []toxicSpec{{Name: down, Type: "latency", Stream: downstream, Attributes: attrs}}
	if up != "" {
		specs = append(specs, toxicSpec{Name: up, Type: "latency", Stream: upstream, Attributes: attrs})
	}
	return specs
}

func (l *Latency) fit(nodes int) error {
	if err := checkNodes(l.Nodes, nodes); err != nil {
		return err
	}
	return checkLatency(l.Latency, l.Jitter)
}

func (l *Latency) Refuse(s Setup) string {
	if err := l.fit(s.Nodes); err != nil {
		return err.Error()
	}
	return ""
}

func (l *Latency) String() string {
	way := "replies"
	if l.Upstream {
		way = "commands and replies"
	}
	return fmt.Sprintf("latency %v±%v on %s (%s)", time.Duration(l.Latency), time.Duration(l.Jitter), nodeNames(l.Nodes), way)
}

func (l *Latency) Start(ctx context.Context, t *Target) error {
	nodes, err := clusterSize(t)
	if err != nil {
		return err
	}
	if err := l.fit(nodes); err != nil {
		return err
	}
	up := ""
	if l.Upstream {
		up = latencyUp
	}
	return injectToxics(ctx, t, l.Nodes, latencySpecs(l.Latency, l.Jitter, latencyDown, up)...)
}

// Heal removes the toxics; the data they held is passed on, not dropped.
func (l *Latency) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyUp, latencyDown)
}

// LatencyGroup delays every node's replies to one client group only: a
// slow holder counts on a lease from a late reply while a client of the
// prompt group is granted the key the moment it expires. Delays stay
// below TTL/10, the locks' per-call timeout, above which the slow group
// is granted nothing.
type LatencyGroup struct {
	Group   int      `json:"group"`
	Latency Duration `json:"latency"`
}

var latencyGroupKind = Kind{
	Name:    "latency-group",
	Family:  "latency-group",
	Summary: "delay the replies of every node to one client group only, below the per-call timeout (TTL/10): a slow holder beside a prompt next holder",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, Groups: 2},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		d := [...]time.Duration{s.TTL / 40, s.TTL / 20, s.TTL / 12}[rng.IntN(3)]
		return &LatencyGroup{Group: rng.IntN(max(1, min(2, s.Groups))), Latency: Duration(max(d.Truncate(time.Millisecond), time.Millisecond))}
	},
	Decode: decode[LatencyGroup],
}

func (l *LatencyGroup) Refuse(s Setup) string {
	switch {
	case l.Latency < Duration(time.Millisecond):
		return fmt.Sprintf("latency-group: latency %v: want ≥ 1ms", time.Duration(l.Latency))
	case l.Group < 0 || (s.Groups > 0 && l.Group >= s.Groups):
		return fmt.Sprintf("latency-group: group %d of %d", l.Group, s.Groups)
	}
	return ""
}

func (l *LatencyGroup) String() string {
	return fmt.Sprintf("latency-group: replies to client group %d late by %v", l.Group, time.Duration(l.Latency))
}

func (l *LatencyGroup) Start(ctx context.Context, t *Target) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	if l.Group >= t.Cluster.Groups() {
		return fmt.Errorf("latency-group: group %d, the cluster has %d", l.Group, t.Cluster.Groups())
	}
	spec := toxicSpec{Name: latencyDown, Type: "latency", Stream: downstream, Attributes: map[string]int64{"latency": time.Duration(l.Latency).Milliseconds()}}
	var errs []error
	for _, n := range t.Cluster.Nodes() {
		errs = append(errs, injectToxic(ctx, n.GroupLink(l.Group), spec))
	}
	return errors.Join(errs...)
}

func (l *LatencyGroup) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyDown)
}

// DelayGrant holds the reply of the next granted acquire by Delay, so it
// returns with Delay less validity (the elapsed-time term of the lease
// rule): when a key is about to be free it delays every node's replies
// until the first grant that returned Delay late, then removes the delay.
// Every lock takes a reply later than its call's bound (by default
// TTL/10, at most 1 s) for a failure, so Plan draws 4/5 of it. Locks that
// bound a call more tightly (redsync: a round by TTL/20) give up on every
// delayed acquire, so without a grant within the dwell the delay is
// halved, down to 1 ms; an acquire given up may leave its key until the
// TTL (redsync), so a search can run out of window: the matrix gives
// these cells three steps.
type DelayGrant struct {
	Delay Duration `json:"delay"`
	Retry Duration `json:"retry"`
	Aim
}

// Four clients: ten on one key held 96% of the time starved redsync on a
// loaded machine (5 grants of 625 acquires); four left 3 strikes a run.
var delayGrantKind = Kind{
	Name:    "delay-grant",
	Family:  "delay-grant",
	Twin:    Twin{Kinds: []string{"latency"}},
	Window:  Workload{Clients: 4, Keys: 1, Hold: 960 * time.Millisecond, Interval: time.Second, Duration: 16 * time.Second},
	Summary: "hold the reply of the next granted acquire by just under a node call's timeout (TTL/10), so it returns with that much less validity",
	Needs:   Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}, TTL: true},
	Plan: func(_ *rand.Rand, s Setup) Fault {
		// Three TTLs to search in: a hold to wait out, then the delays.
		a := newAim(s)
		a.Window = Duration(3 * max(s.TTL, time.Millisecond))
		return &DelayGrant{Delay: Duration(GrantDelay(s.TTL)), Retry: Duration(max(s.TTL/10, time.Millisecond)), Aim: a}
	},
	Decode: decodeAimed[DelayGrant],
}

// GrantDelay is delay-grant's delay: 4/5 of min(TTL/10, 1 s), in ms.
func GrantDelay(ttl time.Duration) time.Duration {
	d := min(ttl/10, time.Second) * 4 / 5
	return max(d.Truncate(time.Millisecond), time.Millisecond)
}

func (d *DelayGrant) Refuse(s Setup) string {
	if d.Delay < Duration(time.Millisecond) || d.Retry <= 0 {
		return fmt.Sprintf("delay-grant: delay %v, retry %v: want a delay of at least 1ms and a positive retry", time.Duration(d.Delay), time.Duration(d.Retry))
	}
	return d.refuse("delay-grant", s.Nodes)
}

func (d *DelayGrant) String() string {
	s := fmt.Sprintf("delay-grant: hold the reply of the next granted acquire by %s", time.Duration(d.Delay))
	return s + d.says(func(d *Decision) string {
		return fmt.Sprintf("replies of %s held %s from %s", nodeNames(d.Targets), time.Duration(d.Amount), time.Duration(d.At).Round(time.Millisecond))
	})
}

// dwell is how long the search waits under delay before it halves it:
// Retry plus a round that asks the nodes in turn (a Python redlock does).
// Retry alone ran a slow client's search down to 1 ms before any acquire
// under 40 or 20 ms could come back granted.
func (d *DelayGrant) dwell(delay time.Duration, nodes int) time.Duration {
	return time.Duration(d.Retry) + time.Duration(nodes)*delay
}

// Arm delays and searches (see DelayGrant), and removes the delay before
// it returns; a replay delays at the recorded offset.
func (d *DelayGrant) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	size, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	rec := d.Decision
	after, missed, err := keyAboutFree(ctx, t, base, rec)
	if missed != nil || err != nil {
		d.Decision = missed
		return false, err
	}
	nodes := allNodes(size)
	delay := time.Duration(d.Delay)
	if rec != nil && rec.Amount > 0 {
		delay = time.Duration(rec.Amount)
	}
	var (
		at int64
		c  Change
	)
	for {
		at = runNow(base)
		if err = injectToxics(ctx, t, nodes, latencySpecs(Duration(delay), 0, delayGrantDown, "")...); err != nil {
			break
		}
		var raced *Change // a grant whose reply came back before the delay took hold
		for {
			rctx, cancel := context.WithTimeout(ctx, d.dwell(delay, len(nodes)))
			c, err = WaitFor(rctx, t.View, after, func(c Change) bool {
				if c.Kind == HoldGranted && c.Time >= at && c.Time < at+int64(delay) && raced == nil {
					raced = &c
				}
				return c.Kind == HoldGranted && c.Time >= at+int64(delay)
			})
			cancel()
			if err == nil || ctx.Err() != nil || raced == nil {
				break
			}
			// An acquire in flight as the delay began won the key: wait,
			// delay kept, until its hold ends.
			end, werr := WaitFor(ctx, t.View, raced.Seq, func(e Change) bool {
				return e.Kind == HoldEnded && e.Hold.Client == raced.Hold.Client && e.Hold.Key == raced.Hold.Key
			})
			if werr != nil {
				err = werr
				break
			}
			after, raced = end.Seq, nil
		}
		if err == nil || ctx.Err() != nil || delay <= time.Millisecond {
			break
		}
		// No acquire came back granted under this delay: halve it.
		if err = clearToxics(ctx, t, delayGrantDown); err != nil {
			break
		}
		delay = max((delay / 2).Truncate(time.Millisecond), time.Millisecond)
	}
	heal := clearToxics(context.WithoutCancel(ctx), t, delayGrantDown)
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return false, errors.Join(err, heal)
	}
	if heal != nil {
		return false, heal
	}
	if err != nil {
		d.Decision = judged(rec, &Decision{Missed: "no acquire returned granted with its reply held within the step's window"}, 0)
		return false, nil
	}
	d.Decision = judged(rec, &Decision{At: Duration(at), Trigger: holdTrigger(HoldGranted, c.Hold, c.Time), Targets: nodes, Amount: Duration(delay)}, sameHold)
	return true, nil
}

func (d *DelayGrant) Start(context.Context, *Target) error { return nil }

func (d *DelayGrant) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, delayGrantDown)
}
