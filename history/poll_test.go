package history_test

import (
	"testing"
	"time"
)

// pollUntil waits, with a deadline, until cond holds.
func pollUntil(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
