package harness

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFreezeWaitsForAStepBeingRecorded: a freeze that returns has seen
// the record of a step the client had begun (its record returned first),
// and a step begun after it records nothing until the thaw; a step
// interrupted while frozen records nothing.
func TestFreezeWaitsForAStepBeingRecorded(t *testing.T) {
	var s staller
	ctx := context.Background()
	inRecord, release, recorded := make(chan struct{}), make(chan struct{}), make(chan time.Time, 1)
	go func() {
		_ = s.step(ctx, 1, func() error {
			close(inRecord)
			<-release
			recorded <- time.Now()
			return nil
		})
	}()
	<-inRecord
	frozen := make(chan time.Time, 1)
	var thaw func()
	go func() { thaw = s.freeze(1); frozen <- time.Now() }()
	select {
	case <-frozen:
		t.Fatal("freeze returned while a step was being recorded")
	case <-time.After(50 * time.Millisecond): // the freeze must still wait: no event to poll for
	}
	close(release)
	rec, fr := <-recorded, <-frozen
	if fr.Before(rec) {
		t.Fatalf("freeze returned at %v, before the step's record at %v", fr, rec)
	}

	// Frozen: the next step waits for the thaw, then records.
	done := make(chan struct{})
	go func() {
		_ = s.step(ctx, 1, func() error { close(done); return nil })
	}()
	select {
	case <-done:
		t.Fatal("a frozen client recorded a step")
	case <-time.After(50 * time.Millisecond):
	}
	thaw()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the step did not run after the thaw")
	}

	// Interrupted while frozen: nothing recorded.
	thaw2 := s.freeze(2)
	defer thaw2()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.step(cctx, 2, func() error { t.Error("recorded while frozen"); return nil }); !errors.Is(err, ErrInterrupted) {
		t.Errorf("step of a frozen client whose context ended: %v, want ErrInterrupted", err)
	}
}
