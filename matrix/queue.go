package matrix

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/locktorture/locktorture/report"
)

// queue owns the jobs of one matrix run and what each left, shared by
// the tasks that schedule runs side by side: it hands the jobs out,
// queues the seeds Options.More asks for, tells Options.Progress where
// the matrix is, and gives each cell as its runs left it. Every field
// but p and start is under mu.
type queue struct {
	p     *Plan
	start time.Time

	mu       sync.Mutex
	jobs     []job
	outcomes []outcome // by job
	next     int       // the first job not handed out
	lastSeed []int64   // by cell: its highest seed queued
	// done of total runs have ended; left is the planned durations of
	// the runs not ended, ranFor of those ended (Progress.Left).
	done, total  int
	left, ranFor time.Duration
	// wall is the wall time of the done runs so far, the pace fits
	// measures the budget by.
	wall time.Duration
}

// job is one run a matrix run does: a seed of a cell.
type job struct {
	cell  int
	seed  int64
	extra bool // queued by More: dropped, not counted, when cut short
	// started: begin took it (to run or not); ended: its outcome is
	// recorded.
	started, ended bool
}

// newQueue queues every run of the cells' seeds, by cell (seedsOf), in
// the matrix's order; to run side by side, the longest runs first (the
// LPT rule), so that no long run starts last and keeps the matrix
// waiting alone.
func (p *Plan) newQueue(seedsOf [][]int64) *queue {
	q := &queue{p: p, start: time.Now(), lastSeed: make([]int64, len(p.specs))}
	for i, sp := range p.specs {
		for _, seed := range seedsOf[i] {
			q.jobs = append(q.jobs, job{cell: i, seed: seed})
			q.lastSeed[i] = max(q.lastSeed[i], seed)
		}
		q.total += len(seedsOf[i])
		q.left += time.Duration(len(seedsOf[i])) * sp.duration(p.o)
	}
	if p.o.Jobs != 1 {
		slices.SortStableFunc(q.jobs, func(a, b job) int {
			return cmp.Compare(ExpectedRun(p.specs[b.cell], p.o.Duration), ExpectedRun(p.specs[a.cell], p.o.Duration))
		})
	}
	q.outcomes = make([]outcome, len(q.jobs))
	return q
}

// take hands out the next job as a task for schedule, false when none
// is left (a running task may queue more).
func (q *queue) take(ctx context.Context) (func() (slow bool), bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next >= len(q.jobs) {
		return nil, false
	}
	if c := q.critical(); c != q.next {
		q.jobs[c], q.jobs[q.next] = q.jobs[q.next], q.jobs[c]
	}
	k := q.next
	q.next++
	return func() bool { return q.work(ctx, k) }, true
}

// critical returns the job not handed out that goes next: the first of
// a cell none of whose runs has started (what it needs shows only once
// one ends), or else the one whose cell has the longest chain of runs
// left: its run's length times the rounds of CellSideBySide runs it
// still needs. The gate asks for more seeds as runs end, and a cell that
// needs a dozen runs of 16 s queued behind every other cell's extra
// seeds would keep the gate waiting on it alone at the end; this is the
// LPT rule newQueue follows, over what each cell has left. Ties keep the
// queue's order; without Options.More the queue's order stands. Under mu.
func (q *queue) critical() int {
	if q.p.o.More == nil {
		return q.next
	}
	chains := map[int]time.Duration{}
	best, longest := q.next, time.Duration(-1)
	for k := q.next; k < len(q.jobs); k++ {
		i := q.jobs[k].cell
		chain, ok := chains[i]
		if !ok {
			chain = time.Duration(math.MaxInt64) // never started
			if c, _ := q.cell(i); len(c.Runs) > 0 || q.running(i) > 0 {
				left := max(q.p.o.More(c)-q.running(i), 1)
				rounds := (left + CellSideBySide - 1) / CellSideBySide
				chain = time.Duration(rounds) * q.p.specs[i].duration(q.p.o)
			}
			chains[i] = chain
		}
		if chain > longest {
			best, longest = k, chain
		}
	}
	return best
}

// work runs job k and reports whether the machine was too slow for it
// (so that fewer run side by side).
func (q *queue) work(ctx context.Context, k int) (slow bool) {
	j, ok := q.begin(ctx, k)
	if !ok {
		return false
	}
	began := time.Now()
	out := q.p.runOne(ctx, q.p.specs[j.cell], j.seed)
	return q.end(ctx, k, out, time.Since(began))
}

// begin reports whether job k is to run, and tells Progress that it
// starts; a job that is not to run is recorded as never run.
func (q *queue) begin(ctx context.Context, k int) (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs[k].started = true
	j := q.jobs[k]
	sp := q.p.specs[j.cell]
	switch {
	case j.extra && (!q.fits(sp) || q.needs(j.cell) < q.running(j.cell)):
		// Asked for beyond the plan, but it waited its turn past the
		// point where it could still end within the budget, or the
		// runs that ended meanwhile (with those still running) gave
		// the cell what it needed.
		q.outcomes[k] = outcome{notRun: true, dropped: true}
		q.jobs[k].ended = true
		return j, false
	case ctx.Err() != nil:
		// Interrupted: the seeds left are listed as never run, so no
		// summary can read as a full matrix.
		q.outcomes[k] = outcome{notRun: true, dropped: j.extra}
		q.jobs[k].ended = true
		return j, false
	}
	if q.p.o.Progress != nil {
		elapsed := time.Since(q.start)
		est := q.left
		if q.ranFor > 0 {
			// As fast as the runs so far went, side by side and
			// with their start and check: elapsed per second run.
			est = time.Duration(float64(q.left) * elapsed.Seconds() / q.ranFor.Seconds())
		}
		q.p.o.Progress(Progress{Done: q.done, Total: q.total, Cell: sp.Name, Seed: j.seed, Elapsed: elapsed, Left: est})
	}
	return j, true
}

// end records out, the outcome of job k that took as long as took, asks
// for the cell's next seed (more), and reports whether the machine was
// too slow for the run.
func (q *queue) end(ctx context.Context, k int, out outcome, took time.Duration) (slow bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.jobs[k]
	d := q.p.specs[j.cell].duration(q.p.o)
	q.left -= d
	q.ranFor += d
	q.done++
	q.wall += took
	if j.extra && (out.notRun || out.run.Interrupted) {
		// A seed asked for beyond the plan and cut short by the end
		// of the time: as if never asked for.
		out = outcome{dropped: true}
	}
	q.outcomes[k] = out
	q.jobs[k].ended = true
	if !out.notRun {
		q.more(ctx, j.cell)
	}
	return out.run.Slow > 0 || out.run.Again > 0
}

// fits reports whether one more run of sp, started now, ends within the
// budget as the runs so far took (on a loaded machine, side by side,
// longer than expected); under mu.
func (q *queue) fits(sp Spec) bool {
	o := q.p.o
	took := ExpectedRun(sp, o.Duration)
	if q.done > 0 {
		took = max(took, q.wall/time.Duration(q.done))
	}
	return o.Budget <= 0 || time.Since(q.start)+took <= o.Budget
}

// more queues the seeds of cell i that Options.More asks for beyond
// those queued and not ended, side by side up to CellSideBySide, as far
// as the budget leaves room for them; under mu.
func (q *queue) more(ctx context.Context, i int) {
	o := q.p.o
	if o.More == nil || ctx.Err() != nil {
		return
	}
	sp := q.p.specs[i]
	for n := min(q.needs(i), CellSideBySide) - q.pending(i); n > 0 && q.fits(sp); n-- {
		q.lastSeed[i]++
		q.jobs = append(q.jobs, job{cell: i, seed: q.lastSeed[i], extra: true})
		q.outcomes = append(q.outcomes, outcome{})
		q.total++
		q.left += sp.duration(o)
	}
}

// CellSideBySide is the most runs of one cell that More's seeds keep
// queued or running at once: the runs of a cell load the machine alike
// (six runs of redsync under client-pause side by side, each hammering
// its nodes with 25 ms calls, timed every acquire out on 2 idle cores),
// and a cell that needs more gets them as these end.
const CellSideBySide = 3

// needs is how many more runs Options.More asks cell i for, as its ended
// runs show it (0 without More); under mu.
func (q *queue) needs(i int) int {
	if q.p.o.More == nil {
		return 0
	}
	cell, _ := q.cell(i)
	return q.p.o.More(cell)
}

// running is how many runs of cell i have started and not ended; under
// mu.
func (q *queue) running(i int) int {
	n := 0
	for _, j := range q.jobs {
		if j.cell == i && j.started && !j.ended {
			n++
		}
	}
	return n
}

// pending is how many runs of cell i are queued or running and have not
// ended; under mu.
func (q *queue) pending(i int) int {
	n := 0
	for _, j := range q.jobs {
		if j.cell == i && !j.ended {
			n++
		}
	}
	return n
}

// cell is cell i as its jobs have left it so far, judged (aggregate):
// the runs that ended and the seeds never run, with the server each of
// its runs that knew one reported, in the order of the runs.
func (q *queue) cell(i int) (c report.Cell, servers []string) {
	c = q.p.specs[i].cell()
	for k, j := range q.jobs {
		switch out := q.outcomes[k]; {
		case j.cell != i || out.dropped:
		case out.notRun:
			c.NotRun = append(c.NotRun, j.seed)
		case out.run.RunID != "": // ended
			c.Runs = append(c.Runs, out.run)
			if out.server != "" {
				servers = append(servers, out.server)
			}
		}
	}
	aggregate(&c)
	return c, servers
}
