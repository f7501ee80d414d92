package main

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// defaultTargeted are the targeted part's cells by default: one
// expected-violation cell of each targeted kind (two for kill-quorum,
// whose two locks differ in how they retry) and the expected-safe
// controls of those kinds.
const defaultTargeted = `^(redlock/kill-quorum|redsync/kill-quorum|setnx/clock-holder|redlock/clock-partition|redlock/clock-majority|setnx/pause-holder|redlock-no-elapsed/delay-grant|setnx/failover-unreplicated` +
	`|redlock/kill-quorum-delayed|redlock/clock-minority|setnx\+fencing/pause-holder|setnx/delay-grant|setnx\+wait/failover-unreplicated)$`

// Targets of the targeted kinds, set when they were added: a targeted
// cell finds its violation on nearly every seed, soon after its strike,
// and its controls raise no alarm.
const (
	targetTargetedShare = 0.9
	targetTargetedAfter = 1.0 // seconds from the strike to the first violation
)

func runTargeted(ctx context.Context, e *benchEnv, r *results) error {
	cells := slices.DeleteFunc(matrix.Cells(false), func(sp matrix.Spec) bool { return !e.o.targeted.MatchString(sp.Name) })
	if len(cells) == 0 {
		return fmt.Errorf("no cell matches -targeted-cells %s", e.o.targeted)
	}
	rows := detectPlan(cells, e.o.targetedSeeds, e.o.targetedSafe, true)
	r.Targeted, r.TargetedWall = rows, e.detectRows(ctx, rows, e.o.targetedMax)
	return ctx.Err()
}

// twinList names each targeted kind's random twin (nemesis.Kind.Twin):
// "`kill-quorum` → `kill` restarting immediate, …".
func twinList() string {
	var s []string
	for _, k := range nemesis.Kinds() {
		if len(k.Twin.Kinds) == 0 {
			continue
		}
		t := fmt.Sprintf("`%s` → `%s`", k.Name, strings.Join(k.Twin.Kinds, ","))
		if k.Twin.Restart != "" {
			t += " restarting " + k.Twin.Restart
		}
		s = append(s, t)
	}
	return strings.Join(s, ", ")
}

func (r *results) targetedSection(p func(string, ...any)) {
	o := r.Opts
	p("A targeted kind strikes at a moment of a live hold (`nemesis/targeted.go`): `kill-quorum` kills a node of a bare majority that granted the hold, `clock-holder` and `clock-majority` jump the clocks of the nodes that granted it, ")
	p("`clock-partition` splits the nodes and jumps the shared one, `pause-holder` stops the holder's process, `delay-grant` returns a grant late, `failover-unreplicated` fails over before the grant reached the replica. ")
	p("Each expected-violation cell ran beside its **random twin** (`cmd/bench/detect.go`: the same lock, nodes, keys, hold, TTL and interval, the same seeds, with the random kind instead: ")
	p("%s), ", twinList())
	p("%d seeds each; each expected-safe control %d seeds. A violation run stops at its first violation (at most %v); a safe run lasts %v (both raised to the cell's `MinDuration`); %d runs at a time. ", o.targetedSeeds, o.targetedSafe, o.targetedMax, o.detectDur, o.parallel)
	ran, _ := ranIn(r.Targeted)
	p("\"After the fault\" is from the first `fault-start` (for a targeted kind its first strike) to the first violation. %d runs in %s. ", ran, r.TargetedWall.Round(time.Second))
	p("With this few seeds a share is coarse: `-targeted-seeds 10 -targeted-safe-seeds 50` measures the targets as they were set (≥ 9 of 10 seeds, no false alarm in 50 runs).\n\n")
	p("| cell | targeted: found / runs | median s after the fault | median first s | random twin: found / runs | twin: median s after the fault | twin: median first s | notes |\n|---|---|---|---|---|---|---|---|\n")
	byName := map[string]detectRow{}
	for _, row := range r.Targeted {
		byName[row.Spec.Name] = row
	}
	for _, row := range r.Targeted {
		if row.Extra || row.Spec.Expect.Overall() != report.ExpectViolation {
			continue
		}
		t := row.stats()
		tw, ok := byName[row.Spec.Name+twinSuffix]
		twS, twFound := tw.stats(), "–"
		if ok {
			twFound = fmt.Sprintf("%d / %d", twS.found, twS.n)
		}
		notes := strings.Join(t.notes(false), "; ")
		if n := twS.notes(false); len(n) > 0 {
			notes = strings.Trim(notes+"; twin: "+strings.Join(n, "; "), "; ")
		}
		p("| %s | %d / %d | %s | %s | %s | %s | %s | %s |\n", row.Spec.Name, t.found, t.n, t.after, t.med, twFound, twS.after, twS.med, notes)
	}
	p("\n| expected-safe control (targeted) | runs | false alarms | notes |\n|---|---|---|---|\n")
	for _, row := range r.Targeted {
		if row.Spec.Expect.Overall() != report.ExpectSafe {
			continue
		}
		s := row.stats()
		p("| %s | %d | %d | %s |\n", row.Spec.Name, s.n, s.found, strings.Join(s.notes(false), "; "))
	}
}

// newTargetRows are the targets rows of the gate, targeted, one-pass
// and clock parts.
func (r *results) newTargetRows() []string {
	var out []string
	if r.Gate != nil {
		alarms := 0
		for _, g := range r.Gate.Gates {
			ok := g.Exit == 0 && g.Err == "" && g.Wall <= 3*time.Minute
			out = append(out, fmt.Sprintf("| 7. `torture gate --lock %s` beside %d CPU hogs: PASS, each promise cell excluding a per-trial rate of %.0f %% | ≤ 3 min | %.0f s, %s, %d cells short | %s |",
				g.Lock, g.Hogs, 100*g.Rate, g.Wall.Seconds(), g.Status, len(g.Short), mark(ok)))
			if g.Exit == 1 {
				alarms++
			}
		}
		out = append(out, fmt.Sprintf("| 7. false alarms (a gate exiting 1) of %d gates, idle and beside the hogs | 0 | %d | %s |", len(r.Gate.Gates), alarms, mark(alarms == 0)))
		for _, m := range r.Gate.Matrix {
			if m.Jobs == 0 {
				out = append(out, fmt.Sprintf("| 7. `make torture`'s matrix at the default jobs: wall, every cell matching | ≤ 60 s | %.0f s, %d of %d matching | %s |",
					m.Wall.Seconds(), m.Matching, m.Cells, mark(m.Wall <= time.Minute && m.Matching == m.Cells && m.Cells > 0)))
			}
		}
	}
	if len(r.Targeted) > 0 {
		w := worstOf(r.Targeted, func(s cellStats) *float64 { return s.medAfter })
		out = append(out,
			fmt.Sprintf("| 8. share of seeds finding the violation, worst of %d targeted cells | ≥ %.0f%% | %.0f%% %s | %s |", w.cells, 100*targetTargetedShare, 100*w.share, paren(w.shareCell), mark(w.share >= targetTargetedShare)),
			fmt.Sprintf("| 8. median time from the strike to the first violation, worst targeted cell | ≤ %.0f s | %.2f s %s | %s |", targetTargetedAfter, w.time, paren(w.timeCell), mark(w.time <= targetTargetedAfter)),
			fmt.Sprintf("| 8. false alarms in the targeted kinds' expected-safe controls | 0 | %d of %d runs | %s |", w.falseAlarms, w.safeRuns, mark(w.falseAlarms == 0)))
	}
	if op := r.OnePass; op != nil && len(op.Rounds) > 0 {
		t, m := op.ratios()
		out = append(out,
			fmt.Sprintf("| 9. `torture run`'s check and report ÷ `torture check`, %d ops: time (median of rounds) | ≤ %.1f× | %.2f× | %s |", op.Ops, targetOnePass, median(t), mark(median(t) <= targetOnePass)),
			fmt.Sprintf("| 9. the same: peak RSS | ≤ %.1f× | %.2f× | %s |", targetOnePass, median(m), mark(median(m) <= targetOnePass)))
	}
	if len(r.Clock) > 0 {
		matched, n := 0, 0
		for _, row := range r.Clock {
			n++
			if clockMatches(row) {
				matched++
			}
		}
		out = append(out, fmt.Sprintf("| 10. clock-on-the-client and slewed-heal cells whose runs match their expectation | all | %d of %d | %s |", matched, n, mark(matched == n)))
	}
	return out
}

// worst is what a part's targets read of its rows: of the
// expected-violation cells (not Extra), how many, the least share of
// seeds that found the violation and the longest median time (time), each
// with its cell; of the expected-safe ones, the violations and the runs.
type worst struct {
	cells, falseAlarms, safeRuns int
	share, time                  float64
	shareCell, timeCell          string
}

func worstOf(rows []detectRow, time func(cellStats) *float64) worst {
	w := worst{share: 1}
	for _, row := range rows {
		s := row.stats()
		switch row.Spec.Expect.Overall() {
		case report.ExpectViolation:
			if row.Extra {
				continue
			}
			w.cells++
			if s.n > 0 && s.share < w.share {
				w.share, w.shareCell = s.share, row.Spec.Name
			}
			if t := time(s); t != nil && *t > w.time {
				w.time, w.timeCell = *t, row.Spec.Name
			}
		case report.ExpectSafe:
			w.falseAlarms += s.found
			w.safeRuns += s.n
		}
	}
	return w
}

// clockMatches says whether a clock cell's runs match its expectation
// per property: a property expected safe shows no violation, one expected
// to show a violation shows one on some seed, a lock expected live is
// never stuck; an undecided or failed run matches nothing.
func clockMatches(row detectRow) bool {
	e := row.Spec.Expect
	s := row.stats()
	ok := s.errs == 0 && s.n > 0
	check := func(want report.Expectation, got int) {
		switch want {
		case report.ExpectSafe:
			ok = ok && got == 0
		case report.ExpectViolation:
			ok = ok && got > 0
		}
	}
	check(e.Lease, s.lease)
	check(e.Resource, s.resource)
	if e.Liveness == checker.LivenessOK {
		ok = ok && s.stuck == 0
	}
	return ok
}

// newNotes explain the targets not met of the gate, targeted, one-pass
// and clock parts.
func (r *results) newNotes() []string {
	var out []string
	load := fmt.Sprintf("the load average at %s on %d CPUs", r.LoadStart, runtime.NumCPU())
	if r.Gate != nil {
		for _, g := range r.Gate.Gates {
			if g.Exit != 0 || g.Err != "" || g.Wall > 3*time.Minute {
				out = append(out, fmt.Sprintf("**Gate, %s beside %d CPU hogs exited %d (%s) in %.0f s; promise cells short of %d trials: %s.** A cell's trials come from its fault steps, a few a run: the gate runs more seeds side by side while its budget holds them, fewer when the machine is too slow for more (%s); `torture gate --lock %s --cells '^NAME$'` runs one again.",
					g.Lock, g.Hogs, g.Exit, g.Status, g.Wall.Seconds(), g.Need, strings.Join(g.Short, ", ")+errNote(g.Err), load, g.Lock))
			}
		}
	}
	for _, row := range r.Targeted {
		if row.Extra || row.Spec.Expect.Overall() != report.ExpectViolation {
			continue
		}
		if s := row.stats(); s.n > 0 && s.share < targetTargetedShare {
			out = append(out, fmt.Sprintf("**Targeted, %s found the violation in %d of %d seeds.** A strike needs a hold of the shape it aims at within its window, and the violation a second client to win the key before the holder releases; a run's `schedule.json` says whether each step struck. Measured with %s.",
				row.Spec.Name, s.found, s.n, load))
		}
	}
	if op := r.OnePass; op != nil && len(op.Rounds) > 0 {
		if t, _ := op.ratios(); median(t) > targetOnePass {
			out = append(out, fmt.Sprintf("**One pass, %s's check and report at %.2f× `torture check`'s time instead of ≤ %.1f×.** Measured with %s: the rounds' ratios (%s) move by more than the report adds; `bin/bench -only onepass` on a quiet machine settles it.",
				"`torture run`", median(t), targetOnePass, load, join("%.2f", t)))
		}
	}
	for _, row := range r.Clock {
		if !clockMatches(row) {
			out = append(out, fmt.Sprintf("**Clock, %s's runs do not match its expectation (%s).** See its row in part 10; `torture matrix --cells '^%s$' --seeds 1..10` measures it with more seeds.", row.Spec.Name, row.Spec.Expect, regexp.QuoteMeta(row.Spec.Name)))
		}
	}
	return out
}
