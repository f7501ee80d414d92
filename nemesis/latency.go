package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The kinds that delay the nodes' replies through the proxies: latency
// (some nodes, to every client group), latency-group (every node, to one
// group) and delay-grant (every node, the reply of one grant).

// Latency holds every chunk of some nodes' replies (and, with Upstream,
// of the commands sent to them) Latency ± Jitter on the proxies of every
// client group until Heal. Toxiproxy counts in whole milliseconds. Plan
// draws delays up to 0.9 × TTL, so a lock's own time accounting
// (validity = TTL − elapsed − drift) matters.
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

// drawLatency draws one of three latencies, in whole milliseconds, and a
// jitter up to a tenth of it (latency, replica-latency).
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

// latencySpecs are latency toxics of latency ± jitter, named down (the
// replies) and, unless "", up (the commands).
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

// Heal removes the latency toxics from every proxy; the data they held
// is passed on at once, not dropped.
func (l *Latency) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyUp, latencyDown)
}

// LatencyGroup delays the replies of every node to one client group only
// by Latency, until Heal: a holder of the slow group counts on a lease
// from a reply that came Latency after the node set the key, while a
// client of the fast group is granted the key the moment it expires. A
// lock whose validity runs from before the request is safe whatever the
// latency; one that counts from the reply overlaps the next holder once
// latency plus hold exceed the TTL. Plan draws delays below TTL/10, the
// locks' per-call timeout, above which the slow group is granted nothing.
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

// DelayGrant holds the reply of the next granted acquire by Delay, so
// that it returns with Delay less validity: the elapsed-time term of the
// lease rule. When a key is about to be free it adds a downstream latency
// toxic to every node's proxies, waits for the first grant that returned
// at least Delay later, and removes the toxic at once, so the next
// holder's acquire is fast again. A lock that counts its validity from
// before the request stops before the key expires; one that counts from
// the reply, or keeps none, over-claims by Delay.
//
// Every lock bounds a call to one node (locks.Config.Timeout, by default
// TTL/10, at most 1 s) and takes a later reply for a failure, so Plan
// draws 4/5 of that bound. Some bound it more tightly (redsync: an
// acquire round by TTL/20) and give up on every delayed acquire: when no
// acquire comes back granted under the delay within the dwell, the delay
// is halved (down to 1 ms) until the window (three TTLs) closes; but
// when an acquire in flight as the delay began won the key, the wait
// goes on with the same delay until that hold ends. An acquire given up
// under the delay may leave its key on the nodes until the TTL (redsync
// does), so a search can run out of window: the matrix gives these cells
// three steps. The decision's amount is the delay the grant got.
type DelayGrant struct {
	Delay Duration `json:"delay"`
	Retry Duration `json:"retry"`
	Aim
}

// Four clients: ten on one key held 96% of the time starved a redsync run
// on a loaded machine (5 grants of 625 acquires); four left 3 strikes a
// run.
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
	Decode: decode[DelayGrant],
}

// GrantDelay is delay-grant's delay for a lock of TTL ttl: 4/5 of
// min(TTL/10, 1 s), in whole milliseconds (toxiproxy's unit).
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

// dwell is how long the search waits for a grant under delay before it
// halves it: Retry, plus one acquire round that asks the nodes in turn,
// each reply held (a Python client's redlock does). Waiting Retry alone
// ran a slow client's search down to 1 ms before any of its acquires
// under 40 or 20 ms could come back granted.
func (d *DelayGrant) dwell(delay time.Duration, nodes int) time.Duration {
	return time.Duration(d.Retry) + time.Duration(nodes)*delay
}

// Arm waits until a key is about to be free, delays every node's replies
// and waits for the grant whose reply was held; it removes the delay
// before it returns, struck or not. A replay delays at the recorded
// offset and compares the grant it gets with the recorded one.
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
			// An acquire in flight when the delay began won the key: no
			// grant can come under the delay while it holds. Wait, delay
			// kept, until it ends.
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

// Start does nothing more: the delayed grant has returned by the time Arm
// reports the strike.
func (d *DelayGrant) Start(context.Context, *Target) error { return nil }

// Heal removes the delay if it is still there (Arm removes it itself).
func (d *DelayGrant) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, delayGrantDown)
}
