package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// maxRun bounds one run: a violation must be found in at most 30 s.
const maxRun = 30 * time.Second

// detectRun is one run of part 3.
type detectRun struct {
	Seed     int64
	Lease    checker.Verdict
	Resource checker.Verdict
	Liveness checker.Liveness
	// First is the first violation the checker reported (lease or
	// resource), seconds from the clients' start; AfterFault the same from
	// the first fault's start; nil for none.
	First, AfterFault *float64
	Duration          time.Duration // the run's configured length
	Elapsed           time.Duration // clients' time, as the harness measured it
	Stopped           bool          // the watcher ended it early
	Skipped           bool          // not run: the budget ran out
	Err               string
}

func (r detectRun) outcome() checker.Outcome { return checker.Fold(r.Lease, r.Resource) }

// detectRow is one cell of part 3.
type detectRow struct {
	Spec  matrix.Spec
	Extra bool // not a matrix cell: a random twin
	Runs  []detectRun
}

// cellStats are a row's runs counted as the tables and targets read them.
type cellStats struct {
	n, found, unknown, errs, stoppedValid, skipped int
	// lease, resource and stuck count the runs (errors included) with a
	// lease violation, a resource violation, liveness stuck.
	lease, resource, stuck int
	share                  float64
	// medFirst and medAfter: medians of First and AfterFault over the runs
	// that found a violation, printed in med and after ("–" for none).
	medFirst, medAfter *float64
	med, after         string
	slowest            float64
	firstErr           string
}

func (row detectRow) stats() cellStats {
	s := cellStats{med: "–", after: "–"}
	var firsts, afters []float64
	for _, run := range row.Runs {
		if run.outcome() == checker.OutcomeViolation && run.First != nil {
			s.slowest = max(s.slowest, *run.First)
		}
		if run.Skipped {
			s.skipped++
			continue
		}
		s.n++
		if run.Lease == checker.Invalid {
			s.lease++
		}
		if run.Resource == checker.Invalid {
			s.resource++
		}
		if run.Liveness == checker.LivenessStuck {
			s.stuck++
		}
		switch {
		case run.Err != "":
			s.errs++
			if s.firstErr == "" {
				s.firstErr = run.Err
			}
		case run.outcome() == checker.OutcomeViolation:
			s.found++
			if run.First != nil {
				firsts = append(firsts, *run.First)
			}
			if run.AfterFault != nil {
				afters = append(afters, *run.AfterFault)
			}
		case run.outcome() == checker.OutcomeUnknown:
			s.unknown++
		case run.Stopped:
			s.stoppedValid++ // the watcher fired but the checker found nothing
		}
	}
	if len(firsts) > 0 {
		m := median(firsts)
		s.medFirst, s.med = &m, fmt.Sprintf("%.2f", m)
	}
	if len(afters) > 0 {
		m := median(afters)
		s.medAfter, s.after = &m, fmt.Sprintf("%.2f", m)
	}
	if s.n > 0 {
		s.share = float64(s.found) / float64(s.n)
	}
	return s
}

// notes are the runs a row's share leaves out, then more; with detail,
// the first error and the runs the watcher stopped that checked valid too.
func (s cellStats) notes(detail bool, more ...string) string {
	var n []string
	if s.unknown > 0 {
		n = append(n, fmt.Sprintf("%d unknown", s.unknown))
	}
	if s.errs > 0 && detail {
		e := s.firstErr
		if len(e) > 120 {
			e = e[:120] + "…"
		}
		n = append(n, fmt.Sprintf("%d errors: %s", s.errs, strings.ReplaceAll(e, "|", "/")))
	} else if s.errs > 0 {
		n = append(n, fmt.Sprintf("%d errors", s.errs))
	}
	if s.stoppedValid > 0 && detail {
		n = append(n, fmt.Sprintf("%d stopped by the watcher but valid", s.stoppedValid))
	}
	if s.skipped > 0 {
		n = append(n, fmt.Sprintf("%d skipped (budget)", s.skipped))
	}
	return strings.Join(append(n, more...), "; ")
}

// ranIn counts the runs of rows that ran and those skipped.
func ranIn(rows []detectRow) (ran, skipped int) {
	for _, row := range rows {
		s := row.stats()
		ran, skipped = ran+s.n, skipped+s.skipped
	}
	return ran, skipped
}

// twinSuffix ends the name of a random twin.
const twinSuffix = " (random twin)"

// twins returns the random twin of every expected-violation matrix cell
// with one targeted kind: the same lock, workload and seeds, with the
// kinds the targeted one names as its twin (nemesis.Kind.Twin), so
// faults fall at times drawn in advance rather than at a moment of a hold.
func twins() []matrix.Spec {
	var out []matrix.Spec
	for _, sp := range matrix.Cells(false) {
		if len(sp.Kinds()) != 1 || sp.Expect.Overall() != report.ExpectViolation || sp.Config.Restart != "" {
			continue
		}
		k, err := nemesis.Lookup(sp.Kinds()[0])
		if err != nil || len(k.Twin.Kinds) == 0 {
			continue
		}
		tw := sp
		// The targeted kind's workload, set before the kind goes.
		w := nemesis.WindowOf(sp.Kinds())
		c := &tw.Config
		c.Clients, c.Keys, c.TTL, c.NemesisInterval = cmp.Or(c.Clients, w.Clients), cmp.Or(c.Keys, w.Keys), cmp.Or(c.TTL, w.TTL), cmp.Or(c.NemesisInterval, w.Interval)
		if !c.NoHold {
			c.Hold = cmp.Or(c.Hold, w.Hold)
		}
		tw.Name, c.Nemesis, tw.Quick = sp.Name+twinSuffix, slices.Clone(k.Twin.Kinds), false
		c.Restart = cmp.Or(k.Twin.Restart, c.Restart)
		tw.Why = "the random twin of " + sp.Name + ": " + sp.Why
		out = append(out, tw)
	}
	return out
}

// detectPlan picks every expected-violation cell of cells with seeds,
// every expected-safe one with safeSeeds; with withTwins, after them, the
// random twins of the cells chosen with seeds.
func detectPlan(cells []matrix.Spec, seeds, safeSeeds int, withTwins bool) []detectRow {
	var rows []detectRow
	chosen := map[string]bool{}
	for _, sp := range cells {
		switch sp.Expect.Overall() {
		case report.ExpectViolation:
			rows = append(rows, seeded(sp, seeds, false))
		case report.ExpectSafe:
			rows = append(rows, seeded(sp, safeSeeds, false))
		}
		chosen[sp.Name] = true
	}
	for _, tw := range twins() {
		if withTwins && chosen[strings.TrimSuffix(tw.Name, twinSuffix)] {
			rows = append(rows, seeded(tw, seeds, true)) // a twin expects a violation
		}
	}
	return rows
}

// seeded is a row of sp with seeds 1 to n.
func seeded(sp matrix.Spec, n int, extra bool) detectRow {
	row := detectRow{Spec: sp, Extra: extra}
	for s := range n {
		row.Runs = append(row.Runs, detectRun{Seed: int64(s + 1)})
	}
	return row
}

// detect runs rows on -parallel workers and returns their wall time. A
// run lasts -detect-duration, or violation (stopping at the first) for an
// expected-violation cell, raised to MinDuration, at most maxRun. Runs go
// seed by seed, longest first, so that a budget that runs out cuts seeds
// evenly; one that would end within 5 s of the deadline is skipped.
func (e *benchEnv) detect(ctx context.Context, rows []detectRow, violation time.Duration) time.Duration {
	length := func(sp matrix.Spec) time.Duration {
		l := e.o.detectDur
		if sp.Expect.Overall() == report.ExpectViolation {
			l = violation
		}
		return min(max(l, sp.MinDuration), maxRun)
	}
	type job struct{ row, run int }
	var jobs []job
	for i, r := range rows {
		for j := range r.Runs {
			jobs = append(jobs, job{i, j})
		}
	}
	slices.SortStableFunc(jobs, func(a, b job) int {
		return cmp.Or(a.run-b.run, int(length(rows[b.row].Spec)-length(rows[a.row].Spec)))
	})
	next := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := 0
	start := time.Now()
	for range e.o.parallel {
		wg.Go(func() {
			for j := range next {
				sp, seed := rows[j.row].Spec, rows[j.row].Runs[j.run].Seed
				run := detectRun{Seed: seed, Skipped: true}
				if time.Until(e.deadline) >= length(sp)+5*time.Second {
					run = detectOne(ctx, e.tmp, sp, seed, length(sp))
				}
				mu.Lock()
				rows[j.row].Runs[j.run] = run
				done++
				first := "-"
				if run.First != nil {
					first = fmt.Sprintf("%.2fs", *run.First)
				}
				if !run.Skipped {
					e.logf("detect %d/%d (%v): %s seed %d: %s/%s, first %s, ran %v%s %s", done, len(jobs), time.Since(start).Round(time.Second),
						sp.Name, run.Seed, run.Lease, run.Resource, first, run.Elapsed.Round(10*time.Millisecond), map[bool]string{true: " (stopped)"}[run.Stopped], run.Err)
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	return time.Since(start)
}

// detectOne runs one cell with one seed for at most d and judges it; a
// cell expected to show a violation stops at its first of any kind.
func detectOne(ctx context.Context, tmp string, sp matrix.Spec, seed int64, d time.Duration) detectRun {
	run := detectRun{Seed: seed, Duration: d}
	dir := filepath.Join(tmp, "detect", fmt.Sprintf("%s-seed%d", strings.NewReplacer("/", "_", "+", "_", ",", "_").Replace(sp.Name), seed))
	defer os.RemoveAll(dir)
	plan, err := harness.NewPlan(sp.RunConfig(seed, d))
	if err != nil {
		run.Err = err.Error()
		return run
	}
	var stop []string
	if sp.Expect.Overall() == report.ExpectViolation {
		stop = []string{report.PropertyLease, report.PropertyResource}
	}
	r, err := trial.Run(ctx, plan, dir, trial.Options{NoHTML: true, StopOn: stop})
	run.Elapsed, run.Stopped = time.Duration(r.Elapsed*float64(time.Second)), r.Stopped
	if err != nil {
		run.Err = err.Error()
		if r.RunID == "" {
			return run
		}
	}
	res := r.Check
	run.Lease, run.Resource, run.Liveness = res.Lease, res.Resource, res.Liveness
	var first *int64
	for _, t := range []*int64{res.FirstLeaseViolation, res.FirstResourceViolation} {
		if t != nil && (first == nil || *t < *first) {
			first = t
		}
	}
	if first != nil {
		s := time.Duration(*first).Seconds()
		run.First = &s
		if w := res.Stats.FaultWindows; len(w) > 0 {
			a := time.Duration(*first - w[0].Start).Seconds()
			run.AfterFault = &a
		}
	}
	return run
}
