package nemesis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locktorture/locktorture/nemesis"
)

// fakeView serves a fixed log of changes, a batch per Next, and then
// waits for ctx: pure logic for WaitFor (the harness's view is tested
// against a real run in harness).
type fakeView struct{ log []nemesis.Change }

func (v *fakeView) Holds() ([]nemesis.Hold, uint64) { return nil, 0 }

func (v *fakeView) Next(ctx context.Context, after uint64) ([]nemesis.Change, error) {
	for i, c := range v.log {
		if c.Seq > after {
			return v.log[i:min(i+2, len(v.log))], nil // two at a time
		}
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWaitFor: WaitFor returns the first matching change after the
// cursor, across batches, and ctx's error when none comes.
func TestWaitFor(t *testing.T) {
	grant := func(seq uint64, nodes ...int) nemesis.Change {
		return nemesis.Change{Seq: seq, Kind: nemesis.HoldGranted, Hold: nemesis.Hold{Granted: nodes, Reported: true}}
	}
	v := &fakeView{log: []nemesis.Change{
		grant(1, 0, 1, 2, 3, 4),
		{Seq: 2, Kind: nemesis.HoldEntered},
		grant(3, 0, 1, 2, 3),
		{Seq: 4, Kind: nemesis.HoldChecked},
		grant(5, 1, 2, 4),
		grant(6, 0, 2, 3),
	}}
	bareMajority := func(c nemesis.Change) bool {
		return c.Kind == nemesis.HoldGranted && c.Hold.Reported && len(c.Hold.Granted) == 3
	}
	c, err := nemesis.WaitFor(t.Context(), v, 0, bareMajority)
	if err != nil || c.Seq != 5 {
		t.Fatalf("first grant by 3 of 5: seq %d, %v; want 5", c.Seq, err)
	}
	c, err = nemesis.WaitFor(t.Context(), v, c.Seq, bareMajority)
	if err != nil || c.Seq != 6 {
		t.Fatalf("next: seq %d, %v; want 6", c.Seq, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := nemesis.WaitFor(ctx, v, c.Seq, bareMajority); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no more grants: %v, want the context's deadline", err)
	}
}
