package nemesis

import (
	"context"
	"errors"
	"time"
)

// cutBeforeGrant is the strike failover-unreplicated and the Redis
// Cluster kinds share. The cut cannot follow the grant: the replica has a
// SET within a millisecond of the primary's reply, long before the grant
// reaches the view. So it cuts the primary of a key from its replica as a
// hold of it ends and waits up to grantWait (shorter than the failure
// detection, so a strike the run ends lifts the cut before a promotion)
// for a grant under the cut, the trigger; without one, the hold that
// ended. A replay cuts at the recorded offset.
type primaryCut struct {
	// primary finds the primary of key, returned as the decision's
	// targets, or says why the step missed.
	primary func(ctx context.Context, key string) (targets []int, missed string, err error)
	// cut cuts that primary from its replica; lift lifts every cut made.
	cut, lift func() error
	// anyKey: the primary serves every key (Sentinel), so a grant of any
	// key under the cut is the trigger.
	anyKey bool
	// retry: a cut under which no grant came is lifted (before the
	// failure detection acts) and tried again at the next hold's end
	// while the window leaves room; the last try fails over regardless.
	retry bool
}

func (a *Aim) cutBeforeGrant(ctx context.Context, t *Target, base time.Time, grantWait time.Duration, p primaryCut) (bool, error) {
	if t.View == nil {
		return false, errNoView
	}
	rec := a.Decision
	var (
		moment, grant Change
		gerr          error
		targets       []int
		key           string
		at            int64
	)
	_, after := t.View.Holds()
	if rec != nil {
		if r := replay(ctx, t, base, rec); r.Missed != "" {
			a.Decision = r
			return false, nil
		}
		_, after = t.View.Holds()
		if rec.Trigger != nil {
			key = rec.Trigger.Key
		}
	}
	deadline, bounded := ctx.Deadline()
	// room: whether the window leaves time for another try after this
	// one (a hold's end, then a cut of the grant wait), judged by what
	// this one took.
	room := func(took time.Duration) bool {
		return p.retry && rec == nil && bounded && time.Until(deadline) > 2*took+grantWait
	}
	for try := 0; ; try++ {
		began := time.Now()
		if rec == nil {
			wctx, cancel := ctx, context.CancelFunc(func() {})
			if try > 0 && bounded {
				// A later try must leave its cut time before the window
				// closes: without a hold's end by then, it cuts at once.
				wctx, cancel = context.WithDeadline(ctx, deadline.Add(-2*grantWait))
			}
			m, err := WaitFor(wctx, t.View, after, func(c Change) bool { return c.Kind == HoldEnded })
			cancel()
			switch {
			case err == nil:
				moment, after, key = m, m.Seq, m.Hold.Key
			case try == 0 || ctx.Err() != nil:
				a.Decision = &Decision{Missed: "no hold ended within the step's window"}
				return false, nil
			}
		}
		var missed string
		var err error
		if targets, missed, err = p.primary(ctx, key); err != nil || missed != "" {
			if missed != "" {
				a.Decision = &Decision{Missed: missed}
			}
			return false, err
		}
		at = runNow(base)
		if rec != nil {
			at = int64(rec.At) // replay has slept until it
		}
		if err := p.cut(); err != nil {
			return false, errors.Join(err, p.lift())
		}
		gctx, cancel := context.WithTimeout(ctx, grantWait)
		grant, gerr = WaitFor(gctx, t.View, after, func(c Change) bool {
			return c.Kind == HoldGranted && c.Time >= at && (p.anyKey || c.Hold.Key == key)
		})
		cancel()
		if ctx.Err() != nil {
			// The run's step ends: lift the cut before a promotion.
			a.Decision = &Decision{Missed: "the step's window closed under the cut"}
			return false, p.lift()
		}
		if gerr == nil || !room(time.Since(began)) {
			break
		}
		// No grant under this cut (the keys were all held): lift it
		// before the failure detection acts, and try again.
		if err := p.lift(); err != nil {
			return false, err
		}
		_, after = t.View.Holds()
	}
	a.Decision = judged(rec, &Decision{At: Duration(at), Targets: targets, Trigger: cutTrigger(grant, gerr == nil, rec != nil, moment, key, runNow(base))}, sameTargets|sameChange)
	return true, nil
}

// cutTrigger is the grant under the cut, else (a replay) the recorded
// key's hold that ended, else the hold whose end the cut followed.
func cutTrigger(grant Change, granted, replayed bool, moment Change, key string, now int64) *Trigger {
	switch {
	case granted:
		return holdTrigger(HoldGranted, grant.Hold, now)
	case replayed:
		return &Trigger{Change: HoldEnded, Client: -1, Key: key}
	}
	return holdTrigger(HoldEnded, moment.Hold, now)
}
