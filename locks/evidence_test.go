package locks_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// evidenceLocks are the locks whose per-node evidence TestEvidence
// measures: the references (also with fencing, a script instead of a
// SET), the libraries through their go-redis hooks, and the mutants.
var evidenceLocks = []struct {
	lock    string
	multi   bool // on 5 nodes, else on node 0
	fencing bool
	quorum1 bool // redlock-no-quorum: one grant is enough
}{
	{lock: "setnx"},
	{lock: "setnx", fencing: true},
	{lock: "redislock"},
	{lock: "setnx-plain-del"},
	{lock: "setnx-get-set"},
	{lock: "setnx-no-ttl"},
	{lock: "setnx-extend-no-check"},
	{lock: "redlock", multi: true},
	{lock: "redlock", multi: true, fencing: true},
	{lock: "redsync", multi: true},
	{lock: "redlock-no-elapsed", multi: true},
	{lock: "redlock-no-quorum", multi: true, quorum1: true},
}

// traced runs call with an Evidence in its context and returns what the
// lock reported, summed up.
func traced(ctx context.Context, call func(context.Context) error) (locks.Nodes, error) {
	var ev locks.Evidence
	err := call(locks.WithEvidence(ctx, &ev))
	return ev.Nodes(), err
}

// wantNodes fails the test unless got is want.
func wantNodes(tb testing.TB, what string, got, want locks.Nodes) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("%s: evidence %+v, want %+v", what, got, want)
	}
}

// TestEvidence: every lock of the package reports, for each acquire,
// extend and release, exactly which nodes granted, refused or did not
// answer, against real nodes in the states that make each answer: all up;
// another token on some nodes (a quorum of them for RedLock, so that the
// partial grants are undone, on the second attempt); the key lost on one
// node under a held lease; a node killed. The library adapters see it
// through their go-redis hooks, on nodes whose script caches were flushed
// first, so that the EVAL fallback after NOSCRIPT is measured as well.
func TestEvidence(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	all := []int{0, 1, 2, 3, 4}
	build := func(t *testing.T, lock string, multi, fencing bool, tries int) locks.Lock {
		n := 1
		if multi {
			n = 5
		}
		cfg := config(c, n, 10*time.Second)
		cfg.Fencing, cfg.Tries = fencing, tries
		return newLock(t, lock, cfg)
	}
	nodesOf := func(multi bool) []int {
		if multi {
			return all
		}
		return []int{0}
	}
	for i := range 5 {
		if err := c.Node(i).Client().ScriptFlush(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("all up", func(t *testing.T) {
		for _, el := range evidenceLocks {
			t.Run(fmt.Sprintf("%s/fencing=%v", el.lock, el.fencing), func(t *testing.T) {
				l := build(t, el.lock, el.multi, el.fencing, 1)
				key := testKey(t)
				yes := locks.Nodes{Attempt: 1, Granted: nodesOf(el.multi)}
				var lease locks.Lease
				got, err := traced(t.Context(), func(ctx context.Context) (err error) { lease, err = l.Acquire(ctx, key); return err })
				if err != nil {
					t.Fatal(err)
				}
				wantNodes(t, "acquire", got, yes)
				got, err = traced(t.Context(), func(ctx context.Context) (err error) { lease, err = l.Extend(ctx, lease); return err })
				if err != nil {
					t.Fatal(err)
				}
				wantNodes(t, "extend", got, yes)
				got, err = traced(t.Context(), func(ctx context.Context) error { return l.Release(ctx, lease) })
				if err != nil {
					t.Fatal(err)
				}
				wantNodes(t, "release", got, yes)
			})
		}
	})

	t.Run("held by another", func(t *testing.T) {
		for _, el := range evidenceLocks {
			t.Run(fmt.Sprintf("%s/fencing=%v", el.lock, el.fencing), func(t *testing.T) {
				l := build(t, el.lock, el.multi, el.fencing, 2)
				key := testKey(t)
				t.Cleanup(func() { del(t, c, key) })
				held := []int{0}
				if el.multi {
					held = []int{0, 1, 2}
				}
				for _, i := range held {
					setOther(t, c, i, key, "another", 10*time.Second)
				}
				got, err := traced(t.Context(), func(ctx context.Context) error { _, err := l.Acquire(ctx, key); return err })
				switch {
				case el.quorum1:
					if err != nil {
						t.Fatalf("acquire with 2 of 5 nodes free: %v", err)
					}
					wantNodes(t, "acquire", got, locks.Nodes{Attempt: 1, Granted: []int{3, 4}, Refused: held})
				case !errors.Is(err, locks.ErrNotAcquired):
					t.Fatalf("acquire: %v, want ErrNotAcquired", err)
				case el.multi:
					wantNodes(t, "acquire", got, locks.Nodes{Attempt: 2, Granted: []int{3, 4}, Refused: held, Unlocked: []int{3, 4}})
				default:
					wantNodes(t, "acquire", got, locks.Nodes{Attempt: 2, Refused: held})
				}
			})
		}
	})

	t.Run("lost on one node", func(t *testing.T) {
		for _, el := range evidenceLocks {
			t.Run(fmt.Sprintf("%s/fencing=%v", el.lock, el.fencing), func(t *testing.T) {
				l := build(t, el.lock, el.multi, el.fencing, 1)
				key := testKey(t)
				lease := mustAcquire(t, l, key)
				lost := 0
				if el.multi {
					lost = 2
				}
				if err := c.Node(lost).Client().Del(t.Context(), key).Err(); err != nil {
					t.Fatal(err)
				}
				want := locks.Nodes{Attempt: 1, Refused: []int{lost}}
				if el.multi {
					want.Granted = []int{0, 1, 3, 4}
				}
				got, err := traced(t.Context(), func(ctx context.Context) error { _, err := l.Extend(ctx, lease); return err })
				if el.multi != (err == nil) {
					t.Errorf("extend: %v", err)
				}
				wantNodes(t, "extend", got, want)
				got, err = traced(t.Context(), func(ctx context.Context) error { return l.Release(ctx, lease) })
				if el.multi != (err == nil) {
					t.Errorf("release: %v", err)
				}
				wantNodes(t, "release", got, want)
			})
		}
	})

	t.Run("node down", func(t *testing.T) {
		// Node 3 is killed for the RedLocks, with another token on node
		// 4; then node 0, for the single-instance locks.
		kill := func(i int) {
			t.Helper()
			if err := c.Node(i).Kill(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := c.Node(i).Restart(context.WithoutCancel(t.Context())); err != nil {
					t.Errorf("restart node %d: %v", i, err)
				}
			})
		}
		t.Run("RedLocks", func(t *testing.T) {
			kill(3)
			for _, el := range evidenceLocks {
				if !el.multi {
					continue
				}
				t.Run(fmt.Sprintf("%s/fencing=%v", el.lock, el.fencing), func(t *testing.T) {
					l := build(t, el.lock, el.multi, el.fencing, 1)
					key := testKey(t)
					setOther(t, c, 4, key, "another", 10*time.Second)
					t.Cleanup(func() { c.Node(4).Client().Del(context.WithoutCancel(t.Context()), key) })
					want := locks.Nodes{Attempt: 1, Granted: []int{0, 1, 2}, Refused: []int{4}, Silent: []int{3}}
					var lease locks.Lease
					got, err := traced(t.Context(), func(ctx context.Context) (err error) { lease, err = l.Acquire(ctx, key); return err })
					if err != nil {
						t.Fatal(err)
					}
					wantNodes(t, "acquire", got, want)
					got, err = traced(t.Context(), func(ctx context.Context) error { return l.Release(ctx, lease) })
					if err != nil {
						t.Fatal(err)
					}
					wantNodes(t, "release", got, want)
				})
			}
		})
		t.Run("single", func(t *testing.T) {
			kill(0)
			for _, el := range evidenceLocks {
				if el.multi {
					continue
				}
				t.Run(fmt.Sprintf("%s/fencing=%v", el.lock, el.fencing), func(t *testing.T) {
					l := build(t, el.lock, el.multi, el.fencing, 2)
					got, err := traced(t.Context(), func(ctx context.Context) error { _, err := l.Acquire(ctx, testKey(t)); return err })
					if err == nil || errors.Is(err, locks.ErrNotAcquired) {
						t.Fatalf("acquire from a dead node: %v, want an unknown outcome", err)
					}
					// redislock returns the first error at once; setnx tries
					// again, and its clean-up finds no node either.
					want := locks.Nodes{Attempt: 2, Silent: []int{0}}
					if el.lock == "redislock" {
						want.Attempt = 1
					}
					wantNodes(t, "acquire", got, want)
				})
			}
		})
	})
}

// TestEvidenceUntraced: without an Evidence in the context the locks work
// as before, and a lock that does not report leaves an Evidence empty:
// "not reported", which Nodes.Reported tells apart from any answer.
func TestEvidenceUntraced(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1)
	l := newLock(t, "setnx", config(c, 1, 10*time.Second))
	if r, ok := l.(locks.NodeReporter); !ok || !r.ReportsNodes() {
		t.Fatalf("setnx does not say that it reports per-node evidence")
	}
	lease := mustAcquire(t, l, testKey(t))
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	var silent quietLock
	got, err := traced(t.Context(), func(ctx context.Context) error { _, err := silent.Acquire(ctx, "k"); return err })
	if err != nil || got.Reported() {
		t.Errorf("a lock that reports nothing: evidence %+v (reported %v), %v", got, got.Reported(), err)
	}
	if _, ok := any(silent).(locks.NodeReporter); ok {
		t.Errorf("quietLock implements NodeReporter")
	}
}

// quietLock grants every acquire and reports nothing.
type quietLock struct{}

func (quietLock) Acquire(_ context.Context, key string) (locks.Lease, error) {
	return locks.Lease{Key: key, Token: "t", Validity: time.Now().Add(time.Second)}, nil
}
func (quietLock) Release(context.Context, locks.Lease) error { return nil }
func (quietLock) Extend(_ context.Context, l locks.Lease) (locks.Lease, error) {
	return l, nil
}
func (quietLock) Close() error { return nil }
