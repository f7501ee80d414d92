package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// defaultClockCells are the clock part's cells by default: a lock that
// counts its validity on the wall clock and one that counts it on the
// monotonic clock under jumps of the client's clock, and two locks under a
// node clock set back and slewed home.
const defaultClockCells = `^(redlock-py-wall/client-clock-hold750|redlock-py/client-clock-hold750|redlock-py/client-clock|setnx/clock-back-slew|redlock/clock-back-slew)$`

func runClock(ctx context.Context, e *benchEnv, r *results) error {
	var rows []detectRow
	for _, sp := range matrix.Cells(false) {
		if !e.o.clockCells.MatchString(sp.Name) {
			continue
		}
		rows = append(rows, seeded(sp, e.o.clockSeeds, false))
	}
	if len(rows) == 0 {
		return fmt.Errorf("no cell matches -clock-cells %s", e.o.clockCells)
	}
	r.Clock, r.ClockWall = rows, e.detect(ctx, rows, e.o.detectMax)
	return ctx.Err()
}

func (r *results) clockSection(p func(string, ...any)) {
	o := r.Opts
	p("`client-clock` runs the clients as processes under libfaketime and strobes their clock: an offset of −0.5 to −0.9 TTL and back to 0, flipped every 2–6 ms, so that backward jumps meet acquire rounds in flight. ")
	p("`redlock-py-wall` counts its elapsed time on `time.time()`, as the redlock-py library does, and over-claims by the jump; `redlock-py` counts it on the monotonic clock. ")
	p("`clock-back-slew` sets a node's clock 0.1–0.2 TTL back, holds it a TTL, then slews it home at 0.8%% (the offset rewritten every 5 ms): a heal that never jumps forward. ")
	ran, _ := ranIn(r.Clock)
	p("%d seeds a cell; a run of a cell expected to show a violation stops at its first (at most %v), the others last %v (raised to the cell's `MinDuration`: 16 s for the slew cells); %d runs at a time; %d runs in %s. ",
		o.clockSeeds, o.detectMax, o.detectDur, o.parallel, ran, r.ClockWall.Round(time.Second))
	p("The rates come with their 95%% Wilson interval; with a few seeds it is wide: `-clock-seeds 10` narrows it. A Go lock under `client-clock` is refused in one line (Go's `time.Now` reads the clock without libc, which libfaketime cannot reach).\n\n")
	p("| cell | expected | runs | lease violations (95%% Wilson) | resource violations | liveness stuck | matches | notes |\n|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Clock {
		s := row.stats()
		lo, hi := report.Wilson(s.lease, s.n)
		match := "no"
		if clockMatches(row) {
			match = "yes"
		}
		p("| `%s` | %s | %d | %d/%d [%.2f, %.2f] | %d/%d | %d/%d | %s | %s |\n", row.Spec.Name, row.Spec.Expect, s.n, s.lease, s.n, lo, hi, s.resource, s.n, s.stuck, s.n, match, s.notes(false))
	}
	p("\n")
	if i := slices.IndexFunc(r.Clock, func(row detectRow) bool { return strings.Contains(row.Spec.Name, "-wall/") }); i >= 0 {
		p("`%s`: %s.\n", r.Clock[i].Spec.Name, r.Clock[i].Spec.Why)
	}
}
