package harness_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// countingExtends counts the extends of every countingLock: a lock
// plugged in with locks.Register is driven like the registered ones.
var countingExtends atomic.Int64

type countingLock struct{ locks.Lock }

func (l countingLock) Extend(ctx context.Context, lease locks.Lease) (locks.Lease, error) {
	countingExtends.Add(1)
	return l.Lock.Extend(ctx, lease)
}

func init() {
	registerSetNX("counting-setnx", "setnx that counts its extends", func(l locks.Lock) locks.Lock { return countingLock{l} })
}

// TestRunExtend: with Extend, clients hold for several TTLs and renew
// their leases while they work; every lock's Extend is driven (the
// reference locks, a library, a lock added with locks.Register), each
// extend is recorded with its new validity, holds outlast the TTL, and a
// fault-free run of a correct lock stays valid.
func TestRunExtend(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	for _, lock := range []string{"setnx", "redlock", "redsync", "redislock", "counting-setnx"} {
		t.Run(lock, func(t *testing.T) {
			t.Parallel()
			_, evs, res, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: lock, Clients: 4, Keys: 2, Duration: 2 * time.Second, TTL: ttl, Hold: 3 * ttl, Seed: 5, Extend: true},
				Cluster:  harness.Cluster{Nodes: nodesFor(lock)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != checker.Valid || res.Resource != checker.Valid {
				t.Fatalf("a fault-free run of %s with extends: %s/%s %v", lock, res.Lease, res.Resource, res.LeaseViolations)
			}
			extends := 0
			for _, e := range evs {
				if e.F == history.Extend && e.Type == history.Ok {
					extends++
					if e.ValidUntil <= e.Time || e.Token == "" {
						t.Fatalf("extend ok without a new validity or token: %+v", e)
					}
				}
			}
			if extends == 0 {
				t.Fatalf("no extend returned ok: %v", res.Stats.Ops)
			}
			longest := int64(0)
			holds, err := checker.Holds(evs)
			if err != nil {
				t.Fatal(err)
			}
			for _, hs := range holds {
				for _, h := range hs {
					longest = max(longest, h.End-h.Start)
				}
			}
			if longest <= int64(ttl) {
				t.Fatalf("the longest hold lasted %v, not longer than the TTL of %v", time.Duration(longest), ttl)
			}
			if lock == "counting-setnx" && countingExtends.Load() == 0 {
				t.Fatal("the registered lock's Extend was never called")
			}
		})
	}
}

// TestExtendNoCheck: a client stalled past its TTL (client-pause) renews
// its lapsed lease at its next extend. setnx refuses and the lease stays
// valid; the bare PEXPIRE of setnx-extend-no-check renews the new
// holder's key, its late extend starts a hold beside the new holder's,
// and the lease is invalid.
func TestExtendNoCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock  string
		lease checker.Verdict
	}{
		{"setnx", checker.Valid},
		{"setnx-extend-no-check", checker.Invalid},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			_, _, res, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: tc.lock, Clients: 6, Keys: 1, Duration: 5 * time.Second, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Seed: 4, Extend: true},
				Faults:   harness.Faults{Nemesis: []string{"client-pause"}, NemesisInterval: time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != tc.lease {
				t.Fatalf("lease %s, want %s (late extends ok: %d)", res.Lease, tc.lease, res.Stats.LateExtends)
			}
			if tc.lease == checker.Invalid && res.Stats.LateExtends == 0 {
				t.Fatal("a lease violation without a late extend")
			}
		})
	}
}

func TestExtendConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		w    harness.Workload
		want string
	}{
		{harness.Workload{Lock: "setnx", ExtendEvery: time.Millisecond}, "only for extended leases"},
		{harness.Workload{Lock: "setnx", Extend: true, TTL: time.Second, ExtendEvery: time.Second}, "shorter than the TTL"},
		{harness.Workload{Lock: "setnx", Extend: true, ExtendEvery: -time.Second}, "must not be negative"},
		{harness.Workload{Lock: "setnx", Store: harness.StoreWriteOnly}, "needs fencing"},
		{harness.Workload{Lock: "setnx", Fencing: true, Store: "reads"}, "unknown store"},
	} {
		_, err := harness.Config{Workload: tc.w, Output: harness.Output{Dir: "x"}}.WithDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to contain %q", tc.w, err, tc.want)
		}
	}
	cfg, err := harness.Config{Workload: harness.Workload{Lock: "setnx", Extend: true, TTL: 900 * time.Millisecond}, Output: harness.Output{Dir: "x"}}.WithDefaults()
	if err != nil || cfg.ExtendEvery != 300*time.Millisecond {
		t.Fatalf("default extend every: %v, %v; want 300ms", cfg.ExtendEvery, err)
	}
}
