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

// Latency slows nodes down until Heal: every chunk of their replies (and of
// the commands sent to them, with Upstream) is held Latency ± Jitter,
// uniformly drawn, on the proxies of every client group, for connections
// open or new. Toxiproxy counts in whole milliseconds; finer parts are
// dropped. Plan draws delays up to 0.9 × TTL, so a lock's own time
// accounting (validity = TTL − elapsed − drift) matters.
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
	// The failover topology has faults of its own (kind failover).
	Needs: Needs{Topology: cluster.TopologyMasters, Cluster: cluster.Abilities{Network: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Latency{Nodes: targets(rng, s, allOrMinority)}
		d := [...]time.Duration{s.TTL / 10, s.TTL / 2, s.TTL * 9 / 10}[rng.IntN(3)]
		d = max(d.Truncate(time.Millisecond), time.Millisecond)
		f.Latency = Duration(d)
		f.Jitter = Duration(time.Duration(rng.Int64N(int64(d/10) + 1)).Truncate(time.Millisecond))
		f.Upstream = rng.IntN(2) == 1
		return f
	},
	Decode: decode[Latency],
}

// fit checks the parameters, and the nodes against the number of nodes
// when nodes ≥ 0.
func (l *Latency) fit(nodes int) error {
	if err := checkNodes(l.Nodes, nodes); err != nil {
		return err
	}
	if l.Latency < Duration(time.Millisecond) || l.Jitter < 0 || l.Jitter > l.Latency {
		return fmt.Errorf("latency %v, jitter %v: want latency ≥ 1ms and 0 ≤ jitter ≤ latency",
			time.Duration(l.Latency), time.Duration(l.Jitter))
	}
	return nil
}

// Refuse says why the fault's nodes do not fit s, or "". Load calls it on
// every decoded step.
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

// Start adds the latency toxics to every group's proxy of each node.
func (l *Latency) Start(ctx context.Context, t *Target) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	if err := l.fit(len(t.Cluster.Nodes())); err != nil {
		return err
	}
	attrs := map[string]int64{
		"latency": time.Duration(l.Latency).Milliseconds(),
		"jitter":  time.Duration(l.Jitter).Milliseconds(),
	}
	specs := []toxicSpec{{Name: latencyDown, Type: "latency", Stream: downstream, Attributes: attrs}}
	if l.Upstream {
		specs = append(specs, toxicSpec{Name: latencyUp, Type: "latency", Stream: upstream, Attributes: attrs})
	}
	return injectToxics(ctx, t, l.Nodes, specs...)
}

// Heal removes the latency toxics from every proxy. Data they were holding
// is passed on at once, not dropped.
func (l *Latency) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyUp, latencyDown)
}

// LatencyGroup delays the replies of every node to one client group only
// (Group), by Latency, until Heal; the other group's replies are prompt.
// That is the shape in which a lock's time accounting shows: a holder of
// the slow group counts on the lease from a reply that came Latency after
// the node set the key, while a client of the fast group is granted the
// key the moment it expires on the node and learns it at once. A lock
// whose validity runs from before the request ends its lease before the
// key expires whatever the latency; one that counts from the reply (no
// elapsed term) overlaps the next holder once latency plus hold exceed
// the TTL. A latency on every client's replies alike shows neither: the
// next holder's reply is late by as much. Plan draws delays below a
// tenth of the TTL, the locks' per-call timeout, above which nothing is
// granted to the slow group at all.
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

// Refuse says why the fault does not fit s, or "".
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

// Start adds the latency toxic to the group's proxy of every node.
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

// Heal removes the latency toxics from every proxy.
func (l *LatencyGroup) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, latencyDown)
}

// DelayGrant holds the reply of the next acquire that is granted, so that
// the acquire returns with Delay less of its validity: the elapsed-time
// term of the lease rule (validity = TTL − elapsed − drift). When a key
// is about to be free (a hold ends, or none is open), it adds a
// downstream latency toxic of Delay to every node's proxies, waits for
// the first grant that returned at least Delay later (its reply was
// held), and removes the toxic at once, so that the next holder's
// acquire is fast again.
//
// A lock that counts its validity from before the request loses Delay of
// it: its holder stops (or refuses) before the key expires. A lock that
// counts it from the reply, or keeps none, over-claims by Delay: its
// holder still counts on the lease after the key expired, and a second
// client, whose reply is not held, takes the key while it does.
//
// The delay cannot be most of the TTL: every lock bounds a call to one
// node (locks.Config.Timeout, by default TTL/10, at most 1 s) and takes a
// later reply for a failure. Plan draws 4/5 of that bound, so the reply
// lands before the call gives up on it, with a margin for a loaded
// machine. Some locks bound a call more tightly (redsync: one acquire
// round is bounded by TTL/20) and give up on every delayed acquire: when
// no acquire returns granted with its reply held within Retry (Plan:
// TTL/10, two or three acquire attempts of every waiting client) plus one
// round that asks the nodes in turn (dwell), the delay is halved (down to
// 1 ms) and the wait starts again, until the window (Plan: three TTLs)
// closes; but when an acquire already in flight as the delay
// began won the key (its reply came back sooner than the delay), the
// wait goes on with the same delay until that hold ends. An acquire
// given up under the delay may leave its key on the nodes it reached
// until the TTL (redsync does), so a search can run out of window: the
// matrix gives these cells three steps. The decision's amount is the
// delay the grant got.
type DelayGrant struct {
	Delay Duration `json:"delay"`
	Retry Duration `json:"retry"`
	Aim
}

// Four clients: a second one to take the key while the held reply's
// holder over-claims is all the kind needs, and ten of them on one key
// held 96% of the time starved a redsync run on a loaded machine (5
// grants of 625 acquires), where four left 3 strikes a run.
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

// GrantDelay is the delay-grant kind's delay for a lock of TTL ttl: 4/5
// of the locks' default bound on a call to one node, min(TTL/10, 1 s),
// in whole milliseconds (toxiproxy's unit).
func GrantDelay(ttl time.Duration) time.Duration {
	d := min(ttl/10, time.Second) * 4 / 5
	return max(d.Truncate(time.Millisecond), time.Millisecond)
}

// Refuse says why the fault does not fit s, or "".
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
// halves it: Retry, plus one acquire round that asks the nodes one after
// the other, each reply held by delay (a Python client's redlock takes
// that long; a Go lock asks them at once and is quicker). Waiting Retry
// alone ran a slow client's search down to 1 ms before any of its
// acquires under 40 or 20 ms could come back granted.
func (d *DelayGrant) dwell(delay time.Duration, nodes int) time.Duration {
	return time.Duration(d.Retry) + time.Duration(nodes)*delay
}

// Arm waits until a key is about to be free, delays every node's replies
// and waits for the grant whose reply was held; it removes the delay
// before it returns, struck or not. A replay delays at the recorded
// offset and compares the grant it gets with the recorded one.
func (d *DelayGrant) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Cluster == nil {
		return false, errors.New("no cluster")
	}
	rec := d.Decision
	after, missed, err := keyAboutFree(ctx, t, base, rec)
	if missed != nil || err != nil {
		d.Decision = missed
		return false, err
	}
	nodes := allNodes(len(t.Cluster.Nodes()))
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
		if err = injectToxics(ctx, t, nodes, toxicSpec{Name: delayGrantDown, Type: "latency", Stream: downstream,
			Attributes: map[string]int64{"latency": delay.Milliseconds()}}); err != nil {
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
			// grant could come under the delay while it holds, which says
			// nothing of the delay. Wait, delay kept, until it ends.
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
