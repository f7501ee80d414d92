package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/report"
)

// trendMatrix is a matrix of one night whose cells have the given
// violations out of runs, and the given redsync version.
func trendMatrix(day int, redsync string, cells map[string][2]int) report.Matrix {
	m := report.Matrix{
		Started:  time.Date(2026, 12, day, 2, 0, 0, 0, time.UTC),
		Seeds:    []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		Versions: map[string]string{"go": "go1.26.8", "github.com/go-redsync/redsync/v4": redsync},
	}
	for name, kn := range cells {
		r := report.NewRate(kn[0], kn[1])
		m.Cells = append(m.Cells, report.Cell{Name: name, Rate: &r})
	}
	return m
}

func TestTrendFlagsAMovedRate(t *testing.T) {
	a := trendMatrix(1, "v4.18.1", map[string][2]int{"redsync/client-pause": {0, 10}, "setnx/none": {0, 10}})
	b := trendMatrix(2, "v4.19.0", map[string][2]int{"redsync/client-pause": {6, 10}, "setnx/none": {1, 10}})
	// Given newest first: the trend orders them by start.
	tr := report.NewTrend([]string{"night2", "night1"}, []report.Matrix{b, a})
	if tr.Nights[0].Dir != "night1" || tr.Nights[1].Dir != "night2" {
		t.Fatalf("nights not ordered by start: %+v", tr.Nights)
	}
	reg := tr.Regressions()
	if len(reg) != 1 || reg[0].Cell != "redsync/client-pause" {
		t.Fatalf("regressions = %+v, want redsync/client-pause alone (setnx/none's 1/10 lies inside [0, 0.28])", reg)
	}
	msg := reg[0].String()
	for _, want := range []string{"redsync/client-pause", "rose", "0/10 = 0.00 [0.00, 0.28]", "6/10 = 0.60 [0.31, 0.83]", "night1", "night2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("move %q does not name %q", msg, want)
		}
	}
	if len(tr.Changes) != 1 || tr.Changes[0].Module != "github.com/go-redsync/redsync/v4" || tr.Changes[0].To != "v4.19.0" {
		t.Errorf("version changes = %+v, want redsync v4.18.1 → v4.19.0", tr.Changes)
	}
	md := string(tr.Markdown())
	for _, want := range []string{"6/10 = 0.60 [0.31, 0.83] ⚠", "**v4.19.0** (changed)", "- ⚠ redsync/client-pause"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "1/10 = 0.10 [0.02, 0.40] ⚠") {
		t.Errorf("markdown flags setnx/none, whose rate stayed inside its interval:\n%s", md)
	}
	page, err := tr.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<td class="moved">6/10 = 0.60 [0.31, 0.83]</td>`, `<td class="changed">v4.19.0</td>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestTrendSteadyRates(t *testing.T) {
	a := trendMatrix(1, "v4.18.1", map[string][2]int{"redsync/client-pause": {3, 10}, "setnx/none": {0, 10}})
	b := trendMatrix(2, "v4.18.1", map[string][2]int{"redsync/client-pause": {4, 10}, "setnx/none": {0, 10}, "new/none": {0, 10}})
	c := trendMatrix(3, "v4.18.1", map[string][2]int{"redsync/client-pause": {2, 10}, "setnx/none": {0, 3}})
	tr := report.NewTrend([]string{"a", "b", "c"}, []report.Matrix{a, b, c})
	if len(tr.Moves) != 0 || len(tr.Changes) != 0 {
		t.Fatalf("moves %+v, changes %+v: want none", tr.Moves, tr.Changes)
	}
	if len(tr.Cells) != 3 {
		t.Fatalf("cells = %+v, want the three cells of all nights", tr.Cells)
	}
	md := string(tr.Markdown())
	if strings.Contains(md, " ⚠ |") || strings.Contains(md, "- ⚠") || !strings.Contains(md, "No cell's rate left the interval") {
		t.Errorf("markdown flags a steady trend:\n%s", md)
	}
	if !strings.Contains(md, "| new/none | – | 0/10 = 0.00 [0.00, 0.28] | – |") {
		t.Errorf("a cell missing on a night is not shown as –:\n%s", md)
	}
}

func TestTrendMoveOnlyBeforeTheLastNightIsNoRegression(t *testing.T) {
	a := trendMatrix(1, "v1", map[string][2]int{"x/none": {0, 10}})
	b := trendMatrix(2, "v1", map[string][2]int{"x/none": {8, 10}})
	c := trendMatrix(3, "v1", map[string][2]int{"x/none": {7, 10}})
	tr := report.NewTrend([]string{"a", "b", "c"}, []report.Matrix{a, b, c})
	if len(tr.Moves) != 1 || tr.Moves[0].LastDir != "b" {
		t.Fatalf("moves = %+v, want the move into b", tr.Moves)
	}
	if r := tr.Regressions(); len(r) != 0 {
		t.Errorf("regressions = %+v: the last night kept the rate of the night before", r)
	}
}

// TestTrendRefusesImpossibleRates: a bundle is read from elsewhere; one
// whose rates break what a rate keeps (negative counts, more violations
// than runs, 2⁶² of them, a rate of 1e308 or NaN, an interval that does
// not follow from the counts) is refused in one line naming the bundle
// and the cell, never read as a move or as no move.
func TestTrendRefusesImpossibleRates(t *testing.T) {
	good := report.NewRate(1, 10)
	for _, tc := range []struct {
		name string
		rate report.Rate
		want string
	}{
		{"negative violations", report.Rate{Violations: -1, Runs: 10}, "-1 violations in 10 runs"},
		{"negative runs", report.Rate{Violations: 0, Runs: -5}, "-5 decided runs"},
		{"more violations than runs", report.Rate{Violations: 11, Runs: 10}, "11 violations in 10 runs"},
		{"2^62 violations", report.Rate{Violations: 1 << 62, Runs: 10}, "violations in 10 runs"},
		{"rate 1e308", func() report.Rate { r := good; r.Rate = 1e308; return r }(), "does not follow from 1 violations in 10 runs"},
		{"interval not the counts'", func() report.Rate { r := good; r.Low, r.High = 0, 1; return r }(), "does not follow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dirs []string
			for day, r := range []report.Rate{good, tc.rate} {
				m := report.Matrix{Started: time.Date(2026, 12, day+1, 2, 0, 0, 0, time.UTC), Seeds: []int64{1}}
				r := r
				m.Cells = []report.Cell{{Name: "setnx/<script>", Runs: make([]report.CellRun, 10), Rate: &r}}
				dir := t.TempDir()
				if err := report.WriteMatrix(dir, m); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, dir)
			}
			_, err := report.ReadTrend(dirs)
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), dirs[1]) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("trend: %v; want one line naming %s and %q", err, dirs[1], tc.want)
			}
		})
	}
}
