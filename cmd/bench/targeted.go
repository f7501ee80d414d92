package main

import (
	"context"
	"fmt"
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

// Targets of the targeted kinds: a violation on nearly every seed, soon
// after the strike (and no alarm of a control).
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
	r.Targeted, r.TargetedWall = rows, e.detect(ctx, rows, e.o.targetedMax)
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
		notes := t.notes(false)
		if n := twS.notes(false); n != "" {
			notes = strings.Trim(notes+"; twin: "+n, "; ")
		}
		p("| %s | %d / %d | %s | %s | %s | %s | %s | %s |\n", row.Spec.Name, t.found, t.n, t.after, t.med, twFound, twS.after, twS.med, notes)
	}
	p("\n| expected-safe control (targeted) | runs | false alarms | notes |\n|---|---|---|---|\n")
	for _, row := range r.Targeted {
		if row.Spec.Expect.Overall() != report.ExpectSafe {
			continue
		}
		s := row.stats()
		p("| %s | %d | %d | %s |\n", row.Spec.Name, s.n, s.found, s.notes(false))
	}
}

// worst is what a part's targets read of its rows: of the
// expected-violation cells (not Extra), how many, the least share and the
// longest median time, each with its cell; of the expected-safe ones, the
// violations and the runs.
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
// per property: none violates a property expected safe, one violates a
// property expected violated, none is stuck if live is expected; a
// failed run matches nothing.
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
