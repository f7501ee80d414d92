// Package wait holds the one interruptible sleep of the module, which
// locks (the back-off between acquire attempts), nemesis (a fault's active
// time, the gaps of a schedule) and harness (a client's back-off, its hold
// and a stall) share. It imports only the standard library, so that locks,
// which imports nothing else of this module, may use it.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done, and then returns ctx.Err(); it
// returns nil when d elapsed. A d ≤ 0 does not wait (nor arm a timer): it
// returns ctx.Err() at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
