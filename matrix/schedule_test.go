package matrix

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSchedule: every task handed out runs once, never more than jobs at
// once, and a task that makes more (the gate's next seed) has them run
// too; with jobs 0 the machine decides, never beyond MaxJobs.
func TestSchedule(t *testing.T) {
	for _, jobs := range []int{1, 2, 0} {
		var mu sync.Mutex
		queue := []int{0, 1, 2, 3, 4}
		next, ran := 0, map[int]int{}
		var running, most atomic.Int64
		var task func(int) func() bool
		task = func(n int) func() bool {
			return func() bool {
				now := running.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				mu.Lock()
				ran[n]++
				if n < 3 { // each of the first three makes one more
					queue = append(queue, 10+n)
				}
				mu.Unlock()
				running.Add(-1)
				return n%2 == 0 // slow: fewer side by side
			}
		}
		schedule(context.Background(), jobs, healthyLate(nil), func() (func() bool, bool) {
			mu.Lock()
			defer mu.Unlock()
			if next >= len(queue) {
				return nil, false
			}
			n := queue[next]
			next++
			return task(n), true
		})
		limit := int64(jobs)
		if jobs == 0 {
			limit = int64(MaxJobs())
		}
		if len(ran) != 8 || most.Load() > limit {
			t.Errorf("jobs %d: ran %v, at most %d at once (limit %d)", jobs, ran, most.Load(), limit)
		}
		for n, c := range ran {
			if c != 1 {
				t.Errorf("jobs %d: task %d ran %d times", jobs, n, c)
			}
		}
	}
}
