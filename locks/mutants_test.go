package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
)

// TestMutants runs, for every mutant, one check over the real lock it
// derives from and over the mutant: the real lock must pass it and the
// mutant must trip it, which shows both that the bug is there and that
// the check can see it.
func TestMutants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mutant, real string
		nodes        int
		// check returns the violation it saw, or nil.
		check func(t *testing.T, c *cluster.Cluster, lock string, nodes int) error
	}{
		{"setnx-plain-del", "setnx", 1, checkStaleReleaseSparesNewHolder},
		{"setnx-get-set", "setnx", 1, checkOneHolderUnderContention},
		{"setnx-no-ttl", "setnx", 1, checkExpiredLockIsFreed},
		{"setnx-extend-no-check", "setnx", 1, checkLapsedExtendRefused},
		{"redlock-no-quorum", "redlock", 5, checkMinorityCannotAcquire},
		{"redlock-no-elapsed", "redlock", 5, checkValidity},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			t.Parallel()
			c := startCluster(t, tc.nodes)
			if err := tc.check(t, c, tc.real, tc.nodes); err != nil {
				t.Errorf("the real lock %s fails the check: %v", tc.real, err)
			}
			if err := tc.check(t, c, tc.mutant, tc.nodes); err == nil {
				t.Errorf("the mutant %s passes the check: its bug went unseen", tc.mutant)
			} else {
				t.Logf("%s caught: %v", tc.mutant, err)
			}
		})
	}
}

// staleAndFresh acquires a key of lock name with a 300 ms TTL, then,
// once it lapsed, acquires it again: the first lease is stale, the second
// the key's new holder's.
func staleAndFresh(t *testing.T, c *cluster.Cluster, name string, nodes int) (l locks.Lock, key string, stale, fresh locks.Lease) {
	t.Helper()
	l = newLock(t, name, config(c, nodes, 300*time.Millisecond))
	key = testKey(t, name)
	stale = mustAcquire(t, l, key)
	fresh, err := acquireWithin(t, l, key, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: after the TTL: %v", name, err)
	}
	return l, key, stale, fresh
}

// checkStaleReleaseSparesNewHolder: a client whose lease expired releases
// it after a second client acquired the key; the second client's lock
// must survive. (setnx-plain-del deletes it.)
func checkStaleReleaseSparesNewHolder(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	l, key, stale, fresh := staleAndFresh(t, c, name, nodes)
	if err := l.Release(t.Context(), stale); err != nil && !errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("%s: release of the stale lease: %v", name, err)
	}
	if got := get(t, c, 0, key); got != fresh.Token {
		return fmt.Errorf("releasing an expired lease left %q in the new holder's key, want its token %q", got, fresh.Token)
	}
	if err := l.Release(t.Context(), fresh); err != nil {
		t.Errorf("%s: release by the new holder: %v", name, err)
	}
	return nil
}

// checkOneHolderUnderContention: many clients race to acquire one free
// key (their replies slowed by 20 ms, which widens any check-then-act
// window); at most one may win. Up to 10 rounds, each on a fresh key.
// (setnx-get-set lets several win.)
func checkOneHolderUnderContention(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	const (
		clients = 8
		rounds  = 10
	)
	defer addLatency(t, c, 0, 20*time.Millisecond)()
	l := newLock(t, name, config(c, nodes, 10*time.Second))
	for round := range rounds {
		key := testKey(t, name, round)
		leases := make([]locks.Lease, clients)
		errs := make([]error, clients)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				<-start
				leases[i], errs[i] = l.Acquire(t.Context(), key)
			})
		}
		close(start)
		wg.Wait()
		var holders []locks.Lease
		for i, err := range errs {
			switch {
			case err == nil:
				holders = append(holders, leases[i])
			case !errors.Is(err, locks.ErrNotAcquired):
				t.Fatalf("%s: acquire: %v", name, err)
			}
		}
		for _, h := range holders {
			_ = l.Release(context.WithoutCancel(t.Context()), h) // tidying up; the get-set winners overwrote each other
		}
		if len(holders) > 1 {
			return fmt.Errorf("round %d: %d of %d clients acquired %q at once", round, len(holders), clients, key)
		}
	}
	return nil
}

// checkExpiredLockIsFreed: a holder that never releases (it crashed) must
// not block the key for longer than its TTL: another client acquires
// within a second after the holder's validity ended. (setnx-no-ttl's key
// never expires.)
func checkExpiredLockIsFreed(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	const grace = time.Second
	l := newLock(t, name, config(c, nodes, 200*time.Millisecond))
	key := testKey(t, name)
	crashed := mustAcquire(t, l, key)
	defer del(t, c, key)
	next, err := acquireWithin(t, l, key, time.Until(crashed.Validity)+grace)
	if err != nil {
		pttl, perr := c.Node(0).Client().Do(t.Context(), "PTTL", key).Int64()
		return fmt.Errorf("the key of a crashed holder is still held %v after its validity ended (PTTL %d ms, %v): %w",
			grace, pttl, perr, err)
	}
	if err := l.Release(t.Context(), next); err != nil {
		t.Errorf("%s: release: %v", name, err)
	}
	return nil
}

// checkLapsedExtendRefused: a holder whose lease lapsed, after a second
// client acquired the key, tries to extend it; the extend must not
// succeed, and the key must keep the new holder's token. (The bare
// PEXPIRE of setnx-extend-no-check renews the new holder's key and says
// ok.)
func checkLapsedExtendRefused(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	l, key, stale, fresh := staleAndFresh(t, c, name, nodes)
	defer func() {
		if err := l.Release(context.WithoutCancel(t.Context()), fresh); err != nil {
			t.Errorf("%s: release by the new holder: %v", name, err)
		}
	}()
	ext, err := l.Extend(t.Context(), stale)
	switch {
	case err == nil:
		return fmt.Errorf("the extend of a lapsed lease succeeded while another client held %q (validity %v from now)", key, time.Until(ext.Validity).Round(time.Millisecond))
	case !errors.Is(err, locks.ErrNotHeld):
		t.Fatalf("%s: extend of the lapsed lease: %v", name, err)
	}
	if got := get(t, c, 0, key); got != fresh.Token {
		return fmt.Errorf("the refused extend left %q in the new holder's key, want its token %q", got, fresh.Token)
	}
	return nil
}

// checkMinorityCannotAcquire: with 4 of 5 nodes held by another token,
// Acquire must fail and leave nothing on the fifth node. (redlock-no-quorum
// takes the one node as enough.)
func checkMinorityCannotAcquire(t *testing.T, c *cluster.Cluster, name string, nodes int) error {
	t.Helper()
	l := newLock(t, name, config(c, nodes, 10*time.Second))
	key := testKey(t, name)
	const other = "another-client"
	for i := range 4 {
		setOther(t, c, i, key, other, time.Minute)
	}
	defer del(t, c, key)
	lease, err := l.Acquire(t.Context(), key)
	if err == nil {
		return fmt.Errorf("acquired %q (token on node 4 only) while 4 of 5 nodes hold another client's token", lease.Key)
	}
	if !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("%s: acquire: %v", name, err)
	}
	if got := get(t, c, 4, key); got != "" {
		return fmt.Errorf("a failed acquire left %q on node 4", got)
	}
	return nil
}
