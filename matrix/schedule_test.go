package matrix

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
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
		schedule(context.Background(), jobs, healthyLate(nil), nil, func() (func() bool, bool) {
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

// TestQueueMore: the seeds More asks for after a run are queued at once,
// less those queued and not ended, to run side by side; one whose turn
// comes after the runs that ended gave the cell what it needs is dropped,
// never run nor counted.
func TestQueueMore(t *testing.T) {
	want := 3 // runs More asks for beyond those that ended (CellSideBySide at most)
	p := &Plan{specs: []Spec{{Name: "x/none"}}, o: Options{Duration: time.Second, More: func(c report.Cell) int { return max(0, want-len(c.Runs)) }}}
	q := p.newQueue([][]int64{{1}})
	ctx := context.Background()
	run := func(k int) bool {
		j, ok := q.begin(ctx, k)
		if ok {
			q.end(ctx, k, outcome{run: report.CellRun{Seed: j.seed, RunID: fmt.Sprint("run", j.seed)}}, time.Second)
		}
		return ok
	}
	if !run(0) {
		t.Fatal("the planned seed did not run")
	}
	if got := len(q.jobs); got != 3 {
		t.Fatalf("after one run of the three asked for: %d jobs, want 3 (two more queued at once)", got)
	}
	if s := []int64{q.jobs[1].seed, q.jobs[2].seed}; s[0] != 2 || s[1] != 3 {
		t.Fatalf("seeds queued %v, want [2 3]", s)
	}
	// Seed 2 starts; while it runs, nothing more is queued for what it
	// will give. Then it ends, and the cell needs no more: seed 3 is
	// dropped when its turn comes.
	j, ok := q.begin(ctx, 1)
	if !ok {
		t.Fatal("seed 2 did not start")
	}
	q.more(ctx, 0)
	if got := len(q.jobs); got != 3 {
		t.Fatalf("queued %d jobs while seed 2 ran, want 3", got)
	}
	want = 2
	q.end(ctx, 1, outcome{run: report.CellRun{Seed: j.seed, RunID: "run2"}}, time.Second)
	if run(2) {
		t.Fatal("seed 3 ran after the cell had what it needed")
	}
	c, _ := q.cell(0)
	if len(c.Runs) != 2 || len(c.NotRun) != 0 {
		t.Fatalf("cell runs %d, not run %v; want 2 runs and none listed as not run", len(c.Runs), c.NotRun)
	}
}

// TestQueueCritical: of the seeds More queued, the next handed out is
// one of the cell with the longest chain of runs left (its run's length
// times the rounds it still needs), not the one queued first, so a cell
// that needs many long runs does not wait behind every other cell's
// extra seeds and keep the gate waiting on it alone at the end; but a
// cell none of whose runs started goes before both (what it needs is
// not known yet).
func TestQueueCritical(t *testing.T) {
	needs := map[string]int{"short/none": 1, "long/none": 6, "fresh/none": 1}
	p := &Plan{
		specs: []Spec{{Name: "short/none"}, {Name: "long/none", MinDuration: 2 * time.Second}, {Name: "fresh/none"}},
		o:     Options{Duration: time.Second, More: func(c report.Cell) int { return max(0, needs[c.Name]-len(c.Runs)+1) }},
	}
	q := p.newQueue([][]int64{{1}, {1}, {1}})
	ctx := context.Background()
	take := func() int {
		if _, ok := q.take(ctx); !ok {
			t.Fatal("no job to take")
		}
		k := q.next - 1
		if _, ok := q.begin(ctx, k); !ok {
			t.Fatalf("job %d did not start", k)
		}
		return k
	}
	end := func(k int) {
		j := q.jobs[k]
		q.end(ctx, k, outcome{run: report.CellRun{Seed: j.seed, RunID: fmt.Sprint(p.specs[j.cell].Name, j.seed)}}, time.Second)
	}
	a, b := take(), take()
	if p.specs[q.jobs[a].cell].Name != "long/none" {
		t.Fatalf("first handed out %s, want long/none (the longest run first)", p.specs[q.jobs[a].cell].Name)
	}
	// short/none ends first and queues its extra seed first; long/none
	// then queues three.
	end(b)
	end(a)
	if got := len(q.jobs); got != 7 {
		t.Fatalf("%d jobs queued, want 7 (three planned, one extra of short/none, three of long/none)", got)
	}
	if got := p.specs[q.jobs[3].cell].Name; got != "short/none" {
		t.Fatalf("first extra queued is %s's, want short/none's", got)
	}
	if k := take(); p.specs[q.jobs[k].cell].Name != "fresh/none" {
		t.Fatalf("handed out %s's run before fresh/none's first", p.specs[q.jobs[k].cell].Name)
	}
	for n := 0; n < 3; n++ {
		k := take()
		if got := p.specs[q.jobs[k].cell].Name; got != "long/none" {
			t.Fatalf("extra run %d handed out is %s's, want long/none's (6 runs of 2 s left against 1 of 1 s)", n+1, got)
		}
	}
	if k := take(); p.specs[q.jobs[k].cell].Name != "short/none" {
		t.Fatalf("after long/none's three, handed out %s, want short/none's extra", p.specs[q.jobs[k].cell].Name)
	}
}

// TestTooSlow: a run runs again when it decided what its cell needs
// nothing of (whether or not the health monitor saw the machine slow),
// or when it was slow and did not show the violation its cell expects;
// never after a violation, an error of the harness, or a property the
// cell leaves open (resource possible).
func TestTooSlow(t *testing.T) {
	safe := Spec{Expect: report.ExpectAll(report.ExpectSafe)}
	violation := Spec{Expect: report.ExpectAll(report.ExpectViolation)}
	leaseOnly := Spec{Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectPossible}}
	run := func(lease, resource checker.Verdict, slow float64, err string) report.CellRun {
		return report.CellRun{Lease: lease, Resource: resource, Slow: slow, Error: err}
	}
	for _, c := range []struct {
		name string
		sp   Spec
		r    report.CellRun
		want bool
	}{
		{"undecided, healthy", safe, run(checker.Unknown, checker.Unknown, 0, ""), true},
		{"undecided, slow", safe, run(checker.Unknown, checker.Unknown, 1, ""), true},
		{"undecided by an error", safe, run(checker.Unknown, checker.Unknown, 0, "redis-server is not on the PATH"), false},
		{"safe, healthy", safe, run(checker.Valid, checker.Valid, 0, ""), false},
		{"safe, slow, safe expected", safe, run(checker.Valid, checker.Valid, 1, ""), false},
		{"safe, slow, violation expected", violation, run(checker.Valid, checker.Valid, 1, ""), true},
		{"violation, slow", violation, run(checker.Invalid, checker.Unknown, 1, ""), false},
		{"resource open, lease decided", leaseOnly, run(checker.Valid, checker.Unknown, 0, ""), false},
	} {
		if got := tooSlow(c.sp.Expect, c.r); got != c.want {
			t.Errorf("%s: tooSlow = %v, want %v", c.name, got, c.want)
		}
	}
}
