package clients_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// TestRedLockPyEvidence: redlock-py reports its per-node evidence through
// the protocol's optional "nodes", and it is the reference redlock's in
// the same states of 5 real nodes: all granting; 3 held by another token
// (the quorum missed on both attempts, the 2 partial grants undone); node
// 4 held by another token and node 3 killed.
func TestRedLockPyEvidence(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	py := newLock(t, client{name: "redlock-py", nodes: 5}, c, 10*time.Second)
	if r, ok := py.(locks.NodeReporter); !ok || !r.ReportsNodes() {
		t.Fatal("redlock-py does not say that it reports per-node evidence")
	}
	call := func(f func(context.Context) error) (locks.Nodes, error) {
		var ev locks.Evidence
		err := f(locks.WithEvidence(t.Context(), &ev))
		return ev.Nodes(), err
	}
	want := func(what string, got, want locks.Nodes) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: evidence %+v, want %+v", what, got, want)
		}
	}
	set := func(i int, key string) {
		t.Helper()
		if err := c.Node(i).Client().Set(t.Context(), key, "another", 10*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}

	all := locks.Nodes{Attempt: 1, Granted: []int{0, 1, 2, 3, 4}}
	var lease locks.Lease
	got, err := call(func(ctx context.Context) (err error) { lease, err = py.Acquire(ctx, "up"); return err })
	if err != nil {
		t.Fatal(err)
	}
	want("acquire", got, all)
	got, err = call(func(ctx context.Context) (err error) { lease, err = py.Extend(ctx, lease); return err })
	if err != nil {
		t.Fatal(err)
	}
	want("extend", got, all)
	got, err = call(func(ctx context.Context) error { return py.Release(ctx, lease) })
	if err != nil {
		t.Fatal(err)
	}
	want("release", got, all)

	for i := range 3 {
		set(i, "held")
	}
	got, err = call(func(ctx context.Context) error { _, err := py.Acquire(ctx, "held"); return err })
	if !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("acquire with 3 of 5 nodes held: %v", err)
	}
	want("acquire, quorum held", got, locks.Nodes{Attempt: 2, Granted: []int{3, 4}, Refused: []int{0, 1, 2}, Unlocked: []int{3, 4}})

	set(4, "down")
	if err := c.Node(3).Kill(); err != nil {
		t.Fatal(err)
	}
	got, err = call(func(ctx context.Context) (err error) { lease, err = py.Acquire(ctx, "down"); return err })
	if err != nil {
		t.Fatal(err)
	}
	down := locks.Nodes{Attempt: 1, Granted: []int{0, 1, 2}, Refused: []int{4}, Silent: []int{3}}
	want("acquire, a node down", got, down)
	got, err = call(func(ctx context.Context) error { return py.Release(ctx, lease) })
	if err != nil {
		t.Fatal(err)
	}
	want("release, a node down", got, down)
}
