package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// Defaults of Options.
const (
	// DefaultBudget is the time a gate plans to fit in.
	DefaultBudget = 5 * time.Minute
	// MinDuration is the shortest run the budget may scale a run down to;
	// below it, seeds are dropped instead.
	MinDuration = 5 * time.Second
)

// DefaultJobs is how many runs a gate runs side by side by default: 0,
// as many as the machine holds (matrix.Options.Jobs).
const DefaultJobs = 0

// DefaultSeeds are the seeds a gate runs every cell with first; a cell
// that needs more trials for the power target, or has not yet shown the
// violation its class expects, gets the next seeds (see Options.Rate).
var DefaultSeeds = []int64{1}

// DefaultRate is the per-trial violation rate a gate's promise cells must
// exclude at 95 % (Options.Rate): 11 trials without a violation.
const DefaultRate = 0.25

// MaxSeeds is the most seeds a gate runs a cell with in search of its
// power target; ExpectSeeds the most it runs a cell with until it shows
// the violation its class expects.
const (
	MaxSeeds    = 16
	ExpectSeeds = 3
)

// Errors of Run, by exit status (Main): ErrBroken is 1, every other 2.
var (
	// ErrBroken: the lock broke a promise it declared.
	ErrBroken = errors.New("gate: the lock broke a promise it declared")
	// ErrInconclusive: no promise broke, but some cell could not be
	// judged (unknown verdict, an error, an interruption) or did not show
	// the violation the literature expects of the lock's class; never a
	// pass.
	ErrInconclusive = errors.New("gate: inconclusive")
	// ErrBudget: the budget cannot hold one seed of every cell at
	// MinDuration.
	ErrBudget = errors.New("gate: budget too small")
)

// Options configure a gate.
type Options struct {
	// Lock is the registered lock's name (locks.Lookup), or
	// locks.ExecPrefix and a command for a client process that declares
	// its promises in its hello. Required.
	Lock string
	// Seeds every cell runs with. Default DefaultSeeds. The budget may
	// drop the last ones (Result.Scaled says so).
	Seeds []int64
	// Duration of every run (raised to a cell's MinDuration). Default
	// matrix.DefaultDuration. The budget may shorten it, not below
	// MinDuration.
	Duration time.Duration
	// Budget is the time the gate plans its runs to take, by
	// matrix.ExpectedRun. Default DefaultBudget. The runs are cut short
	// (and the gate is inconclusive) at 1.5 × Budget.
	Budget time.Duration
	// Cells, when set, keeps only the cells whose name it matches (a
	// regular expression): for a quick look, never for a release (the
	// kinds left out are listed as not run). Default every cell.
	Cells string
	// Dir receives the runs and the summaries. Required.
	Dir string
	// CheckTimeout bounds porcupine per model. Default
	// checker.DefaultTimeout.
	CheckTimeout time.Duration
	// Command is recorded in the summaries.
	Command string
	// Progress and Log are matrix.Options'.
	Progress func(matrix.Progress)
	Log      io.Writer
	// Jobs is how many runs go side by side (matrix.Options.Jobs).
	// Default 0: as many as the machine holds.
	Jobs int
	// Rate is the per-trial violation rate every promise cell must
	// exclude at 95 % for the gate to pass: such a cell runs more seeds,
	// within the budget, until its trials (report.Trials) number
	// report.TrialsFor(Rate); one that cannot makes the gate
	// inconclusive. Default DefaultRate.
	Rate float64
}

// Result is a gate's outcome.
type Result struct {
	Lock     string         `json:"lock"`
	Promises locks.Promises `json:"promises"`
	// Traits are the promises as the table's rows select them.
	Traits []string `json:"traits"`
	// Seeds and Duration are what ran, after the budget.
	Seeds    []int64 `json:"seeds"`
	Duration string  `json:"duration"`
	Budget   string  `json:"budget"`
	// Jobs is how many runs went side by side (0: as many as the machine
	// held).
	Jobs int `json:"jobs"`
	// Rate is the per-trial violation rate every promise cell had to
	// exclude at 95 %; Need the trials without a violation that do.
	Rate float64 `json:"rate"`
	Need int     `json:"trials_needed"`
	// Expected is the time the runs were expected to take, in seconds.
	Expected float64 `json:"expected_seconds"`
	// Scaled says how the budget shortened the runs or dropped seeds; ""
	// when everything fit.
	Scaled string `json:"scaled,omitempty"`
	// Cells are the gate's judgements, in the order of the cells.
	Cells []Cell `json:"cells"`
	// Coverage says, for every fault kind, which cells take it, or why
	// none does.
	Coverage []Coverage `json:"coverage"`
	// Status is StatusPass, StatusBroken or StatusInconclusive.
	Status Status `json:"status"`
	// Matrix is the matrix the cells ran as (summary.json).
	Matrix report.Matrix `json:"-"`
}

// Status is a gate's overall outcome.
type Status string

const (
	// StatusPass: every cell matches its expectation.
	StatusPass Status = "pass"
	// StatusBroken: a cell shows the lock breaking a promise it declared.
	StatusBroken Status = "broken"
	// StatusInconclusive: no promise broke, and some cell did not match.
	StatusInconclusive Status = "inconclusive"
)

// Cell is the gate's judgement of one cell.
type Cell struct {
	Name string `json:"name"`
	// Expect is the expectation per property; Lease and Resource the
	// rates of each property's violations over the runs that decided it.
	Expect   report.Expect   `json:"expect"`
	Outcome  checker.Outcome `json:"outcome"`
	Lease    report.Rate     `json:"lease"`
	Resource report.Rate     `json:"resource"`
	// Stuck counts the runs whose liveness was stuck; Broke, for each of
	// report.Extras by name, those that broke it (a hold cut short with
	// no fault active, a reply the nodes contradict, …).
	Stuck int            `json:"stuck_runs,omitempty"`
	Broke map[string]int `json:"broke_runs,omitempty"`
	// Violated and Runs: how many runs of the cell showed a violation.
	Violated int `json:"runs_with_violation"`
	Runs     int `json:"runs"`
	// Trials are the cell's trials (report.Cell.Trials), SlowTrials those
	// the machine was too slow for, ToFirst the trial that showed the
	// first violation; Excluded the per-trial violation rate the trials
	// exclude at 95 % when none showed one; TooSlowRuns the runs left out
	// of the judging (report.Cell.TooSlowRuns).
	Trials      int     `json:"trials"`
	SlowTrials  int     `json:"slow_trials,omitempty"`
	TooSlowRuns int     `json:"too_slow_runs,omitempty"`
	ToFirst     int     `json:"trials_to_first_violation,omitempty"`
	Excluded    float64 `json:"excluded_rate,omitempty"`
	// Matches is the matrix's judgement (the outcome against the
	// expectation), and false when a promise broke.
	Matches bool `json:"matches"`
	// Promise is what the properties expected safe rest on.
	Promise string `json:"promise,omitempty"`
	// Broken names the property the lock broke ("lease", "resource" or
	// "liveness") and Promise the promise; "" for none.
	Broken string `json:"broken,omitempty"`
	// First explains the first violation of a broken promise: the seed,
	// the run's directory and what the checker found.
	First string `json:"first_violation,omitempty"`
	// Why says, for a cell that does not match without breaking a
	// promise, what went wrong.
	Why string `json:"why,omitempty"`
	// Source and Reason are the expectation's.
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Properties says, property by property, what the runs showed beside
// what the cell expected: "lease broken in 1/1 runs (promised safe),
// resource lost in 1/1 runs (expected)".
func (c Cell) Properties() string {
	return report.PropertiesText(c.Expect, &c.Lease, &c.Resource, c.Stuck, c.Broke, c.Runs)
}

// PowerText says what the cell's trials showed, in the matrix's words
// (report.Cell.Power).
func (c Cell) PowerText() string {
	return report.Cell{Trials: c.Trials, SlowTrials: c.SlowTrials, ToFirst: c.ToFirst, TooSlowRuns: c.TooSlowRuns}.Power()
}

// PowerLine is the gate's verdict with its evidence: for a pass, the
// per-trial rate at which every promise would have been caught with 95 %
// probability and the weakest cell's trials.
func (res Result) PowerLine() string {
	var weakest *Cell
	for i := range res.Cells {
		c := &res.Cells[i]
		if c.Promise != "" && c.Broken == "" && (weakest == nil || c.Trials < weakest.Trials) {
			weakest = c
		}
	}
	switch res.Status {
	case StatusPass:
		s := fmt.Sprintf("No promise broken; each would have been caught at a per-trial rate of %s with 95 %% probability", report.Percent(res.Rate))
		if weakest != nil {
			s += fmt.Sprintf(" (every promise cell had at least %d trials, %s the fewest: %d)", res.Need, weakest.Name, weakest.Trials)
		}
		return s + "."
	case StatusBroken:
		return "A declared promise broke (below)."
	}
	var short []string
	for _, c := range res.Cells {
		if !c.Matches && c.Broken == "" {
			short = append(short, c.Name)
		}
	}
	return fmt.Sprintf("Inconclusive, never a pass: %s could not be decided to a per-trial rate of %s (below).", strings.Join(short, ", "), report.Percent(res.Rate))
}

// KnownUnsafe says where the lock's lease broke as the literature expects
// of its class (a cell expecting the lease violated whose runs showed it):
// "known unsafe, as the literature expects: the lease broke under
// clock-majority (3/3 runs), kill-immediate (2/3 runs)"; "" when nowhere.
// A release engineer reads a pass as what the lock kept, and this line as
// what it never promised.
func (res Result) KnownUnsafe() string {
	var rows []string
	for _, c := range res.Cells {
		if c.Expect.Lease != report.ExpectViolation || c.Lease.Violations == 0 {
			continue
		}
		row := c.Name
		if i := strings.IndexAny(row, "/+"); i >= 0 {
			row = row[i+1:]
		}
		rows = append(rows, fmt.Sprintf("%s (%d/%d runs)", row, c.Lease.Violations, c.Lease.Runs))
	}
	if len(rows) == 0 {
		return ""
	}
	return "known unsafe, as the literature expects: the lease broke under " + strings.Join(rows, ", ")
}

// Coverage is what the gate did with one fault kind.
type Coverage struct {
	Kind string `json:"kind"`
	// Cells are the cells that take the kind.
	Cells []string `json:"cells,omitempty"`
	// NotRun says why no cell does.
	NotRun string `json:"not_run,omitempty"`
}

// Plan is a gate validated once: the lock's cells, the seeds and duration
// after the budget, and every run checked by the harness, before anything
// runs.
type Plan struct {
	o      Options
	res    Result
	specs  []matrix.Spec
	matrix *matrix.Plan
}

// NewPlan derives the lock's cells (matrix.CellsFor), fits them in the
// budget and validates every run (matrix.NewPlan: a run the harness
// refuses, a program missing, is an error naming the cell). A cell with a
// fault kind whose needs the lock cannot meet (nemesis.Needs: a
// multi-node lock) is left out, and Coverage says why.
func NewPlan(o Options) (*Plan, error) {
	if o.Lock == "" {
		return nil, errors.New("gate: no lock given")
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.Budget < 0 || o.Duration < 0 {
		return nil, errors.New("gate: budget and duration must be positive")
	}
	if len(o.Seeds) == 0 {
		o.Seeds = DefaultSeeds
	}
	if o.Duration == 0 {
		o.Duration = matrix.DefaultDuration
	}
	specs, p, err := matrix.CellsFor(o.Lock)
	if errors.Is(err, locks.ErrUnknownLock) {
		return nil, fmt.Errorf("gate: %w; to gate a lock of your own, register it with its promises (locks.Register) in a main of your own that calls gate.Main (docs/gate.md, examples/gate), or run it as client processes: --lock exec:COMMAND (locks/clients/PROTOCOL.md)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	if strings.HasPrefix(o.Lock, locks.ExecPrefix) {
		// The command is no name for a directory: its cells are exec/….
		for i := range specs {
			specs[i].Name = "exec" + strings.TrimPrefix(specs[i].Name, o.Lock)
		}
	}
	res := Result{Lock: o.Lock, Promises: p, Traits: p.Traits(), Budget: o.Budget.String()}
	spec, err := locks.Lookup(o.Lock)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	// A cell whose fault kinds need what the lock cannot be (Needs) is
	// left out, saying why; every other refusal is an error.
	refused := map[string]string{}
	var only *regexp.Regexp
	if o.Cells != "" {
		if only, err = regexp.Compile(o.Cells); err != nil {
			return nil, fmt.Errorf("gate: cells: %w", err)
		}
	}
	var keep []matrix.Spec
	for _, sp := range specs {
		if only != nil && !only.MatchString(sp.Name) {
			for _, k := range sp.Kinds() {
				if refused[k] == "" {
					refused[k] = fmt.Sprintf("its cells are not selected (--cells %q)", o.Cells)
				}
			}
			continue
		}
		if why := cannotTake(sp, spec); why != "" {
			for _, k := range sp.Kinds() {
				refused[k] = fmt.Sprintf("cell %s left out: %s", sp.Name, why)
			}
			continue
		}
		keep = append(keep, sp)
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("gate: %s: none of its %d cells can run (%s)", o.Lock, len(specs), firstValue(refused))
	}
	res.Coverage = coverage(keep, p, refused)
	if o.Jobs < 0 {
		return nil, errors.New("gate: jobs must be 0 (as many as the machine holds) or more")
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if !(o.Rate > 0 && o.Rate < 1) {
		return nil, fmt.Errorf("gate: the rate to exclude must be between 0 and 1, got %g", o.Rate)
	}
	keep = floor(keep, o.Seeds, o.Duration)
	seeds, d, scaled, err := fit(keep, o.Seeds, o.Duration, o.Budget, estimatedJobs(o.Jobs))
	if err != nil {
		return nil, err
	}
	o.Seeds, o.Duration = seeds, d
	res.Seeds, res.Duration, res.Scaled, res.Jobs = seeds, d.String(), scaled, o.Jobs
	res.Rate, res.Need = o.Rate, report.TrialsFor(o.Rate)
	res.Expected = cost(keep, len(seeds), d, estimatedJobs(o.Jobs)).Seconds()
	gp := &Plan{o: o, res: res, specs: keep}
	mp, err := matrix.NewPlan(keep, matrix.Options{Seeds: seeds, Duration: d, Dir: o.Dir, CheckTimeout: o.CheckTimeout,
		Command: o.Command, Progress: o.Progress, Log: o.Log, Jobs: o.Jobs, More: gp.more, Budget: o.Budget})
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	gp.matrix = mp
	return gp, nil
}

// estimatedJobs is the runs side by side a budget counts on: jobs, or
// for 0 (as many as the machine holds) one per CPU.
func estimatedJobs(jobs int) int {
	if jobs > 0 {
		return jobs
	}
	return max(1, matrix.MaxJobs()/2)
}

// more says how many more seeds cell c, as its ended runs show it,
// needs: none once it broke a promise; one at a time while it has not
// shown the violation its class expects (up to ExpectSeeds: it stops at
// the first); while a promise it carries has fewer trials than the power
// target needs, as many as its trials per run so far say will reach the
// target at the trials a run gave so far, to run side by side (one
// when no run has had a trial yet), up to MaxSeeds in all; a seed no
// longer needed when its turn comes is dropped (matrix.Options.More).
func (p *Plan) more(c report.Cell) int {
	sp, ok := p.spec(c.Name)
	left := MaxSeeds - len(c.Runs)
	if !ok || left <= 0 {
		return 0
	}
	for _, r := range c.Runs {
		if broken(sp.Expect, r) != "" {
			return 0
		}
	}
	if expectsViolation(sp.Expect) && c.RunsWithViolation == 0 && len(c.Runs) < ExpectSeeds {
		return 1
	}
	if !promised(sp.Expect) || c.Trials >= p.res.Need {
		return 0
	}
	if c.Trials == 0 {
		return 1
	}
	// At the trials a run gave so far, on average: a run short of it
	// asks for one more when it ends.
	return min(left, (p.res.Need-c.Trials)*len(c.Runs)/c.Trials+1)
}

// spec returns the plan's cell named name.
func (p *Plan) spec(name string) (matrix.Spec, bool) {
	for _, sp := range p.specs {
		if sp.Name == name {
			return sp, true
		}
	}
	return matrix.Spec{}, false
}

// promised reports whether the cell expects some property safe: a
// promise the power target applies to.
func promised(e report.Expect) bool {
	return e.Lease == report.ExpectSafe || e.Resource == report.ExpectSafe || e.Liveness == checker.LivenessOK ||
		slices.ContainsFunc(report.Extras, func(x report.Extra) bool { return x.Expect(e) == report.ExpectSafe })
}

// expectsViolation reports whether the cell expects some property
// violated.
func expectsViolation(e report.Expect) bool {
	return e.Lease == report.ExpectViolation || e.Resource == report.ExpectViolation
}

// In returns the plan writing into dir (the Options' Dir): a command
// validates its plan first and makes its output folder only once the plan
// holds.
func (p *Plan) In(dir string) *Plan {
	q := *p
	q.o.Dir = dir
	q.matrix = p.matrix.In(dir)
	return &q
}

// Cells returns the cells the plan runs, with their expectations.
func (p *Plan) Cells() []matrix.Spec { return slices.Clone(p.specs) }

// Result returns what the plan knows before it runs: the lock, its
// promises, the coverage, the seeds and duration after the budget.
func (p *Plan) Result() Result { return p.res }

// Run plans the gate (NewPlan) and runs it (Plan.Run).
func Run(ctx context.Context, o Options) (Result, error) {
	p, err := NewPlan(o)
	if err != nil {
		return Result{}, err
	}
	return p.Run(ctx)
}

// Run runs every cell over every seed, judges the lock by its promises,
// writes the summaries into the Options' Dir (the matrix's summary.md,
// summary.json, junit.xml and index.html, with the gate's verdict at the
// top of summary.md and index.html and in gate.json) and returns the result: with
// ErrBroken when a promise broke, ErrInconclusive when some cell did not
// match otherwise (never a pass), another error when the gate could not
// run.
func (p *Plan) Run(ctx context.Context) (Result, error) {
	if p.o.Dir == "" {
		return Result{}, errors.New("gate: no output directory")
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Budget*3/2)
	defer cancel()
	m, runErr := p.matrix.Run(ctx)
	res := p.res
	m.Gate = p.o.Lock
	for _, n := range res.NotRun() {
		m.Skipped = append(m.Skipped, report.Skipped{Kinds: n.Kinds, Why: n.Why})
	}
	res.Matrix = m
	judge(&res, p.specs, p.o.Dir)
	var errs []error
	if runErr != nil {
		if errors.Is(runErr, context.DeadlineExceeded) {
			runErr = fmt.Errorf("the runs passed 1.5 × the budget of %s and were cut short: %w", p.o.Budget, runErr)
		}
		errs = append(errs, fmt.Errorf("gate: %w", runErr))
	}
	// The summaries again, with the broken promises marked.
	if err := report.WriteMatrix(p.o.Dir, res.Matrix); err != nil {
		errs = append(errs, err)
	}
	if err := write(p.o.Dir, res); err != nil {
		errs = append(errs, err)
	}
	switch res.Status {
	case StatusBroken:
		errs = append(errs, ErrBroken)
	case StatusInconclusive:
		errs = append(errs, ErrInconclusive)
	}
	return res, errors.Join(errs...)
}

// judge decides every cell by the lock's promises and sets the status. A
// cell breaks a promise when a run shows a property violated that the
// cell expects safe (the lease, the resource, or liveness ok: the
// cell's Promise); the first run that does is explained. A cell that
// breaks none and does not match is inconclusive: the lock did not show
// what its class shows, which is never a pass.
func judge(res *Result, specs []matrix.Spec, dir string) {
	byName := make(map[string]matrix.Spec, len(specs))
	for _, sp := range specs {
		byName[sp.Name] = sp
	}
	res.Cells = nil
	res.Status = StatusPass
	for i := range res.Matrix.Cells {
		mc := &res.Matrix.Cells[i]
		sp := byName[mc.Name]
		c := Cell{Name: mc.Name, Expect: sp.Expect, Outcome: mc.Outcome, Violated: mc.RunsWithViolation, Runs: len(mc.Runs), Matches: mc.Matches,
			Promise: sp.Promise, Stuck: mc.StuckRuns, Broke: mc.BrokeRuns(), Source: sp.Source, Reason: sp.Why}
		c.Trials, c.SlowTrials, c.ToFirst, c.TooSlowRuns = mc.Trials, mc.SlowTrials, mc.ToFirst, mc.TooSlowRuns
		if c.ToFirst == 0 && c.Trials > 0 {
			c.Excluded = report.ExcludedRate(c.Trials)
		}
		if mc.LeaseRate != nil {
			c.Lease = *mc.LeaseRate
		}
		if mc.ResourceRate != nil {
			c.Resource = *mc.ResourceRate
		}
		for _, r := range mc.Runs {
			if p := broken(sp.Expect, r); p != "" {
				c.Broken, c.First = p, firstViolation(dir, r)
				break
			}
		}
		if c.Broken != "" {
			if c.Promise == "" {
				c.Promise = "expected safe: " + sp.Why
			}
			c.Matches = false
			mc.Matches, mc.Broken = false, c.Broken+": "+c.Promise
			res.Status = StatusBroken
		} else if !c.Matches {
			c.Why = whyNot(*mc)
			if res.Status == StatusPass {
				res.Status = StatusInconclusive
			}
		} else if promised(sp.Expect) && c.Trials < res.Need {
			// Held, but too few trials to say it would have caught a
			// lock that breaks the promise at the target rate.
			c.Matches = false
			c.Why = fmt.Sprintf("%d trials (%s), fewer than the %d that catch a per-trial violation rate of %s with 95 %% probability: the budget ran out first (a larger --budget, a longer --duration, or more --jobs on a bigger machine)",
				c.Trials, slowText(c.SlowTrials), res.Need, report.Percent(res.Rate))
			if res.Status == StatusPass {
				res.Status = StatusInconclusive
			}
		}
		res.Cells = append(res.Cells, c)
	}
	if res.Matrix.Interrupted && res.Status == StatusPass {
		res.Status = StatusInconclusive
	}
}

// slowText says how many trials the machine was too slow for.
func slowText(n int) string {
	if n == 0 {
		return "none on a machine too slow"
	}
	return fmt.Sprintf("%d more left out: the machine was too slow", n)
}

// broken names the property run r broke that e expects safe ("lease",
// "resource", "liveness", or one of report.Extras: "holds" for a hold
// cut short with no fault, "answers" for a reply the nodes contradict),
// or "".
func broken(e report.Expect, r report.CellRun) string {
	switch {
	case e.Lease == report.ExpectSafe && r.Lease == checker.Invalid:
		return report.PropertyLease
	case e.Resource == report.ExpectSafe && r.Resource == checker.Invalid:
		return report.PropertyResource
	case e.Liveness == checker.LivenessOK && r.Liveness == checker.LivenessStuck:
		return "liveness"
	}
	for _, x := range report.Extras {
		if x.BrokenIn(e, r) {
			return x.Name
		}
	}
	return ""
}

// firstViolation describes the first violation of run r: the seed, its
// report, the first overlap of holds (times in seconds, tokens short, as
// explain prints them) or lost update the checker recorded, and the
// run's first finding (its fault step, cause and how many violations it
// made).
func firstViolation(dir string, r report.CellRun) string {
	s := fmt.Sprintf("seed %d (%s): lease %s, resource %s", r.Seed, filepath.ToSlash(filepath.Join(r.Dir, "report.html")), r.Lease, r.Resource)
	if r.FirstViolation != nil {
		s += fmt.Sprintf(", first violation at %.3f s", *r.FirstViolation)
	}
	res, err := report.ReadResults(filepath.Join(dir, r.Dir))
	if err != nil {
		return s
	}
	c := res.Check
	if len(c.LeaseViolations) > 0 {
		s += "; first overlap: " + report.Printable(explain.Overlap(c.LeaseViolations[0]))
	}
	if len(c.ResourceFailedKeys) > 0 {
		s += fmt.Sprintf("; lost updates on %d keys (first %s)", len(c.ResourceFailedKeys), report.Printable(c.ResourceFailedKeys[0]))
	}
	if len(res.Findings) > 0 {
		f := res.Findings[0]
		fault := ""
		if f.Fault > 0 {
			fault = fmt.Sprintf(", fault #%d", f.Fault)
		}
		s += fmt.Sprintf("; cause: %s%s (%d %s)", f.Cause, fault, f.Count, explain.Noun(f.Property, f.Count))
	}
	return s
}

// whyNot says why a cell that broke no promise does not match.
func whyNot(c report.Cell) string {
	switch {
	case c.Incomplete():
		return "not every run ran to its end"
	case c.Unknown > 0:
		for _, r := range c.Runs {
			if r.Outcome() != checker.OutcomeUnknown {
				continue
			}
			return fmt.Sprintf("%d of %d runs decided nothing, which is never a pass (seed %d: %s)", c.Unknown, len(c.Runs), r.Seed, report.Printable(r.Undecided()))
		}
	case c.Props.Liveness == checker.LivenessStuck && c.StuckRuns < len(c.Runs):
		return fmt.Sprintf("%d of %d runs were stuck; the class expects every one", c.StuckRuns, len(c.Runs))
	}
	var missing []string
	for _, p := range []struct {
		name string
		e    report.Expectation
		r    *report.Rate
	}{{"lease", c.Props.Lease, c.LeaseRate}, {"resource", c.Props.Resource, c.ResourceRate}} {
		if p.e == report.ExpectViolation && (p.r == nil || p.r.Violations == 0 || c.Band.Contradicts(p.r.Violations, p.r.Runs)) {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("the runs did not show the %s violation the literature expects of this lock's class (at the rate %s): the fault did not bite in these runs (more seeds or a longer --duration), or the lock keeps more than it declares (declare it: locks.Promises.SafeUnder)",
			strings.Join(missing, " and "), c.Band)
	}
	return fmt.Sprintf("expected %s, outcome %s", c.Props, c.Outcome)
}

// coverage says which cells take each fault kind, or why none does.
func coverage(specs []matrix.Spec, p locks.Promises, refused map[string]string) []Coverage {
	var out []Coverage
	for _, k := range nemesis.Kinds() {
		cv := Coverage{Kind: k.Name}
		for _, sp := range specs {
			if slices.Contains(sp.Kinds(), k.Name) {
				cv.Cells = append(cv.Cells, sp.Name)
			}
		}
		if len(cv.Cells) == 0 {
			cv.NotRun = refused[k.Name]
			if cv.NotRun == "" {
				cv.NotRun = fmt.Sprintf("no row of the literature table (matrix.Literature) for a lock with these promises (%s)", p)
			}
		}
		out = append(out, cv)
	}
	return out
}

// cannotTake says why the lock spec cannot take a fault kind of cell sp
// (the kind's Needs), or "" when it can.
func cannotTake(sp matrix.Spec, spec locks.Spec) string {
	for _, name := range sp.Kinds() {
		k, err := nemesis.Lookup(name)
		if err != nil {
			return err.Error()
		}
		if k.Needs.MultiNode && !spec.MultiNode {
			return fmt.Sprintf("%s needs a multi-node lock; %s uses one node", name, spec.Name)
		}
	}
	return ""
}

// cost is the expected time of n seeds of every cell at duration d, jobs
// runs at a time.
func cost(specs []matrix.Spec, n int, d time.Duration, jobs int) time.Duration {
	var t time.Duration
	for _, sp := range specs {
		t += time.Duration(n) * matrix.ExpectedRun(sp, d)
	}
	return t / time.Duration(max(jobs, 1))
}

// floor raises each cell's MinDuration to the shortest duration, from
// MinDuration up to d in whole 100 ms, at which every seed draws a fault
// schedule that fits the run (harness.FitsSchedule: a run with faults
// that injects none is refused), so that fit never shortens a cell's runs
// below what its faults need: a client-stop holds its step for the pause
// and a TTL more. A cell no shorter duration fits keeps d.
func floor(specs []matrix.Spec, seeds []int64, d time.Duration) []matrix.Spec {
	out := slices.Clone(specs)
	fits := func(sp matrix.Spec, try time.Duration) bool {
		for _, seed := range seeds {
			if sp.FitsSchedule(seed, try) != nil {
				return false
			}
		}
		return true
	}
	for i, sp := range out {
		if len(sp.Config.Nemesis) == 0 || sp.MinDuration >= d {
			continue
		}
		need := d
		for try := max(sp.MinDuration, min(d, MinDuration)); try < d; try += 100 * time.Millisecond {
			if fits(sp, try) {
				need = try
				break
			}
		}
		out[i].MinDuration = max(sp.MinDuration, need)
	}
	return out
}

// fit returns the seeds and duration that fit the budget: the runs as
// asked when they fit; else the duration shortened (not below
// MinDuration, in whole 100 ms); else at MinDuration, the fewest seeds
// dropped from the end. scaled says what changed.
func fit(specs []matrix.Spec, seeds []int64, d, budget time.Duration, jobs int) ([]int64, time.Duration, string, error) {
	if cost(specs, len(seeds), d, jobs) <= budget {
		return seeds, d, "", nil
	}
	asked := fmt.Sprintf("%d cells × %d seeds × %s would take about %s", len(specs), len(seeds), d, cost(specs, len(seeds), d, jobs).Round(time.Second))
	for n := len(seeds); n >= 1; n-- {
		for try := d; try >= min(d, MinDuration); try -= 100 * time.Millisecond {
			if cost(specs, n, try, jobs) > budget {
				continue
			}
			what := []string{}
			if try != d {
				what = append(what, fmt.Sprintf("runs shortened from %s to %s", d, try))
			}
			if n != len(seeds) {
				what = append(what, fmt.Sprintf("seeds %v dropped", seeds[n:]))
			}
			return seeds[:n], try, fmt.Sprintf("%s, more than the budget of %s: %s (about %s)", asked, budget, strings.Join(what, ", "), cost(specs, n, try, jobs).Round(time.Second)), nil
		}
	}
	return nil, 0, "", fmt.Errorf("%w: %s; one seed at %s needs about %s, more than the budget of %s", ErrBudget, asked, min(d, MinDuration), cost(specs, 1, min(d, MinDuration), jobs).Round(time.Second), budget)
}

func firstValue(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return ""
	}
	return m[keys[0]]
}

// write writes gate.json and puts the gate's verdict at the top of
// summary.md and index.html.
func write(dir string, res Result) error {
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate.json"), append(js, '\n'), 0o600); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	path := filepath.Join(dir, "summary.md")
	md, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if err := os.WriteFile(path, append([]byte(Markdown(res)+"\n"), md...), 0o600); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	// The verdict at the top of the page, above the matrix.
	path = filepath.Join(dir, "index.html")
	page, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	var section bytes.Buffer
	if err := verdictHTML.Execute(&section, res); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	page = bytes.Replace(page, []byte("<body>"), append([]byte("<body>\n"), section.Bytes()...), 1)
	if err := os.WriteFile(path, page, 0o600); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	return nil
}

// verdictHTML is the gate's verdict at the top of index.html: PASS,
// BROKEN or INCONCLUSIVE large and coloured (green, red, amber), then the
// broken promises, the cells that did not match, the rest.
var verdictHTML = template.Must(template.New("gate").Parse(`<style>
.gate-verdict{font:bold 44px/1.2 system-ui,sans-serif;padding:.35em .6em;margin:.2em 0 .4em;border-radius:6px;color:#fff;letter-spacing:.04em}
.gate-pass{background:#1b7f3b}.gate-broken{background:#c62828}.gate-inconclusive{background:#e0a100;color:#222}
.gate-lock{font-size:20px;font-weight:normal;margin-left:.6em}
</style>
<h1 class="gate-verdict gate-{{.Status}}" id="gate-verdict">{{.Verdict}}<span class="gate-lock">release gate: {{.Lock}}</span></h1>
<p>Declared promises: {{range $i, $t := .Traits}}{{if $i}}, {{end}}{{$t}}{{end}}. Seeds {{.Seeds}}, {{.Duration}} a run, budget {{.Budget}}.{{with .Scaled}} Scaled: {{.}}.{{end}}</p>
<p>{{.PowerLine}}</p>
<ul>{{range .Ordered}}
<li>{{if .Broken}}<strong>{{.Name}}: {{.Broken}} broken (promised: {{.Promise}})</strong> — {{.Properties}}. First violation: {{.First}}{{else if not .Matches}}<strong>{{.Name}} does not match</strong> — {{.Properties}}: {{.Why}}{{else}}{{.Name}}: {{.Properties}}; {{.PowerText}}{{end}}</li>{{end}}
</ul>
<ul>{{range .NotRun}}
<li>not run: {{.Kinds}}: {{.Why}}</li>{{end}}
</ul>
`))

// Ordered is the cells as a person reads them: the broken promises
// first, then the cells that did not match, then the rest, each in the
// order of the cells.
func (r Result) Ordered() []Cell {
	rank := func(c Cell) int {
		switch {
		case c.Broken != "":
			return 0
		case !c.Matches:
			return 1
		}
		return 2
	}
	out := slices.Clone(r.Cells)
	slices.SortStableFunc(out, func(a, b Cell) int { return rank(a) - rank(b) })
	return out
}

// expected is the time the runs were expected to take, to the second.
func (r Result) expected() time.Duration {
	return time.Duration(r.Expected * float64(time.Second)).Round(time.Second)
}

// Verdict is the status as the gate shouts it: PASS, BROKEN or
// INCONCLUSIVE.
func (r Result) Verdict() string { return strings.ToUpper(string(r.Status)) }

// NotRun is a reason no cell took some fault kinds, with the kinds.
type NotRun struct {
	Kinds string
	Why   string
}

// NotRun groups the fault kinds no cell took by the reason: one line per
// reason, not one per kind.
func (r Result) NotRun() []NotRun {
	var out []NotRun
	for _, cv := range r.Coverage {
		if cv.NotRun == "" {
			continue
		}
		i := slices.IndexFunc(out, func(n NotRun) bool { return n.Why == cv.NotRun })
		if i < 0 {
			out = append(out, NotRun{Kinds: cv.Kind, Why: cv.NotRun})
			continue
		}
		out[i].Kinds += ", " + cv.Kind
	}
	return out
}

// Markdown renders the gate's verdict: the status, the broken promises
// with their first violation, the cells that did not match, the budget's
// scaling and the coverage of the fault kinds.
func Markdown(res Result) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Release gate: %s — %s\n\n", report.MarkdownText(res.Lock), res.Verdict())
	p("Declared promises: %s. Seeds %v, %s a run", strings.Join(res.Traits, ", "), res.Seeds, res.Duration)
	p(", expected about %s within a budget of %s.\n", res.expected(), res.Budget)
	if res.Scaled != "" {
		p("Scaled to the budget: %s.\n", res.Scaled)
	}
	p("\n%s\n\n", res.PowerLine())
	if u := res.KnownUnsafe(); u != "" {
		p("%s.\n\n", strings.ToUpper(u[:1])+u[1:])
	}
	for _, c := range res.Ordered() {
		switch {
		case c.Broken != "":
			p("- **%s: %s broken** (promised: %s) — %s. First violation: %s.\n", report.MarkdownText(c.Name), c.Broken, report.MarkdownText(c.Promise), c.Properties(), report.MarkdownText(c.First))
		case !c.Matches:
			p("- **%s does not match** — %s: %s.\n", report.MarkdownText(c.Name), c.Properties(), report.MarkdownText(c.Why))
		default:
			p("- %s: %s; %s.\n", report.MarkdownText(c.Name), c.Properties(), c.PowerText())
		}
	}
	p("\nFault kinds:\n\n")
	for _, cv := range res.Coverage {
		if len(cv.Cells) > 0 {
			p("- %s: %s\n", cv.Kind, strings.Join(cv.Cells, ", "))
		}
	}
	for _, n := range res.NotRun() {
		p("- not run: %s: %s\n", n.Kinds, n.Why)
	}
	return b.String()
}
