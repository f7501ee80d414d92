package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
)

// Name is the lock's name in the registry.
const Name = "etcd-mutex"

// init registers etcd-mutex after the built-in locks; it fails only if
// another lock took the name, and such a program cannot mean what it runs.
func init() {
	err := locks.Register(locks.Spec{
		Name:      Name,
		Summary:   "library go.etcd.io/etcd/client/v3/concurrency: Mutex on a session lease of etcd members (one Raft group), renewed by the session's keep-alive; the holder is told when the session ends or the lease's expiry is no longer bounded; the key's create revision as fencing token",
		MultiNode: true,
		Fencing:   true,
		Nodes:     3,
		Server:    "etcd",
		Promises:  &locks.Promises{Consensus: true, Renews: true, NoticeInTime: true, Fences: true, FenceSound: true, Extends: true},
		New:       newEtcdMutex,
	})
	if err != nil {
		panic(err)
	}
}

// etcdMutex is "etcd-mutex": etcd's concurrency.Mutex on a session lease,
// through one clientv3.Client that never syncs its endpoints (the members
// advertise their own ports, not their proxies).
//
// Acquire grants a lease of the TTL (whole seconds, at least one), opens
// a Session on it and calls TryLock: a key "PREFIX/LEASE" held when it has
// the lowest create revision under the prefix. Refused (ErrLocked), or a
// failed grant (no key without a lease), it revokes the lease and tries
// again after the back-off; any other error is an unknown outcome.
//
// The session's keep-alive (every TTL/3) renews the lease; it claims no
// validity (UntilRelease) and the holder is told (Lease.Lost) when the
// session ends, the lease is gone, or nothing bounds its expiry past now:
// the lock's own LeaseKeepAliveOnce every TTL/4, counted from before the
// request less locks.Drift, so that a holder cut off is told before the
// leader can expire the lease. The session alone learns of a loss up to
// half a second after its deadline, counted from the reply, and
// LeaseTimeToLive's whole seconds round a 1 s lease to 0. A process
// stopped whole learns too late: fencing guards.
//
// The fencing token is the key's create revision: revisions only grow,
// and a key holds once every earlier key is gone. Release deletes the key
// if its create revision is unchanged (else ErrNotHeld) and revokes the
// lease; Extend is one keep-alive (ErrNotHeld, and the notice, when the
// lease is gone).
type etcdMutex struct {
	cli   *clientv3.Client
	cfg   locks.Config
	ttl   int64 // seconds
	drift time.Duration
	bo    *locks.Backoff

	mu     sync.Mutex
	holds  map[string]*etcdHold // by token
	closed bool
}

// etcdHold is one held lease.
type etcdHold struct {
	id    clientv3.LeaseID
	key   string // the Mutex's key
	rev   int64  // its create revision
	lost  *locks.Notice
	stop  context.CancelFunc // ends the session's keep-alive and the watch
	done  chan struct{}      // closed when the watch returned
	sess  *concurrency.Session
	start time.Time
}

// etcdPrefix is the prefix of every lock key, before the harness's key.
const etcdPrefix = "/locktorture/"

// newEtcdMutex builds "etcd-mutex" from cfg, with its defaults.
func newEtcdMutex(cfg locks.Config) (locks.Lock, error) {
	switch {
	case len(cfg.Sentinels) > 0 || cfg.Cluster:
		return nil, errors.New("locks: etcd-mutex talks to etcd members, not to Sentinels or a Redis Cluster")
	case len(cfg.Addrs) == 0:
		return nil, errors.New("locks: etcd-mutex: no member address")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: cfg.Addrs,
		Logger:    zap.NewNop(),
		// No endpoint sync (AutoSyncInterval 0): the members advertise
		// their own ports, which no fault reaches.
	})
	if err != nil {
		return nil, fmt.Errorf("locks: etcd client: %w", err)
	}
	ttl := int64((cfg.TTL + time.Second - 1) / time.Second)
	return &etcdMutex{cli: cli, cfg: cfg, ttl: max(ttl, 1), drift: locks.Drift(cfg.TTL), bo: locks.NewBackoff(cfg), holds: make(map[string]*etcdHold)}, nil
}

func (e *etcdMutex) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.Timeout)
}

// Acquire tries to lock key, up to locks.Config.Tries times.
func (e *etcdMutex) Acquire(ctx context.Context, key string) (locks.Lease, error) {
	for try := range e.cfg.Tries {
		if try > 0 {
			if err := wait.Sleep(ctx, e.bo.Next()); err != nil {
				return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, err)
			}
		}
		l, err := e.try(ctx, key)
		if err == nil || !errors.Is(err, locks.ErrNotAcquired) {
			return l, err
		}
	}
	return locks.Lease{}, fmt.Errorf("acquire %q: %w after %d tries", key, locks.ErrNotAcquired, e.cfg.Tries)
}

// try is one attempt: grant, session, TryLock.
func (e *etcdMutex) try(ctx context.Context, key string) (locks.Lease, error) {
	start := time.Now()
	cctx, cancel := e.call(ctx)
	g, err := e.cli.Grant(cctx, e.ttl)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, ctx.Err())
		}
		// No key is made without a lease: certainly not held.
		return locks.Lease{}, fmt.Errorf("acquire %q: grant: %w: %w", key, locks.ErrNotAcquired, err)
	}
	hctx, stop := context.WithCancel(context.Background())
	sess, err := concurrency.NewSession(e.cli, concurrency.WithLease(g.ID), concurrency.WithContext(hctx))
	if err != nil {
		stop()
		e.revoke(g.ID)
		return locks.Lease{}, fmt.Errorf("acquire %q: session: %w: %w", key, locks.ErrNotAcquired, err)
	}
	m := concurrency.NewMutex(sess, etcdPrefix+key)
	cctx, cancel = e.call(ctx)
	err = m.TryLock(cctx)
	cancel()
	switch {
	case errors.Is(err, concurrency.ErrLocked):
		stop()
		e.revoke(g.ID)
		return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, locks.ErrNotAcquired)
	case err != nil:
		stop()
		e.revoke(g.ID)
		return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, ctxOr(ctx, err))
	}
	h := &etcdHold{id: g.ID, key: m.Key(), rev: m.Header().Revision, lost: locks.NewNotice(), stop: stop, done: make(chan struct{}), sess: sess, start: start}
	l := locks.Lease{Key: key, Token: m.Key(), Validity: time.Now().Add(locks.UntilRelease), Lost: h.lost}
	if e.cfg.Fencing {
		l.Fence = h.rev
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		stop()
		e.revoke(g.ID)
		return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, locks.ErrClosed)
	}
	e.holds[l.Token] = h
	e.mu.Unlock()
	go e.watch(hctx, h, time.Duration(g.TTL)*time.Second)
	return l, nil
}

// watch tells h's holder when the session ended, the lease is gone, or
// its expiry's lower bound (the start of the last answered keep-alive of
// its own + the TTL renewed to − drift) passed.
func (e *etcdMutex) watch(ctx context.Context, h *etcdHold, ttl time.Duration) {
	defer close(h.done)
	deadline := h.start.Add(ttl - e.drift)
	every := max(ttl/4, 10*time.Millisecond)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.sess.Done():
			if ctx.Err() == nil {
				h.lost.Tell(errors.New("etcd session ended: its keep-alive gave up"))
			}
			return
		case <-t.C:
		}
		now := time.Now()
		if !now.Before(deadline) {
			h.lost.Tell(errors.New("no answer bounds the lease's expiry past now"))
			return
		}
		cctx, cancel := context.WithTimeout(ctx, min(e.cfg.Timeout, deadline.Sub(now)))
		r, err := e.cli.KeepAliveOnce(cctx, h.id)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			h.lost.Tell(errors.New("the lease is gone from the members"))
			return
		case err == nil:
			if d := now.Add(time.Duration(r.TTL)*time.Second - e.drift); d.After(deadline) {
				deadline = d
			}
		}
		t.Reset(min(every, time.Until(deadline)))
	}
}

// revoke revokes lease id, best effort: an unrevoked lease expires.
func (e *etcdMutex) revoke(id clientv3.LeaseID) {
	ctx, cancel := e.call(context.Background())
	defer cancel()
	e.cli.Revoke(ctx, id)
}

// take removes and returns the hold of l.
func (e *etcdMutex) take(l locks.Lease) *etcdHold {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.holds[l.Token]
	delete(e.holds, l.Token)
	return h
}

// Release deletes the key if it is still this lease's, then revokes the
// lease.
func (e *etcdMutex) Release(ctx context.Context, l locks.Lease) error {
	h := e.take(l)
	if h == nil {
		return fmt.Errorf("release %q: %w", l.Key, locks.ErrNotHeld)
	}
	h.stop()
	<-h.done
	defer e.revoke(h.id)
	cctx, cancel := e.call(ctx)
	defer cancel()
	r, err := e.cli.Txn(cctx).If(clientv3.Compare(clientv3.CreateRevision(h.key), "=", h.rev)).Then(clientv3.OpDelete(h.key)).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("release %q: %w", l.Key, ctxOr(ctx, err))
	case !r.Succeeded:
		return fmt.Errorf("release %q: %w", l.Key, locks.ErrNotHeld)
	}
	return nil
}

// Extend sends one keep-alive of the lease; the session's own go on.
func (e *etcdMutex) Extend(ctx context.Context, l locks.Lease) (locks.Lease, error) {
	e.mu.Lock()
	h := e.holds[l.Token]
	e.mu.Unlock()
	if h == nil || l.Told() {
		return locks.Lease{}, fmt.Errorf("extend %q: %w", l.Key, locks.ErrNotHeld)
	}
	cctx, cancel := e.call(ctx)
	defer cancel()
	_, err := e.cli.KeepAliveOnce(cctx, h.id)
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		h.lost.Tell(errors.New("the lease is gone from the members"))
		return locks.Lease{}, fmt.Errorf("extend %q: %w", l.Key, locks.ErrNotHeld)
	case err != nil:
		return locks.Lease{}, fmt.Errorf("extend %q: %w", l.Key, ctxOr(ctx, err))
	}
	return l, nil
}

// ctxOr returns ctx's error when it is done, else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close ends every hold's keep-alive, revokes their leases and closes the
// client.
func (e *etcdMutex) Close() error {
	e.mu.Lock()
	e.closed = true
	holds := e.holds
	e.holds = map[string]*etcdHold{}
	e.mu.Unlock()
	for _, h := range holds {
		h.stop()
		<-h.done
		e.revoke(h.id)
	}
	return e.cli.Close()
}
