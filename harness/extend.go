package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// work is the critical part of one cycle: with Workload.Extend, the hold in
// sections of at most ExtendEvery with an extend between two; without, one
// section. It returns the lease as last extended. It stops early, without
// error, at the first section that fails (the lease lapsed), at the first
// extend not ok, and between sections once runCtx ended. The extend is called
// whatever the validity, as a renewal timer does (redsync, redislock,
// Redisson's watchdog): whether a lapsed lease may be renewed is the lock's
// to decide and the checker's to judge.
func (c *client) work(ctx, runCtx context.Context, r *run, lk locks.Lock, lease locks.Lease) (locks.Lease, error) {
	cfg := r.cfg
	if !cfg.Extend {
		_, err := c.section(ctx, r.store, lease, cfg.Hold, r.stalls)
		return lease, err
	}
	left := cfg.Hold
	for {
		chunk := min(left, cfg.ExtendEvery)
		left -= chunk
		ok, err := c.section(ctx, r.store, lease, chunk, r.stalls)
		if err != nil || !ok || left <= 0 || runCtx.Err() != nil {
			return lease, err
		}
		if r.stalls.await(ctx, c.id) != nil {
			return lease, nil
		}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.AcquireTimeout)
		next, err := c.extend(ectx, lk, lease)
		cancel()
		if err != nil {
			if errors.Is(err, history.ErrWrite) || errors.Is(err, ErrBadLease) {
				return lease, err
			}
			return lease, nil
		}
		lease = next
	}
}

// extend calls lk.Extend on l and records it (the invoke with l's token and
// fence, the ok with the new validity); a lease that breaks locks.Lock's
// contract stops the run (ErrBadLease).
func (c *client) extend(ctx context.Context, lk locks.Lock, l locks.Lease) (locks.Lease, error) {
	inv := history.Event{Type: history.Invoke, F: history.Extend, Process: c.id, Key: l.Key, Token: l.Token, Fence: l.Fence}
	if err := c.rec.Append(inv); err != nil {
		return locks.Lease{}, err
	}
	ctx, ev := c.traced(ctx, lk)
	next, err := lk.Extend(ctx, l)
	if err == nil {
		err = checkExtended(c.lock, c.id, l, next)
	}
	done := history.Event{Type: completion(err), F: history.Extend, Process: c.id, Time: c.rec.Now(), Key: l.Key, Token: l.Token, Fence: l.Fence, Nodes: nodesOf(ev)}
	if err != nil {
		done.Error = err.Error()
	} else {
		done.ValidUntil = c.rec.Offset(next.Validity)
	}
	if werr := c.rec.Append(done); werr != nil {
		return locks.Lease{}, werr
	}
	if err != nil {
		return locks.Lease{}, err
	}
	c.view.extended(c.id, next, done.Time, done.Nodes)
	return next, nil
}

// checkExtended checks an extended lease: l's key and token, a validity read
// from time.Now.
func checkExtended(lock string, client int, old, l locks.Lease) error {
	var why string
	switch {
	case l.Token != old.Token:
		why = fmt.Sprintf("token %q for the lease of token %q; an extend keeps the lease's token", l.Token, old.Token)
	case l.Fence != old.Fence:
		why = fmt.Sprintf("fence %d for the lease of fence %d; an extend keeps the lease's fencing token", l.Fence, old.Fence)
	case l.Key != old.Key:
		why = fmt.Sprintf("a lease of key %q; an extend keeps the lease's key", l.Key)
	case l.Validity.IsZero():
		why = "no validity; an extended lease must carry the end of its validity"
	case l.Validity == l.Validity.Round(0):
		why = "a validity without a monotonic clock reading; a lease's validity must come from time.Now"
	default:
		return nil
	}
	return fmt.Errorf("%w: lock %s, client %d: extend %q returned ok with %s (see locks.Lock)", ErrBadLease, lock, client, old.Key, why)
}
