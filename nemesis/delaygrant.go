package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

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

var _ aimedFault = (*DelayGrant)(nil)

// Names of the toxics a delay-grant adds.
const delayGrantDown = "delay_grant_" + downstream

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
		if err = d.delay(ctx, t, nodes, delay); err != nil {
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
		d.Decision = &Decision{Missed: "no acquire returned granted with its reply held within the step's window"}
		if rec != nil {
			d.Decision.Replay = verdict(rec, d.Decision, 0)
		}
		return false, nil
	}
	h := c.Hold
	d.Decision = &Decision{
		At:      Duration(at),
		Trigger: &Trigger{Change: HoldGranted, Client: h.Client, Key: h.Key, Granted: slices.Clone(h.Granted), Left: Duration(h.ValidUntil - c.Time)},
		Targets: nodes,
		Amount:  Duration(delay),
	}
	if rec != nil {
		d.Decision.Replay = verdict(rec, d.Decision, sameHold)
	}
	return true, nil
}

// delay adds the latency toxic to every client group's proxy of nodes.
func (d *DelayGrant) delay(ctx context.Context, t *Target, nodes []int, delay time.Duration) error {
	spec := toxicSpec{Name: delayGrantDown, Type: "latency", Stream: downstream,
		Attributes: map[string]int64{"latency": delay.Milliseconds()}}
	var errs []error
	for _, i := range nodes {
		for g := range t.Cluster.Groups() {
			errs = append(errs, injectToxic(ctx, t.Cluster.Node(i).GroupLink(g), spec))
		}
	}
	return errors.Join(errs...)
}

// Start does nothing more: the delayed grant has returned by the time Arm
// reports the strike.
func (d *DelayGrant) Start(context.Context, *Target) error { return nil }

// Heal removes the delay if it is still there (Arm removes it itself).
func (d *DelayGrant) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, delayGrantDown)
}
