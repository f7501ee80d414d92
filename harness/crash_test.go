package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
)

// TestClientCrash: a holder that crashes never releases, and a fresh
// client (a new process) takes its place. setnx's key expires and the
// lock is live again within its TTL; setnx-no-ttl's key never expires:
// liveness stuck, with the last holder named.
func TestClientCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock string
		want checker.Liveness
	}{
		{"setnx", checker.LivenessOK},
		{"setnx-no-ttl", checker.LivenessStuck},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			const clients = 4
			_, evs, _, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: tc.lock, Clients: clients, Keys: 1, Duration: 6 * time.Second, TTL: time.Second, Seed: 2},
				Faults:   harness.Faults{Nemesis: []string{"client-crash"}, NemesisInterval: time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			// A bound of one TTL: only the quiet time between faults
			// counts, about half of the run.
			res, err := checker.Check(evs, checker.Options{LivenessBound: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != checker.Valid || res.Liveness != tc.want {
				t.Fatalf("lease %s, liveness %s (%s); want valid and %s", res.Lease, res.Liveness, res.LivenessReason, tc.want)
			}
			fresh := false
			for _, e := range evs {
				if e.Process >= clients {
					fresh = true
				}
			}
			t.Logf("%s: %s; ops %v", tc.lock, res.LivenessReason, res.Stats.Ops)
			// setnx-no-ttl may be stuck before any crash (an acquire
			// whose reply was lost, its SET landed, blocks the key for
			// ever), and then no one is left to crash.
			if !fresh && tc.want == checker.LivenessOK {
				t.Fatal("no fresh client took a crashed one's place")
			}
			if starts, stops := faultEvents(evs); starts == 0 || starts != stops {
				t.Fatalf("%d fault starts and %d stops recorded", starts, stops)
			}
			if tc.want == checker.LivenessStuck && (res.Stuck == nil || res.Stuck.LastHolder == nil) {
				t.Fatalf("stuck without its last holder: %+v", res.Stuck)
			}
		})
	}
}
