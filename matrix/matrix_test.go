package matrix

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/report"
)

func f(v float64) *float64 { return &v }

func TestAggregate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		expect  report.Expectation
		runs    []report.CellRun
		outcome string
		matches bool
	}{
		{"safe as expected", report.ExpectSafe, []report.CellRun{{Lease: "valid", Resource: "valid", Availability: -1}}, "safe", true},
		{"false alarm", report.ExpectSafe, []report.CellRun{{Lease: "valid", Resource: "valid"}, {Lease: "invalid", Resource: "valid", FirstViolation: f(2)}}, "violation", false},
		{"violation found", report.ExpectViolation, []report.CellRun{{Lease: "valid", Resource: "invalid"}}, "violation", true},
		{"power lost", report.ExpectViolation, []report.CellRun{{Lease: "valid", Resource: "valid"}}, "safe", false},
		{"unknown is never a pass", report.ExpectSafe, []report.CellRun{{Lease: "unknown", Resource: "valid"}}, "unknown", false},
		{"possible, not hit", report.ExpectPossible, []report.CellRun{{Lease: "valid", Resource: "valid"}}, "safe", true},
		{"possible, hit", report.ExpectPossible, []report.CellRun{{Lease: "invalid", Resource: "valid"}}, "violation", true},
		{"possible, unknown", report.ExpectPossible, []report.CellRun{{Lease: "unknown", Resource: "unknown"}}, "unknown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.Cell{Expect: tc.expect, Runs: tc.runs}
			aggregate(&c)
			if c.Outcome != tc.outcome || c.Matches != tc.matches {
				t.Fatalf("outcome %s matches %v, want %s %v", c.Outcome, c.Matches, tc.outcome, tc.matches)
			}
		})
	}
	c := report.Cell{Expect: report.ExpectViolation, Runs: []report.CellRun{
		{Lease: "invalid", FirstViolation: f(3), AcqPerSec: 10, P99Acquire: 5, Availability: -1},
		{Lease: "invalid", FirstViolation: f(1), AcqPerSec: 20, P99Acquire: 9, Availability: 0.5},
		{Lease: "valid", Resource: "valid", AcqPerSec: 30, Availability: 0.7},
	}}
	aggregate(&c)
	if c.RunsWithViolation != 2 || *c.MedianFirstViolation != 2 || c.AcqPerSec != 20 || c.P99Acquire != 9 {
		t.Fatalf("aggregates: %+v", c)
	}
	if c.Availability < 0.59 || c.Availability > 0.61 {
		t.Fatalf("availability %v: the unmeasured run must not count", c.Availability)
	}
}

// TestCellsValid: every cell of the table is a valid configuration, has
// a source and a reason, and names are unique.
func TestCellsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, sp := range Cells(false) {
		if seen[sp.Name] {
			t.Errorf("duplicate cell %s", sp.Name)
		}
		seen[sp.Name] = true
		if sp.Source == "" || sp.Why == "" || sp.Expect == "" {
			t.Errorf("cell %s lacks source, reason or expectation", sp.Name)
		}
		if _, err := sp.config(1, time.Second, "x").WithDefaults(); err != nil {
			t.Errorf("cell %s: %v", sp.Name, err)
		}
		if !strings.Contains(sp.flags(1, time.Second), "--lock "+sp.Lock) {
			t.Errorf("cell %s: flags %q", sp.Name, sp.flags(1, time.Second))
		}
	}
	if len(Cells(true)) == 0 || len(Cells(true)) >= len(Cells(false)) {
		t.Fatalf("quick profile has %d of %d cells", len(Cells(true)), len(Cells(false)))
	}
}

// TestRunSmall runs a two-cell matrix end to end: a safe lock and a
// mutant, each matching its expectation, and every output written.
func TestRunSmall(t *testing.T) {
	var specs []Spec
	for _, sp := range Cells(true) {
		if sp.Name == "setnx/none" || sp.Name == "setnx-get-set/none" {
			sp.Keys = 1
			specs = append(specs, sp)
		}
	}
	dir := t.TempDir()
	var last Progress
	m, err := Run(context.Background(), specs, Options{Seeds: []int64{1}, Duration: 2 * time.Second, Dir: dir, Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Failed()) != 0 {
		t.Fatalf("cells contradict their expectation: %+v", m.Failed())
	}
	if last.Done != 2 || last.Total != 2 {
		t.Fatalf("last progress %+v", last)
	}
	for _, name := range []string{"summary.md", "summary.json", "junit.xml", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if _, err := os.Stat(filepath.Join(dir, r.Dir, "report.html")); err != nil {
				t.Fatalf("cell %s: %v", c.Name, err)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || len(suites.Suites) != 1 || suites.Suites[0].Tests != 2 || suites.Suites[0].Failures != 0 {
		t.Fatalf("junit.xml: %+v, %v", suites, err)
	}
}

func TestRunRejectsBadCell(t *testing.T) {
	_, err := Run(context.Background(), []Spec{{Name: "bad", Lock: "nope"}}, Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cell bad") {
		t.Fatalf("err = %v", err)
	}
}
