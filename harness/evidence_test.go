package harness_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// quietLock is a lock that reports no per-node evidence: setnx behind a
// type with the four methods of locks.Lock only.
type quietLock struct{ locks.Lock }

func init() {
	registerSetNX("quiet-setnx", "setnx that reports no per-node evidence", func(l locks.Lock) locks.Lock { return quietLock{l} })
}

// registerSetNX registers, as name, setnx behind wrap.
func registerSetNX(name, summary string, wrap func(locks.Lock) locks.Lock) {
	if err := locks.Register(locks.Spec{Name: name, Summary: summary,
		New: func(cfg locks.Config) (locks.Lock, error) {
			l, err := locks.New("setnx", cfg)
			if err != nil {
				return nil, err
			}
			return wrap(l), nil
		}}); err != nil {
		panic(err)
	}
}

// TestRecordsEvidence: the completion of every acquire and release of a
// lock that reports per-node evidence carries it: every node of the run
// accounted for once, an ok acquire granted by a quorum; a lock that
// reports none leaves every event without it, and checks the same.
func TestRecordsEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock    string
		nodes   int
		reports bool
	}{
		{"redlock", 5, true},
		{"setnx", 1, true},
		{"quiet-setnx", 1, false},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			_, evs, res, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: tc.lock, Clients: 6, Keys: 2, Duration: time.Second, TTL: time.Second, Seed: 3},
				Cluster:  harness.Cluster{Nodes: tc.nodes},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != checker.Valid || res.Resource != checker.Valid {
				t.Fatalf("a fault-free run of %s: %s/%s", tc.lock, res.Lease, res.Resource)
			}
			completions, okAcquires := 0, 0
			for _, e := range evs {
				lockOp := e.F == history.Acquire || e.F == history.Release || e.F == history.Extend
				switch {
				case e.Nodes != nil && (!tc.reports || !lockOp || e.Type == history.Invoke):
					t.Fatalf("evidence on %+v", e)
				case !lockOp || e.Type == history.Invoke || !tc.reports:
					continue
				case e.Nodes == nil:
					t.Fatalf("no evidence on %+v", e)
				}
				completions++
				n := e.Nodes
				if all := len(n.Granted) + len(n.Refused) + len(n.Silent); all != tc.nodes || n.Attempt < 1 {
					t.Errorf("%+v: %d nodes answered in attempt %d, want all %d", e, all, n.Attempt, tc.nodes)
				}
				if e.F == history.Acquire && e.Type == history.Ok {
					okAcquires++
					if len(n.Granted) < tc.nodes/2+1 {
						t.Errorf("%+v: an ok acquire granted by %v", e, n.Granted)
					}
				}
			}
			if tc.reports && (completions == 0 || okAcquires == 0) {
				t.Fatalf("%d completions with evidence, %d ok acquires", completions, okAcquires)
			}
		})
	}
}

// TestObservesNodes: in a quiet run, the node observers record, on
// the run's clock, one "set" of node 0 for every ok acquire of the
// single-instance lock and one "del" for every ok release (and at most
// one more for each release or acquire that timed out — a timed-out
// acquire's key is cleaned up — and for each acquire whose attempt of
// unknown outcome was cleaned up), of the run's keys only; of RedLock, every node of an ok acquire's quorum set the key.
func TestObservesNodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock  string
		nodes int
	}{
		{"setnx", 1},
		{"redlock", 3},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			_, evs, res, err := run(t, context.Background(), harness.Config{
				Workload: harness.Workload{Lock: tc.lock, Clients: 4, Keys: 2, Duration: time.Second, TTL: time.Second, Seed: 5},
				Cluster:  harness.Cluster{Nodes: tc.nodes},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome() != checker.OutcomeSafe {
				t.Fatalf("a fault-free run of %s: %s/%s", tc.lock, res.Lease, res.Resource)
			}
			okAcquires, okReleases, infoAcquires, infoReleases, cleanups := 0, 0, 0, 0, 0
			quorum := make([]int, tc.nodes) // ok acquires each node granted
			seen := map[string]int{}        // "node event" → count
			for _, e := range evs {
				switch {
				case e.F == history.NodeKey:
					if e.Process != history.ObserverProcess || e.Node == nil || *e.Node >= tc.nodes || (e.Key != "k0" && e.Key != "k1") || e.Time <= 0 {
						t.Fatalf("observation %+v", e)
					}
					seen[fmt.Sprintf("%d %s", *e.Node, e.Value)]++
				case e.F == history.Acquire && e.Type == history.Ok:
					okAcquires++
					for _, n := range e.Nodes.Granted {
						quorum[n]++
					}
				case e.F == history.Release && e.Type == history.Ok:
					okReleases++
				case e.F == history.Acquire && e.Type == history.Info:
					infoAcquires++ // timed out: the key may or may not have been set
				case e.F == history.Release && e.Type == history.Info:
					infoReleases++
				}
				if e.F == history.Acquire && e.Type != history.Invoke && e.Nodes != nil && len(e.Nodes.Unlocked) > 0 {
					// An attempt whose outcome was unknown, cleaned up by
					// a compare-and-delete: it may have set the key, and
					// deleted it, whatever the acquire returned.
					cleanups++
				}
			}
			if okAcquires == 0 {
				t.Fatal("no acquire succeeded")
			}
			if tc.nodes == 1 {
				if sets, dels := seen["0 set"], seen["0 del"]; sets < okAcquires || sets > okAcquires+infoAcquires+cleanups || dels < okReleases || dels > okReleases+infoReleases+infoAcquires+cleanups {
					t.Errorf("observed %v; want %d sets (ok acquires, +%d timed out, +%d cleaned up) and %d dels (ok releases, +%d releases and %d acquires timed out, +%d cleaned up)", seen, okAcquires, infoAcquires, cleanups, okReleases, infoReleases, infoAcquires, cleanups)
				}
				return
			}
			for n, q := range quorum {
				if s := seen[fmt.Sprintf("%d set", n)]; s < q {
					t.Errorf("node %d: %d sets observed, fewer than the %d ok acquires it granted", n, s, q)
				}
			}
		})
	}
}
