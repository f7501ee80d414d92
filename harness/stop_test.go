package harness_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
)

// TestWithStop: a watcher that says stop ends the run long before its
// Duration, like the Duration would: the history is complete and checks.
func TestWithStop(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "setnx", Clients: 4, Keys: 1, Duration: time.Minute, Seed: 2},
		Faults:   harness.Faults{Nemesis: []string{"kill"}, NemesisInterval: 500 * time.Millisecond},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	}
	var seen atomic.Int64
	sum, err := harness.Run(context.Background(), cfg, harness.WithStop(func(e history.Event) bool {
		// Stop after some releases, with a fault under way or not.
		return e.F == history.Release && e.Type == history.Ok && seen.Add(1) >= 20
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Stopped || sum.Interrupted {
		t.Fatalf("stopped %v, interrupted %v; want true, false", sum.Stopped, sum.Interrupted)
	}
	if sum.Elapsed > 30*time.Second {
		t.Fatalf("the run went on for %v after the stop", sum.Elapsed)
	}
	_, res := checked(t, sum.HistoryPath)
	if res.Stats.Ops["release"]["ok"] < 20 {
		t.Fatalf("%d releases recorded, the watcher saw 20", res.Stats.Ops["release"]["ok"])
	}
	// Every client's last operation completed: a stop ends cycles as
	// the Duration does.
	if n := res.Stats.Ops["acquire"]["unfinished"] + res.Stats.Ops["release"]["unfinished"] + res.Stats.Ops["section"]["unfinished"]; n != 0 {
		t.Fatalf("%d operations left unfinished: %v", n, res.Stats.Ops)
	}
}

// TestKeyPerClientNoHold: the throughput workload — each client on its own
// key, no hold — never contends and checks valid.
func TestKeyPerClientNoHold(t *testing.T) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "setnx", Clients: 5, KeyPerClient: true, NoHold: true, Duration: time.Second, Seed: 3},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	}
	sum, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Config.Keys != 5 || sum.Config.Hold != 0 {
		t.Fatalf("config after defaults: keys %d, hold %v; want 5, 0", sum.Config.Keys, sum.Config.Hold)
	}
	evs, err := history.ReadFile(sum.HistoryPath)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, e := range evs {
		if e.F == history.NodeKey {
			continue // a node's observation, not a client's
		}
		if e.Key != fmt.Sprintf("k%d", e.Process) {
			t.Fatalf("process %d used key %q", e.Process, e.Key)
		}
		// No acquire is refused for another client's sake. One may still
		// end fail or info without contention: cancelled by the end of the
		// run, or, on a loaded machine, a SET that timed out (per-node
		// timeout TTL/10) and landed, so that the retry found the key
		// taken by the client's own token (see setnx's Acquire).
		if e.F == history.Acquire && e.Type != history.Invoke && e.Type != history.Ok {
			failed++
		}
	}
	if failed > 5 {
		t.Errorf("%d acquires on uncontended keys did not succeed", failed)
	}
	res, err := checker.Check(evs, checker.Options{})
	if err != nil || !res.Valid() || res.Stats.AcquireOK < 50 {
		t.Fatalf("result %s/%s with %d acquires, %v", res.Lease, res.Resource, res.Stats.AcquireOK, err)
	}
}
