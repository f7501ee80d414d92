package locks

import (
	"testing"
	"time"
)

// TestBackoff: delays fall in [RetryDelay/2, RetryDelay), and one seed
// gives one sequence of delays.
func TestBackoff(t *testing.T) {
	const delay = 50 * time.Millisecond
	a := NewBackoff(Config{RetryDelay: delay, Seed: 7})
	b := NewBackoff(Config{RetryDelay: delay, Seed: 7})
	c := NewBackoff(Config{RetryDelay: delay, Seed: 8})
	same, differ := true, false
	for range 100 {
		da, db, dc := a.Next(), b.Next(), c.Next()
		if da < delay/2 || da >= delay {
			t.Fatalf("delay %v outside [%v, %v)", da, delay/2, delay)
		}
		same = same && da == db
		differ = differ || da != dc
	}
	if !same {
		t.Error("two generators with one seed drew different delays")
	}
	if !differ {
		t.Error("generators with seeds 7 and 8 drew the same 100 delays")
	}
}

// TestEqualBackoff: with EqualRetry every delay is RetryDelay, whatever
// the seed: clients that fail together retry together.
func TestEqualBackoff(t *testing.T) {
	const delay = 10 * time.Millisecond
	a, b := NewBackoff(Config{RetryDelay: delay, EqualRetry: true, Seed: 7}), NewBackoff(Config{RetryDelay: delay, EqualRetry: true, Seed: 8})
	for range 20 {
		if da, db := a.Next(), b.Next(); da != delay || db != delay {
			t.Fatalf("delays %v and %v, want %v", da, db, delay)
		}
	}
}
