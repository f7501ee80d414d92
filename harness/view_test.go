package harness_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestView follows the view of a real RedLock run, as a targeted fault
// would, from before the first client starts to the end, and holds it to
// the history: every grant it saw is an acquire ok of the same client,
// key, token, time, validity and granting nodes, and every acquire ok was
// seen; each hold goes granted → (entered → checked → left)* → ended, its
// section steps inside the history's section and its end at the release's
// invoke; no change was missed; nothing is held when the run is over.
func TestView(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu      sync.Mutex
		changes []nemesis.Change // guarded by mu
		v       nemesis.View
		done    = make(chan error, 1)
	)
	follow := func(view nemesis.View) {
		v = view
		go func() {
			holds, seq := view.Holds()
			if len(holds) != 0 || seq != 0 {
				done <- errors.New("the view holds something before the clients start")
				return
			}
			for {
				cs, err := view.Next(ctx, seq)
				if err != nil {
					done <- nil
					return
				}
				mu.Lock()
				changes = append(changes, cs...)
				mu.Unlock()
				seq = cs[len(cs)-1].Seq
			}
		}()
	}
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "redlock", Clients: 5, Keys: 2, Duration: 1500 * time.Millisecond, TTL: time.Second, Seed: 5},
		Cluster:  harness.Cluster{Nodes: 5},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	}
	sum, err := harness.Run(t.Context(), cfg, harness.WithView(follow))
	if err != nil {
		t.Fatal(err)
	}
	// The last change is in before Run returns; the follower may still be
	// on its way to it.
	_, last := v.Holds()
	testutil.Until(t, 10*time.Second, "the follower reads the last change", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) > 0 && changes[len(changes)-1].Seq == last
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs, res := checked(t, sum.HistoryPath)
	if res.Lease != checker.Valid || res.Resource != checker.Valid {
		t.Fatalf("a fault-free run: %s/%s", res.Lease, res.Resource)
	}
	if holds, _ := v.Holds(); len(holds) != 0 {
		t.Errorf("%d holds open after the run: %+v", len(holds), holds)
	}
	for i, c := range changes {
		if c.Seq != uint64(i+1) {
			t.Fatalf("change %d has seq %d: the follower missed changes", i, c.Seq)
		}
	}

	// The history's operations by client, in order.
	type hold struct {
		ok, sectionInv, sectionDone, releaseInv *history.Event
	}
	holds := map[string]*hold{} // token → its events
	var oks int
	for i := range evs {
		e := &evs[i]
		if e.Token == "" {
			continue
		}
		if holds[e.Token] == nil {
			holds[e.Token] = &hold{}
		}
		h := holds[e.Token]
		switch {
		case e.F == history.Acquire && e.Type == history.Ok:
			h.ok = e
			oks++
		case e.F == history.Section && e.Type == history.Invoke:
			h.sectionInv = e
		case e.F == history.Section:
			h.sectionDone = e
		case e.F == history.Release && e.Type == history.Invoke:
			h.releaseInv = e
		}
	}
	kinds := map[string][]nemesis.ChangeKind{}
	grants := 0
	var first *nemesis.Hold
	for _, c := range changes {
		h, ok := holds[c.Hold.Token]
		if !ok || h.ok == nil {
			t.Fatalf("change %+v: no acquire ok of its token in the history", c)
		}
		kinds[c.Hold.Token] = append(kinds[c.Hold.Token], c.Kind)
		switch c.Kind {
		case nemesis.HoldGranted:
			grants++
			e := h.ok
			if c.Hold.Client != e.Process || c.Hold.Key != e.Key || c.Time != e.Time || c.Hold.Acquired != e.Time ||
				c.Hold.ValidUntil != e.ValidUntil || c.Hold.Fence != e.Fence || c.Hold.Deadline.IsZero() {
				t.Errorf("grant %+v differs from the history's %+v", c.Hold, *e)
			}
			if e.Nodes == nil || !c.Hold.Reported || !slices.Equal(c.Hold.Granted, e.Nodes.Granted) {
				t.Errorf("grant by %v (reported %v); the history's %+v", c.Hold.Granted, c.Hold.Reported, e.Nodes)
			}
			// Deadline is ValidUntil as a time.Time: the same instants.
			if first == nil {
				first = &c.Hold
			} else if d := c.Hold.Deadline.Sub(first.Deadline).Nanoseconds(); d != c.Hold.ValidUntil-first.ValidUntil {
				t.Errorf("deadlines %v apart, validities %d ns", d, c.Hold.ValidUntil-first.ValidUntil)
			}
		case nemesis.HoldEntered, nemesis.HoldChecked, nemesis.HoldLeft:
			if h.sectionInv == nil || h.sectionDone == nil || c.Time < h.sectionInv.Time || c.Time > h.sectionDone.Time {
				t.Errorf("%s at %d outside the history's section of %s", c.Kind, c.Time, c.Hold.Token)
			}
			if c.Kind != nemesis.HoldLeft && (c.Hold.Checked != c.Time || !c.Hold.InSection) {
				t.Errorf("%s: hold %+v", c.Kind, c.Hold)
			}
		case nemesis.HoldEnded:
			if h.releaseInv == nil || c.Time != h.releaseInv.Time || c.Hold.Ended != c.Time || c.Hold.InSection {
				t.Errorf("end %+v, the history's release %+v", c.Hold, h.releaseInv)
			}
		default:
			t.Errorf("change %+v", c)
		}
	}
	if grants != oks || oks == 0 {
		t.Errorf("%d grants seen, %d acquire oks in the history", grants, oks)
	}
	want := []nemesis.ChangeKind{nemesis.HoldGranted, nemesis.HoldEntered, nemesis.HoldChecked, nemesis.HoldLeft, nemesis.HoldEnded}
	for token, ks := range kinds {
		if !slices.Equal(ks, want) {
			t.Errorf("hold %s: changes %v, want %v", token, ks, want)
		}
	}
}
