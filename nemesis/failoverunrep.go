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

// FailoverUnreplicated is the failover of the literature aimed at a grant:
// the primary is isolated from its replica and the sentinels (as the
// failover kind does) right before the next grant, so that the grant is
// never replicated; the sentinels promote the replica without the key,
// and a second client acquires it there while the first still holds it.
//
// The cut cannot follow the grant: the replica has a SET within a
// millisecond of the primary's reply, long before a client's grant
// reaches the run's view. So Arm waits until a hold ends (its key about
// to be free), cuts the primary's internal path at once, and waits up to
// GrantWait (less than the sentinels' 1 s down-after, so that a
// strike the run ends lifts the cut before a promotion) for the grant the
// old primary gives under the cut: the trigger. When none comes — a lock
// that waits for its replica (setnx with WAIT 1) refuses every acquire
// the replica cannot acknowledge — the trigger is the hold that ended,
// and the failover goes on: what the lock does through a failover with no
// unreplicated grant is the measurement. Start waits for the promotion
// and cuts the clients' path to the old primary too; Heal is the failover
// kind's (the old primary rejoins as a replica).
//
// With Force (Plan sets it) Start does not leave the promotion to the
// sentinels' down-after (1 s) and election: it asks them to fail over at
// once (SENTINEL FAILOVER), as an operator's manual failover does right
// after a write it does not know is unreplicated. Without it (schedules
// written before Force) the sentinels find the primary down themselves.
type FailoverUnreplicated struct {
	GrantWait Duration `json:"grant_wait"`
	Force     bool     `json:"force,omitempty"`
	Aim

	fo Failover // its cuts, and their heal
}

var (
	_ ArmedFault    = (*FailoverUnreplicated)(nil)
	_ RefusingFault = (*FailoverUnreplicated)(nil)
	_ LastingFault  = (*FailoverUnreplicated)(nil)
)

var failoverUnreplicatedKind = Kind{
	Name:    "failover-unreplicated",
	Family:  "failover",
	Twin:    Twin{Kinds: []string{"failover"}},
	Window:  Workload{TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, Duration: 20 * time.Second},
	Summary: "isolate the primary from its replica and the sentinels right before a grant, so the grant is never replicated; the replica is promoted without it",
	Needs:   Needs{Topology: cluster.TopologyFailover, TTL: true},
	Plan: func(_ *rand.Rand, s Setup) Fault {
		return &FailoverUnreplicated{GrantWait: Duration(min(s.TTL/2, 500*time.Millisecond)), Force: true, Aim: newAim(s)}
	},
	Decode: decode[FailoverUnreplicated],
}

// Refuse says why the fault does not fit s, or "".
func (f *FailoverUnreplicated) Refuse(s Setup) string {
	if f.GrantWait <= 0 {
		return fmt.Sprintf("failover-unreplicated: grant_wait %v: want it positive", time.Duration(f.GrantWait))
	}
	return f.refuse("failover-unreplicated", s.Nodes)
}

func (f *FailoverUnreplicated) String() string {
	s := "failover-unreplicated: isolate the primary right before a grant, promote the replica"
	if f.Force {
		s += " at once (SENTINEL FAILOVER)"
	}
	if f.struck() {
		return s + decided(f.Decision, "primary "+nodeNames(f.Decision.Targets)+" cut from "+time.Duration(f.Decision.At).Round(time.Millisecond).String())
	}
	return s + decided(f.Decision, "")
}

// Arm waits for a hold to end, cuts the primary's internal path, and
// waits up to GrantWait for a grant under the cut (see
// FailoverUnreplicated). With Force, a cut under which no grant came is
// lifted (before the sentinels' down-after) and tried again at the next
// hold's end while the window leaves room for one more; the last try
// fails over with or without one. A replay cuts at the recorded offset.
func (f *FailoverUnreplicated) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	fo, err := failoverOf(t)
	if err != nil {
		return false, err
	}
	if t.View == nil {
		return false, errors.New("no view of the run's holds to aim at")
	}
	rec := f.Decision
	var (
		moment, grant Change
		gerr          error
		old           *cluster.Node
		at            int64
	)
	_, after := t.View.Holds()
	if rec != nil {
		r, err := replay(ctx, t, base, rec)
		if err != nil || r.Missed != "" {
			f.Decision = r
			return false, err
		}
		_, after = t.View.Holds()
	}
	deadline, bounded := ctx.Deadline()
	// room: whether the window leaves time for another try after this
	// one (a hold's end, then a cut of GrantWait), judged by what this
	// one took.
	room := func(took time.Duration) bool {
		return f.Force && rec == nil && bounded && time.Until(deadline) > 2*took+time.Duration(f.GrantWait)
	}
	for try := 0; ; try++ {
		began := time.Now()
		if rec == nil {
			wctx, cancel := ctx, context.CancelFunc(func() {})
			if try > 0 && bounded {
				// A later try must leave its cut time before the window
				// closes: without a hold's end by then, it cuts at once.
				wctx, cancel = context.WithDeadline(ctx, deadline.Add(-2*time.Duration(f.GrantWait)))
			}
			m, err := WaitFor(wctx, t.View, after, func(c Change) bool { return c.Kind == HoldEnded })
			cancel()
			switch {
			case err == nil:
				moment, after = m, m.Seq
			case try == 0 || ctx.Err() != nil:
				f.Decision = &Decision{Missed: "no hold ended within the step's window"}
				return false, nil
			}
		}
		if old, err = fo.WaitPrimary(ctx); err != nil {
			if ctx.Err() != nil {
				f.Decision = &Decision{Missed: "the sentinels named no primary within the step's window"}
				return false, nil
			}
			return false, err
		}
		at = runNow(base)
		if err := f.fo.blackHole(fo.InternalProxy(old)); err != nil {
			return false, errors.Join(err, f.lift(ctx))
		}
		gctx, cancel := context.WithTimeout(ctx, time.Duration(f.GrantWait))
		grant, gerr = WaitFor(gctx, t.View, after, func(c Change) bool { return c.Kind == HoldGranted && c.Time >= at })
		cancel()
		if ctx.Err() != nil {
			// The run's step ends: lift the cut before the sentinels act.
			f.Decision = &Decision{Missed: "the step's window closed under the cut"}
			return false, f.lift(ctx)
		}
		if gerr == nil || !room(time.Since(began)) {
			break
		}
		// No grant under this cut (the keys were all held): lift it
		// before the sentinels call the primary down, and try again.
		if err := f.lift(ctx); err != nil {
			return false, err
		}
		_, after = t.View.Holds()
	}
	target := slices.Index(fo.Nodes(), old)
	d := &Decision{At: Duration(at), Targets: []int{target}}
	now := runNow(base)
	if gerr == nil {
		h := grant.Hold
		d.Trigger = &Trigger{Change: HoldGranted, Client: h.Client, Key: h.Key, Granted: slices.Clone(h.Granted), Left: Duration(h.ValidUntil - now)}
	} else if rec != nil && rec.Trigger != nil {
		d.Trigger = &Trigger{Change: HoldEnded, Client: -1, Key: rec.Trigger.Key}
	} else {
		h := moment.Hold
		d.Trigger = &Trigger{Change: HoldEnded, Client: h.Client, Key: h.Key, Granted: slices.Clone(h.Granted), Left: Duration(h.ValidUntil - now)}
	}
	if rec != nil {
		d.Replay = verdict(rec, d, sameTargets|sameChange)
	}
	f.Decision = d
	return true, nil
}

// lift removes the cuts made so far.
func (f *FailoverUnreplicated) lift(ctx context.Context) error {
	return f.fo.uncut(context.WithoutCancel(ctx))
}

// Start waits for the sentinels to promote the replica, then cuts the old
// primary from the clients too.
func (f *FailoverUnreplicated) Start(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	old, err := node(t, f.Decision.Targets[0])
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if f.Force {
		if err := fo.ForceFailover(wctx); err != nil {
			return err
		}
	}
	if _, err := waitPromotion(wctx, fo, old); err != nil {
		return err
	}
	return f.fo.blackHole(old.Proxy())
}

// Heal removes the cuts and waits until the old primary has rejoined as a
// replica (the failover kind's heal).
func (f *FailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return f.fo.Heal(ctx, t)
}
