package matrix

import (
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/report"
)

func f(v float64) *float64 { return &v }

// run is a run of a cell, or a seed that never ran.
type run struct {
	report.CellRun
	NotRun bool
}

func TestAggregate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		expect  report.Expectation
		runs    []run
		outcome checker.Outcome
		matches bool
	}{
		{"safe as expected", report.ExpectSafe, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "valid", Availability: -1}}}, "safe", true},
		{"false alarm", report.ExpectSafe, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "valid"}}, {CellRun: report.CellRun{Lease: "invalid", Resource: "valid", FirstViolation: f(2)}}}, "violation", false},
		{"violation found", report.ExpectViolation, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "invalid"}}}, "violation", true},
		{"power lost", report.ExpectViolation, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "valid"}}}, "safe", false},
		{"unknown is never a pass", report.ExpectSafe, []run{{CellRun: report.CellRun{Lease: "unknown", Resource: "valid"}}}, "unknown", false},
		{"possible, not hit", report.ExpectPossible, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "valid"}}}, "safe", true},
		{"possible, hit", report.ExpectPossible, []run{{CellRun: report.CellRun{Lease: "invalid", Resource: "valid"}}}, "violation", true},
		{"possible, unknown", report.ExpectPossible, []run{{CellRun: report.CellRun{Lease: "unknown", Resource: "unknown"}}}, "unknown", false},
		{"safe, but interrupted", report.ExpectSafe, []run{{CellRun: report.CellRun{Lease: "valid", Resource: "valid", Interrupted: true}}}, "safe", false},
		{"safe, but a seed never ran", report.ExpectSafe, []run{{CellRun: report.CellRun{Seed: 1, Lease: "valid", Resource: "valid"}}, {CellRun: report.CellRun{Seed: 2}, NotRun: true}}, "safe", false},
		{"never ran", report.ExpectSafe, []run{{CellRun: report.CellRun{Seed: 1}, NotRun: true}}, "not run", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.Cell{Expect: tc.expect}
			for _, r := range tc.runs {
				if r.NotRun {
					c.NotRun = append(c.NotRun, r.Seed)
				} else {
					c.Runs = append(c.Runs, r.CellRun)
				}
			}
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

// TestAggregateProperties: each property is judged on its own: a cell
// that expects the lease safe and the resource lost matches lost updates
// alone and not an overlap of leases; a property expected only possible
// decides nothing when unknown; the properties beside count as the cell
// states them.
func TestAggregateProperties(t *testing.T) {
	pause := report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}
	maybe := report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectPossible}
	kill := report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}
	truthful := report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Answers: report.ExpectSafe}
	crowd := report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Starvation: report.ExpectViolation}
	lockstep := report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, SplitVotes: report.ExpectPossible}
	for _, tc := range []struct {
		name    string
		expect  report.Expect
		runs    []report.CellRun
		outcome checker.Outcome
		matches bool
	}{
		{"lost updates alone", pause, []report.CellRun{{Lease: "valid", Resource: "invalid"}, {Lease: "valid", Resource: "invalid"}}, "violation", true},
		{"leases overlap too", pause, []report.CellRun{{Lease: "invalid", Resource: "invalid"}, {Lease: "valid", Resource: "invalid"}}, "violation", false},
		{"no lost update", pause, []report.CellRun{{Lease: "valid", Resource: "valid"}}, "safe", false},
		{"resource not tested", maybe, []report.CellRun{{Lease: "valid", Resource: "unknown"}}, "safe", true},
		{"lease not tested", maybe, []report.CellRun{{Lease: "unknown", Resource: "valid"}}, "unknown", false},
		{"overlap, resource either way", kill, []report.CellRun{{Lease: "invalid", Resource: "valid"}, {Lease: "invalid", Resource: "invalid"}}, "violation", true},
		{"resource lost, no overlap", kill, []report.CellRun{{Lease: "valid", Resource: "invalid"}}, "violation", false},
		// The properties beside (report.Extras): a promise broken is a
		// violation; an expected one must show; a possible one decides
		// nothing either way.
		{"answers kept", truthful, []report.CellRun{{Lease: "valid", Resource: "valid", Answers: "valid"}}, "safe", true},
		{"a reply the nodes contradict", truthful, []report.CellRun{{Lease: "valid", Resource: "valid", Answers: "invalid"}}, "violation", false},
		{"starvation as expected", crowd, []report.CellRun{{Lease: "valid", Resource: "valid", Starvation: "invalid"}}, "safe", true},
		{"no client starved", crowd, []report.CellRun{{Lease: "valid", Resource: "valid", Starvation: "valid"}}, "safe", false},
		{"split votes possible, none", lockstep, []report.CellRun{{Lease: "valid", Resource: "valid", SplitVotes: "valid"}}, "safe", true},
		{"split votes possible, seen", lockstep, []report.CellRun{{Lease: "valid", Resource: "valid", SplitVotes: "invalid"}}, "safe", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.Cell{Props: tc.expect, Runs: tc.runs}
			aggregate(&c)
			if c.Outcome != tc.outcome || c.Matches != tc.matches {
				t.Fatalf("outcome %s matches %v, want %s %v (lease %v, resource %v)", c.Outcome, c.Matches, tc.outcome, tc.matches, c.LeaseRate, c.ResourceRate)
			}
			if c.Expect != tc.expect.Overall() {
				t.Fatalf("expect %s, want %s", c.Expect, tc.expect.Overall())
			}
		})
	}
}

// TestAggregateTooSlow: a run the machine was too slow for on every try
// (undecided, a slow stretch measured, run again Again times) counts
// neither way while another run decided: the cell matches on the runs
// that count and says how many it left out. Alone, or healthy, or having
// broken a promise, such a run still counts: a machine too slow
// throughout is never a pass, and a violation always stands.
func TestAggregateTooSlow(t *testing.T) {
	safe := report.ExpectAll(report.ExpectSafe)
	decided := report.CellRun{Lease: "valid", Resource: "valid", Trials: report.Trials{Count: 12}}
	slow := report.CellRun{Lease: "unknown", Resource: "unknown", Slow: 2.5, Again: Again, Trials: report.Trials{Unhealthy: 3}}
	healthy, early, broke := slow, slow, slow
	healthy.Slow = 0
	early.Again = Again - 1
	broke.Answers = "invalid"
	for _, tc := range []struct {
		name     string
		runs     []report.CellRun
		outcome  checker.Outcome
		matches  bool
		leftOut  int
		counted  int
		allRuns  int
		powerHas string
	}{
		{"one decided, one too slow", []report.CellRun{decided, slow}, "safe", true, 1, 12, 2, "1 run too slow to count"},
		{"only too slow", []report.CellRun{slow, slow}, "unknown", false, 0, 0, 2, "no trial"},
		{"undecided on a healthy machine", []report.CellRun{decided, healthy}, "unknown", false, 0, 12, 2, "12 trials"},
		{"slow, but tries left", []report.CellRun{decided, early}, "unknown", false, 0, 12, 2, "12 trials"},
		{"slow, and broke a promise", []report.CellRun{decided, broke}, "violation", false, 0, 12, 2, "12 trials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.Cell{Props: report.Expect{Lease: safe.Lease, Resource: safe.Resource, Answers: report.ExpectSafe}, Runs: tc.runs}
			aggregate(&c)
			if c.Outcome != tc.outcome || c.Matches != tc.matches || c.TooSlowRuns != tc.leftOut {
				t.Fatalf("outcome %s matches %v left out %d, want %s %v %d", c.Outcome, c.Matches, c.TooSlowRuns, tc.outcome, tc.matches, tc.leftOut)
			}
			if c.Trials != tc.counted || len(c.Runs) != tc.allRuns {
				t.Fatalf("%d trials over %d runs listed, want %d over %d (the runs left out stay listed)", c.Trials, len(c.Runs), tc.counted, tc.allRuns)
			}
			if p := c.Power(); !strings.Contains(p, tc.powerHas) {
				t.Fatalf("power %q, want it to say %q", p, tc.powerHas)
			}
		})
	}
}

// TestCellsValid: every cell of the table is a valid configuration the
// harness plans, has a source, a reason and an expectation of each
// property, its reproducing command names its lock, and names are
// unique.
func TestCellsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, sp := range Cells(false) {
		if seen[sp.Name] {
			t.Errorf("duplicate cell %s", sp.Name)
		}
		seen[sp.Name] = true
		if sp.Source == "" || sp.Why == "" || sp.Expect.Lease == "" || sp.Expect.Resource == "" {
			t.Errorf("cell %s lacks source, reason or expectation", sp.Name)
		}
		if sp.Expect.Overall() == report.ExpectPossible && sp.Missing == "" && sp.Bug == "" {
			t.Errorf("cell %s expects a property only possible and does not say what would make it measurable", sp.Name)
		}
		if (sp.Expect.Lease == report.ExpectSafe || sp.Expect.Resource == report.ExpectSafe) && sp.Promise == "" && sp.Bug == "" {
			t.Errorf("cell %s expects safety and names no promise it rests on", sp.Name)
		}
		c := sp.RunConfig(1, max(8*time.Second, sp.MinDuration))
		if _, err := harness.NewPlan(c); err != nil {
			t.Errorf("cell %s: %v", sp.Name, err)
		}
		if cmd := harness.CommandLine(c); !strings.Contains(cmd, "--lock "+sp.Lock()) {
			t.Errorf("cell %s: command %q", sp.Name, cmd)
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
			sp.Config.Keys = 1
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

// TestRunInterrupted: a matrix cancelled after its first run says which
// cells never ran, matches none of them, and returns ctx's error; its
// summaries say so too.
func TestRunInterrupted(t *testing.T) {
	var specs []Spec
	for _, sp := range Cells(true) {
		switch sp.Name {
		case "setnx/none", "setnx-get-set/none", "redlock/none":
			sp.Config.Keys = 1
			specs = append(specs, sp)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m, err := Run(ctx, specs, Options{Seeds: []int64{1, 2}, Duration: time.Second, Dir: dir, Jobs: 1, Progress: func(p Progress) {
		if p.Done == 1 {
			cancel() // after the first run, before the second starts (one at a time)
		}
	}})
	if !errors.Is(err, context.Canceled) || !m.Interrupted {
		t.Fatalf("Run: interrupted %v, %v; want context.Canceled", m.Interrupted, err)
	}
	if len(m.Cells) != 3 {
		t.Fatalf("%d cells, want all 3 listed", len(m.Cells))
	}
	first := m.Cells[0]
	if len(first.Runs) == 0 || first.Runs[0].Seed != 1 || first.Runs[0].Interrupted || first.Matches || !first.Incomplete() {
		t.Errorf("first cell %+v: want seed 1 run to its end, and no match since seed 2 did not", first)
	}
	if never := m.NeverRan(); len(never) != 2 || never[0].Name != m.Cells[1].Name || never[1].Name != m.Cells[2].Name {
		t.Errorf("never ran: %+v, want the last two cells", never)
	}
	for _, c := range m.Cells[1:] {
		if c.Outcome != report.OutcomeNotRun || c.Matches || len(c.NotRun) != 2 {
			t.Errorf("cell %s: outcome %q, matches %v, not run %v; want not run, seeds 1 and 2", c.Name, c.Outcome, c.Matches, c.NotRun)
		}
	}
	if len(m.Failed()) != 3 {
		t.Errorf("%d cells fail, want every one", len(m.Failed()))
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"3 cells: 0 match their expectation, 3 do not; the matrix was interrupted and 2 cells never ran.",
		"## Never ran", "- **" + m.Cells[2].Name + "** (seeds 1, 2)", "the matrix was interrupted"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "every cell matches") {
		t.Errorf("summary.md says every cell matches:\n%s", md)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if !strings.Contains(string(js), `"interrupted": true`) || !strings.Contains(string(js), `"not_run_seeds"`) {
		t.Errorf("summary.json does not say it was interrupted:\n%s", js)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var suites struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Cases    []struct {
				Name  string `xml:"name,attr"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || len(suites.Suites) != 1 || suites.Suites[0].Errors != 2 || suites.Suites[0].Failures != 1 {
		t.Fatalf("junit.xml: %+v, %v; want 2 errors (never ran) and 1 failure", suites, err)
	}
	if e := suites.Suites[0].Cases[2].Error; e == nil || e.Message != "never ran: the matrix was interrupted before seeds 1, 2" {
		t.Errorf("junit.xml: %s: error %+v", m.Cells[2].Name, e)
	}
}

func TestRunRejectsBadCell(t *testing.T) {
	_, err := Run(context.Background(), []Spec{testSpec("bad", "nope", report.ExpectSafe, nil)}, Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cell bad") {
		t.Fatalf("err = %v", err)
	}
}

// TestCellRunSeed: a run that failed before it recorded anything (its
// results hold no seed) is still filed under the seed the plan gave it,
// in the cell and so in summary.json: it was called seed 0.
func TestCellRunSeed(t *testing.T) {
	cr := cellRun(7, report.Results{}, "cell-seed7", errors.New("harness: the clients did not start"))
	if cr.Seed != 7 || cr.Lease != checker.Unknown {
		t.Fatalf("seed %d, lease %s; want seed 7, lease unknown", cr.Seed, cr.Lease)
	}
}
