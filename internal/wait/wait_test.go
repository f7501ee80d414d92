package wait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/wait"
)

func TestSleep(t *testing.T) {
	if err := wait.Sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Sleep 1ms: %v, want nil", err)
	}
	if err := wait.Sleep(t.Context(), 0); err != nil {
		t.Errorf("Sleep 0: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// An hour would fail the test by its timeout if the cancellation were
	// not seen.
	if err := wait.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v, want context.Canceled", err)
	}
	if err := wait.Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep -1s on a cancelled context: %v, want context.Canceled", err)
	}
}
