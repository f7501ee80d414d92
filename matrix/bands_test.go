package matrix

import (
	"testing"

	"github.com/locktorture/locktorture/report"
)

// TestBands: every band names a violation cell of the table and states
// a least rate in (0, 1] with its reason; every cell but a possible one
// can be contradicted by one seed (the release gate) and by three (make
// matrix).
func TestBands(t *testing.T) {
	byName := map[string]Spec{}
	for _, sp := range Cells(false) {
		byName[sp.Name] = sp
	}
	for name, b := range bands {
		sp, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("band for %s: no such cell", name)
		case sp.Expect != report.ExpectViolation:
			t.Errorf("band for %s: the cell expects %s; only a violation takes a least rate", name, sp.Expect)
		case b.Min <= 0 || b.Min > 1 || b.Max != 1 || b.Why == "":
			t.Errorf("band for %s: %+v, want 0 < Min ≤ 1, Max 1 and a reason", name, b)
		}
	}
	for _, sp := range Cells(false) {
		if sp.Expect == report.ExpectPossible {
			continue
		}
		for _, n := range []int{1, 3} {
			if len(sp.band().Contradicting(n)) == 0 {
				t.Errorf("%s: no outcome of %d seeds would contradict band %s", sp.Name, n, sp.band())
			}
		}
	}
}

// TestAggregateRates: the cell's rate, interval and band, and judging by
// the band.
func TestAggregateRates(t *testing.T) {
	runs := func(outcomes ...string) []report.CellRun {
		var out []report.CellRun
		for _, o := range outcomes {
			switch o {
			case "v":
				out = append(out, report.CellRun{Lease: "invalid", Resource: "valid"})
			case "s":
				out = append(out, report.CellRun{Lease: "valid", Resource: "valid"})
			case "u":
				out = append(out, report.CellRun{Lease: "unknown", Resource: "valid"})
			}
		}
		return out
	}
	forced := report.DefaultBand(report.ExpectViolation)
	random := report.Band{Min: 0.6, Max: 1}
	for _, tc := range []struct {
		name    string
		expect  report.Expectation
		band    *report.Band
		runs    []report.CellRun
		matches bool
		by      string
	}{
		{"forced, 3 of 3", report.ExpectViolation, &forced, runs("v", "v", "v"), true, "0 or 1 of 3 would"},
		{"forced, 1 of 3: below the band", report.ExpectViolation, &forced, runs("v", "s", "s"), false, "0 or 1 of 3 would"},
		{"random, 1 of 3: inside the interval", report.ExpectViolation, &random, runs("v", "s", "s"), true, "0 of 3 would"},
		{"random, 0 of 3", report.ExpectViolation, &random, runs("s", "s", "s"), false, "0 of 3 would"},
		{"no band: the expectation's default", report.ExpectViolation, nil, runs("v"), true, "0 of 1 would"},
		{"one violation and two unknown: one decided run", report.ExpectViolation, &forced, runs("v", "u", "u"), true, "0 or 1 of 3 would"},
		{"safe, one violation in three", report.ExpectSafe, nil, runs("s", "v", "s"), false, "1–3 of 3 would"},
		{"possible, never contradicted", report.ExpectPossible, nil, runs("s", "s", "v"), true, "no count of 3 would: any rate fits (only runs all undecided would)"},
		{"possible, all unknown", report.ExpectPossible, nil, runs("u", "u"), false, "no count of 2 would: any rate fits (only runs all undecided would)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.Cell{Expect: tc.expect, Band: tc.band, Runs: tc.runs}
			aggregate(&c)
			if c.Matches != tc.matches || c.ContradictedBy != tc.by {
				t.Fatalf("matches %v, contradicted by %q; want %v, %q (rate %s, band %s)", c.Matches, c.ContradictedBy, tc.matches, tc.by, c.Rate, c.Band)
			}
			k, n := c.RunsWithViolation, len(c.Runs)-c.Unknown
			if c.Rate == nil || *c.Rate != report.NewRate(k, n) || c.Band == nil {
				t.Fatalf("rate %v band %v, want the rate of %d of %d and a band", c.Rate, c.Band, k, n)
			}
		})
	}
}
