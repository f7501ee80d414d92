package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locktorture/locktorture/internal/wait"
	"github.com/redis/go-redis/v9"
)

// NodeError is one node's error in a RedLock error, which joins one per
// failing node.
type NodeError struct {
	Addr string // as in Config.Addrs
	Err  error
}

// Error implements error.
func (e *NodeError) Error() string { return fmt.Sprintf("node %s: %v", e.Addr, e.Err) }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// redlock is RedLock as the Redis page "Distributed Locks with Redis"
// describes it, on N = len(Config.Addrs) independent masters:
//
//   - Acquire: one fresh token, SET NX PX on all nodes in parallel, each
//     bounded by Config.Timeout; held if a quorum (⌊N/2⌋+1) granted and
//     TTL − elapsed − drift is positive, until start + TTL − drift, start
//     before the first command (no key was set earlier). Else unlock
//     every node (those that refused or failed too: their SET may have
//     landed unseen), best effort, ignoring ctx's cancellation, back off
//     and retry, up to Config.Tries. A missed quorum is ErrNotAcquired,
//     failed nodes counting as refusals (the algorithm decides; a failed
//     unlock costs liveness, not safety), joined with the last attempt's
//     node errors; a cancelled ctx gives ctx.Err() after the clean-up.
//   - Release: compare-and-delete on all nodes: nil on a quorum,
//     ErrNotHeld if even counting failed nodes no quorum held the token,
//     else the node errors (outcome unknown).
//   - Extend: ErrNotHeld at once past the validity; else
//     compare-and-pexpire on all nodes, judged as Release, the validity
//     recomputed. A failed Extend unlocks nothing.
//
// Fencing: each node's acquire INCRs its own counter, the token the
// largest among the grants. NOT sound, as the harness shows: the
// independent counters can order holders of different quorums wrongly,
// and a node restarted without persistence counts from zero. RedLock has
// no counter a quorum agrees on.
//
// Evidence: every node's answer to every command; the unlock after a
// failed attempt is its clean-up (Nodes.Unlocked).
type redlock struct {
	base
	reports
	quorum  int
	clients []*redis.Client
	bug     redlockBug
}

// redlockBug selects a RedLock mutant's bug (mutants.go); zero: none.
type redlockBug struct {
	anyGrant      bool // the quorum is 1
	ignoreElapsed bool // validity TTL − drift from the round's end
}

// newRedLock builds the lock called name from cfg.
func newRedLock(name string, cfg Config, bug redlockBug) (*redlock, error) {
	b, err := newBase(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := independent(name, b.cfg); err != nil {
		return nil, err
	}
	cfg = b.cfg
	l := &redlock{base: b, quorum: len(cfg.Addrs)/2 + 1, bug: bug}
	if q := cfg.Quorum; q != 0 {
		if q <= len(cfg.Addrs)/2 || q > len(cfg.Addrs) {
			return nil, fmt.Errorf("locks: %s: quorum %d of %d nodes: want more than half of them, at most all", name, q, len(cfg.Addrs))
		}
		l.quorum = q
	}
	if bug.anyGrant {
		l.quorum = 1
	}
	for _, addr := range cfg.Addrs {
		l.clients = append(l.clients, NewClient(addr, cfg))
	}
	return l, nil
}

// reply is one node's answer: n > 0 is yes (for a fenced acquire, the
// node's counter), 0 no.
type reply struct {
	n   int64
	err error
}

// each runs call on every node in parallel, each bounded by Timeout, and
// returns the replies in node order, reporting each answer as step (its
// Attempt and Cleanup).
func (l *redlock) each(ctx context.Context, step NodeAnswer, call func(context.Context, *redis.Client) (int64, error)) []reply {
	replies := make([]reply, len(l.clients))
	ev := ContextEvidence(ctx)
	var wg sync.WaitGroup
	for i, c := range l.clients {
		wg.Go(func() {
			ctx, cancel := nodeCtx(ctx, l.cfg)
			defer cancel()
			n, err := call(ctx, c)
			replies[i] = reply{n: n, err: err}
			if ev != nil {
				a := step
				a.Node, a.Answer, a.Err = i, answerOf(n > 0, err), errOf(err)
				ev.add(a)
			}
		})
	}
	wg.Wait()
	return replies
}

// tally counts the yeses, the largest n among them, and the NodeErrors.
func (l *redlock) tally(replies []reply) (yes int, fence int64, errs []error) {
	for i, r := range replies {
		switch {
		case r.err != nil:
			errs = append(errs, &NodeError{Addr: l.cfg.Addrs[i], Err: r.err})
		case r.n > 0:
			yes++
			fence = max(fence, r.n)
		}
	}
	return yes, fence, errs
}

// validity returns the validity left after a round from start to end, and
// the lease's deadline.
func (l *redlock) validity(start, end time.Time) (time.Duration, time.Time) {
	if l.bug.ignoreElapsed {
		v := l.cfg.TTL - l.drift // the bug: the round's time is not subtracted
		return v, end.Add(v)
	}
	v := l.cfg.TTL - end.Sub(start) - l.drift
	return v, start.Add(l.cfg.TTL - l.drift)
}

func (l *redlock) Acquire(ctx context.Context, key string) (Lease, error) {
	token := newToken()
	ttl := l.cfg.TTL.Milliseconds()
	lock := func(ctx context.Context, c *redis.Client) (int64, error) {
		if l.cfg.Fencing {
			return acquireFencedScript.Run(ctx, c, []string{key, fenceKey(key)}, token, ttl).Int64()
		}
		err := c.Do(ctx, "SET", key, token, "NX", "PX", ttl).Err()
		switch {
		case errors.Is(err, redis.Nil):
			return 0, nil
		case err != nil:
			return 0, err
		}
		return 1, nil
	}
	var why error
	for try := range l.cfg.Tries {
		if try > 0 {
			if err := wait.Sleep(ctx, l.backoff.Next()); err != nil {
				return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
			}
		}
		start := time.Now()
		replies := l.each(ctx, NodeAnswer{Attempt: try + 1}, lock)
		end := time.Now()
		granted, fence, errs := l.tally(replies)
		if !l.cfg.Fencing {
			fence = 0 // the replies were 1 for "granted", not counters
		}
		v, deadline := l.validity(start, end)
		if granted >= l.quorum && v > 0 {
			return Lease{Key: key, Token: token, Fence: fence, Validity: deadline}, nil
		}
		l.unlock(ctx, try+1, key, token)
		if err := ctxErr(ctx); err != nil {
			return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
		}
		if granted >= l.quorum {
			why = fmt.Errorf("%d of %d nodes granted but the round took %v of a %v TTL", granted, len(l.clients), end.Sub(start), l.cfg.TTL)
		} else {
			why = fmt.Errorf("%d of %d nodes granted, %d needed", granted, len(l.clients), l.quorum)
		}
		why = errors.Join(append([]error{why}, errs...)...)
	}
	return Lease{}, fmt.Errorf("%s: acquire %q: %w: %w", l.name, key, ErrNotAcquired, why)
}

// unlock is attempt's clean-up: a compare-and-delete on every node, best
// effort, even if ctx is done.
func (l *redlock) unlock(ctx context.Context, attempt int, key, token string) {
	l.each(context.WithoutCancel(ctx), NodeAnswer{Attempt: attempt, Cleanup: true}, func(ctx context.Context, c *redis.Client) (int64, error) {
		return releaseScript.Run(ctx, c, []string{key}, token).Int64()
	}) // best effort: a failed unlock leaves the key to its TTL
}

func (l *redlock) Release(ctx context.Context, lease Lease) error {
	replies := l.each(ctx, NodeAnswer{Attempt: 1}, func(ctx context.Context, c *redis.Client) (int64, error) {
		return releaseScript.Run(ctx, c, []string{lease.Key}, lease.Token).Int64()
	})
	deleted, _, errs := l.tally(replies)
	if deleted >= l.quorum {
		return nil
	}
	return l.short("release", lease.Key, "deleted the token", deleted, errs)
}

// short is the error of a Release or Extend that yes nodes did: outcome
// unknown when the nodes that failed could make up a quorum, else
// ErrNotHeld.
func (l *redlock) short(op, key, did string, yes int, errs []error) error {
	if yes+len(errs) >= l.quorum {
		return fmt.Errorf("%s: %s %q: %d of %d nodes %s, %d needed, outcome unknown: %w",
			l.name, op, key, yes, len(l.clients), did, l.quorum, errors.Join(errs...))
	}
	return fmt.Errorf("%s: %s %q: %d of %d nodes held the token, %d needed: %w",
		l.name, op, key, yes, len(l.clients), l.quorum, errors.Join(append([]error{ErrNotHeld}, errs...)...))
}

func (l *redlock) Extend(ctx context.Context, lease Lease) (Lease, error) {
	start := time.Now()
	if !lease.Valid(start) {
		return Lease{}, fmt.Errorf("%s: extend %q: validity ended %v ago: %w", l.name, lease.Key, start.Sub(lease.Validity), ErrNotHeld)
	}
	ttl := l.cfg.TTL.Milliseconds()
	replies := l.each(ctx, NodeAnswer{Attempt: 1}, func(ctx context.Context, c *redis.Client) (int64, error) {
		return extendScript.Run(ctx, c, []string{lease.Key}, lease.Token, ttl).Int64()
	})
	end := time.Now()
	extended, _, errs := l.tally(replies)
	v, deadline := l.validity(start, end)
	switch {
	case v <= 0:
		return Lease{}, fmt.Errorf("%s: extend %q: the round took %v of a %v TTL: %w",
			l.name, lease.Key, end.Sub(start), l.cfg.TTL, errors.Join(append([]error{ErrNotHeld}, errs...)...))
	case extended >= l.quorum:
		lease.Validity = deadline
		return lease, nil
	}
	return Lease{}, l.short("extend", lease.Key, "extended", extended, errs)
}

func (l *redlock) Close() error { return closeClients(l.clients) }

// closeClients closes every client.
func closeClients(clients []*redis.Client) error {
	var errs []error
	for _, c := range clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
