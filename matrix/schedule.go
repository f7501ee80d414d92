package matrix

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// outcome is what one job of a matrix left: a run, or none (never run).
type outcome struct {
	run     report.CellRun
	notRun  bool
	dropped bool   // an extra seed cut short: no part of the cell
	server  string // the run's report.Results.Server
}

// Again is how many times a run that decided nothing, or was too slow
// to show what its cell expects (tooSlow), is run again, with the same
// seed, before its cell is decided from it.
const Again = 2

// runOne runs one seed of a cell; a run that decided nothing, or that did
// not show a violation its cell expects while some of its trials were
// slow, runs again (up to Again times, tooSlow): the matrix decides from a
// healthy run, never from a slow one. A violation always stands.
func (p *Plan) runOne(ctx context.Context, sp Spec, seed int64) outcome {
	o := p.o
	d := sp.duration(o)
	hp := p.runs[report.ShardRun{Cell: sp.Name, Seed: seed}]
	if hp == nil {
		// A seed the plan did not hold: one more that More asked for.
		var err error
		if hp, err = harness.NewPlan(sp.RunConfig(seed, d)); err != nil {
			id := fmt.Sprintf("%s-seed%d", dirName(sp.Name), seed)
			return outcome{run: cellRun(seed, report.Results{Seed: seed}, id, err)}
		}
	}
	anyOf, allOf := sp.stops()
	var out outcome
	for again := 0; again <= Again; again++ {
		id := fmt.Sprintf("%s-seed%d", dirName(sp.Name), seed)
		if again > 0 {
			id = fmt.Sprintf("%s-again%d", id, again)
		}
		r, err := trial.Run(ctx, hp, filepath.Join(o.Dir, "runs", id), trial.Options{ID: id, Command: harness.CommandLine(sp.RunConfig(seed, d)),
			CheckTimeout: o.CheckTimeout, StopOn: anyOf, StopAfter: allOf, Log: o.Log})
		if err != nil && ctx.Err() != nil && r.RunID == "" {
			// Cancelled before it recorded anything to check.
			return outcome{notRun: true}
		}
		out = outcome{run: cellRun(seed, r, id, err), server: r.Server}
		out.run.Again = again
		if ctx.Err() != nil || !tooSlow(sp.Expect, out.run) {
			return out
		}
	}
	return out
}

// tooSlow reports whether run r of a cell expecting e must run again: it showed no
// violation and it decided nothing, or the machine was too slow in some
// stretch of it and it did not show what the cell expects. A run decides
// nothing on a loaded machine in ways the health monitor need not see
// (every strike of a targeted kind missed its moment, no key changed
// hands); run again with the same seed, a fault that never bites stays
// undecided, and the cell says so.
func tooSlow(e report.Expect, r report.CellRun) bool {
	switch {
	case r.Outcome() == checker.OutcomeViolation:
		return false
	case r.Outcome() == checker.OutcomeUnknown && undecided(e, r):
		return r.Error == "" // an error of the harness is no fault's miss
	}
	return r.Slow > 0 && e.Overall() == report.ExpectViolation
}

// MaxJobs is the most runs a matrix starts side by side when Options.Jobs
// is 0: three times the CPUs (the runs wait on TTLs more than they
// compute: a gate of redsync at four runs side by side kept 2 CPUs
// under half busy). The runs' health decides how many of them start.
func MaxJobs() int { return max(2, 3*runtime.NumCPU()) }

// healthyLate is how late this process's timers may fire (Monitor.Recent)
// for the matrix to start one more run side by side when Options.Jobs is
// 0: half the lateness from which a stretch of its runs is unhealthy
// (harness.HealthThreshold of the shortest TTL among specs), so that the
// runs started stay clear of it.
func healthyLate(specs []Spec) time.Duration {
	ttl := harness.Defaults().TTL
	for _, sp := range specs {
		if sp.Config.TTL > 0 {
			ttl = min(ttl, sp.Config.TTL)
		}
	}
	return harness.HealthThreshold(ttl) / 2
}

// schedule runs the tasks take hands out, jobs at once, until take has
// none left and none is running (a running task may make more). With
// jobs 0 it starts as many as the machine holds, measured: one, then one
// more each second while this process's timers keep time (late by less
// than healthy over the last second, at the 90th percentile), up to
// MaxJobs, and a run that ends is replaced at once (as many as ran
// before, while the timers keep time); a task that reports its run was
// slow (its own health) takes one off the most it starts, never below
// one, and a healthy one gives one back (to be grown into one a second
// again).
//
// probe, when not nil, is a round trip to a server of another process
// that no run touches: the machine holds one more run only while it
// answers within healthy too. Beside CPU hogs this process's timers keep
// time while every run's nodes answer late, and six runs side by side
// timed every call out.
func schedule(ctx context.Context, jobs int, healthy time.Duration, probe func(context.Context) error, take func() (func() (slow bool), bool)) {
	limit := jobs
	var mon *health.Monitor
	if jobs <= 0 {
		limit = MaxJobs()
		mon = health.Start(0, 0, time.Now())
		if probe != nil {
			mon.Probe(harness.ProbeTarget, probe)
		}
		defer mon.Stop()
	}
	var wg sync.WaitGroup
	running, peak := 0, 0 // peak: the most run at once so far
	ended := make(chan bool, MaxJobs()+jobs)
	lastStart := time.Time{}
	done := ctx.Done()
	for {
		// Start what may start now: at once in the place of a run that
		// ended, one a second beyond the most run so far.
		for running < limit {
			if mon != nil && running > 0 && ((running >= peak && time.Since(lastStart) < time.Second) || mon.Recent(time.Second) > healthy || mon.RecentProbe(time.Second) > healthy) {
				break
			}
			task, ok := take()
			if !ok {
				break
			}
			running++
			peak = max(peak, running)
			lastStart = time.Now()
			wg.Go(func() { ended <- task() })
		}
		if running == 0 {
			break // take has none left, and no running task can make more
		}
		select {
		case slow := <-ended:
			running--
			switch {
			case mon == nil:
			case slow:
				limit = max(1, min(limit, running+1)-1)
				peak = min(peak, limit)
			case limit < MaxJobs():
				limit++ // a healthy run: one more may start again
			}
		case <-time.After(250 * time.Millisecond):
		case <-done:
			done = nil // the tasks see ctx themselves; stop waking for it
		}
	}
	wg.Wait()
}

// probe starts the redis-server the schedule's probe calls (schedule),
// when the matrix decides how many runs it holds (Options.Jobs 0) and
// every cell runs its nodes as processes on this machine; it returns the
// call (nil without one) and what stops the server. A server that does
// not start leaves the schedule to its timers alone, as before.
func (p *Plan) probe(ctx context.Context) (func(context.Context) error, func()) {
	none := func() {}
	if p.o.Jobs != 0 {
		return nil, none
	}
	for _, sp := range p.specs {
		if b := sp.Config.Cluster.Backend; b != "" && b != cluster.BackendProcess {
			return nil, none
		}
	}
	c, err := harness.StartProbe(ctx, cluster.BackendProcess, filepath.Join(p.o.Dir, "probe"), nil)
	if err != nil || c == nil {
		if err != nil && p.o.Log != nil {
			fmt.Fprintf(p.o.Log, "matrix: no health probe, the timers alone decide how many runs start: %v\n", err)
		}
		return nil, none
	}
	return c.Node(0).Ping, func() { c.Close() }
}
