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

// NodeError is the error of one node of a multi-node lock (RedLock): the
// node's address and what went wrong there. A RedLock error joins one
// NodeError per failing node with errors.Join.
type NodeError struct {
	// Addr is the node's address, as given in Config.Addrs.
	Addr string
	// Err is the node's error.
	Err error
}

// Error implements error.
func (e *NodeError) Error() string { return fmt.Sprintf("node %s: %v", e.Addr, e.Err) }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// redlock is RedLock as described on the Redis page "Distributed Locks
// with Redis", on N = len(Config.Addrs) independent masters with one
// client each:
//
//   - Acquire: with one fresh random token, SET key token NX PX ttl on all
//     N nodes in parallel, each call bounded by Config.Timeout. The lock is
//     acquired if at least ⌊N/2⌋+1 nodes granted it and the remaining
//     validity TTL − elapsed − drift is positive (elapsed: the time the
//     parallel round took; drift: TTL×1% + 2 ms). The lease is then valid
//     until start + TTL − drift, start being taken before the first
//     command was sent: no key was set earlier, so none expires earlier
//     (up to drift), and at the moment Acquire returns the caller has
//     TTL − elapsed − drift left, as the page prescribes. Otherwise the
//     client unlocks every node (a compare-and-delete, even on nodes that
//     refused or failed: their SET may have landed unseen), in parallel and
//     best effort, with a timeout of its own that ignores the
//     cancellation of ctx, then backs off for a random delay in
//     [RetryDelay/2, RetryDelay) and tries again, up to Config.Tries
//     attempts.
//
//     A node that failed (timeout, refused connection) counts as not
//     granting. Acquire therefore fails with ErrNotAcquired whenever the
//     quorum was missed, even if some nodes' outcomes were unknown: the
//     algorithm, not the nodes, decides who holds the lock, the partial
//     grants have been unlocked, and the caller must not act as the
//     holder. (Should an unlock fail too, the token may sit on some nodes
//     until their TTL: a cost in liveness, not safety.) The node errors of
//     the last attempt are joined to ErrNotAcquired. A cancelled ctx ends
//     Acquire with ctx.Err(), wrapped, after the clean-up.
//
//   - Release: compare-and-delete on all nodes in parallel. The lease was
//     held only if a quorum still held the token, so Release succeeds if
//     at least a quorum of nodes deleted it; fails with ErrNotHeld
//     (joined with any node errors) if even counting every failing node
//     as a deletion fewer than a quorum could have held it; and otherwise
//     returns the joined node errors alone: outcome unknown. Either way
//     every node that answered no longer holds the token.
//
//   - Extend: refused at once with ErrNotHeld if the lease's validity has
//     passed; else compare-and-pexpire on all nodes in parallel, which
//     succeeds if a quorum extended within the recomputed validity
//     (TTL − elapsed − drift > 0), the new lease being valid until
//     start + TTL − drift. ErrNotHeld if fewer than a quorum could have
//     extended (failing nodes counted as extended) or the validity ran
//     out; the joined node errors, outcome unknown, otherwise. A failed
//     Extend unlocks nothing: the old lease stands until its validity.
//
// Fencing (Config.Fencing): each node's acquire is one Lua script that
// also INCRs a per-node counter (key+":fence"), and the lease's fencing
// token is the largest counter among the granting nodes. This is NOT a
// sound fencing scheme, and the harness is meant to show it: the counters
// on different nodes are independent, so two holders granted by different
// quorums can get tokens whose order does not match the order of their
// grants (a later holder can get a smaller token, and a fenced resource
// then rejects the rightful holder or accepts a stale one); and a node
// restarted without persistence starts its counter again from zero.
// RedLock offers no counter that a quorum agrees on.
//
// Evidence ([NodeReporter]): every node's answer to every command, with
// its attempt; the unlock after a failed attempt is that attempt's
// clean-up, so the partial grants it undid are Nodes.Unlocked.
//
// redlockBug turns the lock into one of the RedLock mutants.
type redlock struct {
	name    string
	cfg     Config
	drift   time.Duration
	quorum  int
	clients []*redis.Client
	backoff *Backoff
	bug     redlockBug
}

// redlockBug selects the deliberate bug of a RedLock mutant (mutants.go);
// the zero value is the correct lock.
type redlockBug struct {
	// anyGrant takes one granting node as enough: the quorum is 1.
	anyGrant bool
	// ignoreElapsed computes the validity as TTL − drift from the moment
	// Acquire (or Extend) returns, ignoring the time the round took.
	ignoreElapsed bool
}

var (
	_ Lock         = (*redlock)(nil)
	_ NodeReporter = (*redlock)(nil)
)

// ReportsNodes implements [NodeReporter]: every node's answer, exactly.
func (l *redlock) ReportsNodes() bool { return true }

// newRedLock builds the lock called name (for error messages) from cfg.
func newRedLock(name string, cfg Config, bug redlockBug) (*redlock, error) {
	cfg, err := validConfig(name, cfg)
	if err != nil {
		return nil, err
	}
	if len(cfg.Sentinels) > 0 {
		return nil, fmt.Errorf("locks: %s needs independent masters in Addrs, not a primary found through Sentinels", name)
	}
	l := &redlock{
		name:    name,
		cfg:     cfg,
		drift:   Drift(cfg.TTL),
		quorum:  len(cfg.Addrs)/2 + 1,
		backoff: NewBackoff(cfg),
		bug:     bug,
	}
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

// reply is one node's answer: n > 0 means yes (granted, deleted,
// extended; for a fenced acquire n is the node's counter), 0 means no.
type reply struct {
	n   int64
	err error
}

// each runs call on every node in parallel, each bounded by Timeout
// within ctx, and returns the replies in node order. It reports each
// node's answer to the Evidence in ctx, if any, as step (its Attempt and
// Cleanup) of the call.
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

// tally counts the yeses in replies and wraps each error in a NodeError;
// fence is the largest n among the yeses.
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

// validity returns the remaining validity after a round that started at
// start and ended at end, and the deadline the lease gets.
func (l *redlock) validity(start, end time.Time) (time.Duration, time.Time) {
	if l.bug.ignoreElapsed {
		v := l.cfg.TTL - l.drift // the bug: the round's time is not subtracted
		return v, end.Add(v)
	}
	v := l.cfg.TTL - end.Sub(start) - l.drift
	return v, start.Add(l.cfg.TTL - l.drift)
}

// Acquire implements [Lock].
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

// unlock deletes key on every node where it holds token: best effort, in
// parallel, with a timeout of its own even if ctx is done. It is the
// clean-up of attempt.
func (l *redlock) unlock(ctx context.Context, attempt int, key, token string) {
	l.each(context.WithoutCancel(ctx), NodeAnswer{Attempt: attempt, Cleanup: true}, func(ctx context.Context, c *redis.Client) (int64, error) {
		return releaseScript.Run(ctx, c, []string{key}, token).Int64()
	}) // best effort: a failed unlock leaves the key to its TTL
}

// Release implements [Lock].
func (l *redlock) Release(ctx context.Context, lease Lease) error {
	replies := l.each(ctx, NodeAnswer{Attempt: 1}, func(ctx context.Context, c *redis.Client) (int64, error) {
		return releaseScript.Run(ctx, c, []string{lease.Key}, lease.Token).Int64()
	})
	deleted, _, errs := l.tally(replies)
	switch {
	case deleted >= l.quorum:
		return nil
	case deleted+len(errs) >= l.quorum:
		return fmt.Errorf("%s: release %q: %d of %d nodes deleted the token, %d needed, outcome unknown: %w",
			l.name, lease.Key, deleted, len(l.clients), l.quorum, errors.Join(errs...))
	default:
		return fmt.Errorf("%s: release %q: %d of %d nodes held the token, %d needed: %w",
			l.name, lease.Key, deleted, len(l.clients), l.quorum, errors.Join(append([]error{ErrNotHeld}, errs...)...))
	}
}

// Extend implements [Lock].
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
	case extended+len(errs) >= l.quorum:
		return Lease{}, fmt.Errorf("%s: extend %q: %d of %d nodes extended, %d needed, outcome unknown: %w",
			l.name, lease.Key, extended, len(l.clients), l.quorum, errors.Join(errs...))
	default:
		return Lease{}, fmt.Errorf("%s: extend %q: %d of %d nodes held the token, %d needed: %w",
			l.name, lease.Key, extended, len(l.clients), l.quorum, errors.Join(append([]error{ErrNotHeld}, errs...)...))
	}
}

// Close implements [Lock].
func (l *redlock) Close() error { return closeClients(l.clients) }

// closeClients closes every client.
func closeClients(clients []*redis.Client) error {
	var errs []error
	for _, c := range clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
