package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// TestViewNext: Next returns the changes after the cursor at once when
// there are some; waits for the next one otherwise (woken by it, not by
// a timer); returns ctx's error when none comes; and, for a follower more
// than viewLog changes behind, the oldest it keeps, the gap visible in
// the sequence numbers.
func TestViewNext(t *testing.T) {
	base := time.Now()
	v := newView(base)
	lease := locks.Lease{Key: "k", Token: "t1", Validity: base.Add(time.Second)}
	v.granted(3, 1, lease, 5, &history.Nodes{Attempt: 1, Granted: []int{0, 2, 4}})
	cs, err := v.Next(t.Context(), 0)
	if err != nil || len(cs) != 1 || cs[0].Seq != 1 || cs[0].Kind != nemesis.HoldGranted || cs[0].Hold.Client != 3 ||
		!cs[0].Hold.Reported || len(cs[0].Hold.Granted) != 3 || cs[0].Hold.ValidUntil != time.Second.Nanoseconds() {
		t.Fatalf("Next(0) = %+v, %v", cs, err)
	}

	got := make(chan []nemesis.Change, 1)
	go func() {
		cs, _ := v.Next(context.Background(), 1)
		got <- cs
	}()
	// The follower may or may not be waiting yet: either way it gets
	// the change.
	v.section(3, nemesis.HoldEntered, base.Add(10))
	if cs := <-got; len(cs) != 1 || cs[0].Seq != 2 || !cs[0].Hold.InSection || cs[0].Hold.Checked != 10 {
		t.Fatalf("a waiting Next got %+v", cs)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := v.Next(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with nothing new and a done ctx: %v", err)
	}

	// An extend of the hold: a new validity and the nodes that extended
	// it; one of another token changes nothing.
	ext := lease
	ext.Validity = base.Add(3 * time.Second)
	v.extended(3, ext, 15, &history.Nodes{Attempt: 1, Granted: []int{0, 1, 2}})
	v.extended(3, locks.Lease{Key: "k", Token: "other", Validity: base.Add(time.Hour)}, 16, nil)
	cs, err = v.Next(t.Context(), 2)
	if err != nil || len(cs) != 1 || cs[0].Kind != nemesis.HoldExtended || cs[0].Hold.ValidUntil != (3*time.Second).Nanoseconds() ||
		!cs[0].Hold.Deadline.Equal(ext.Validity) || len(cs[0].Hold.Granted) != 3 || !cs[0].Hold.InSection {
		t.Fatalf("after an extend: %+v, %v", cs, err)
	}

	for i := range viewLog + 10 {
		v.section(3, nemesis.HoldChecked, base.Add(time.Duration(20+i)))
	}
	cs, err = v.Next(t.Context(), 3)
	if err != nil || len(cs) != viewLog || cs[0].Seq != 3+10+1 || cs[len(cs)-1].Seq != 3+viewLog+10 {
		t.Fatalf("a follower %d behind got %d changes, seq %d…%d", viewLog+10, len(cs), cs[0].Seq, cs[len(cs)-1].Seq)
	}
	v.ended(3, 99)
	if holds, seq := v.Holds(); len(holds) != 0 || seq != 3+viewLog+10+1 {
		t.Fatalf("after the end: %+v, seq %d", holds, seq)
	}
	var nilView *view
	nilView.granted(1, 0, lease, 1, nil) // a nil view records nothing, and does not panic
}
