package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// RunOne runs one test of plan in dir, checks its history and writes
// results.json and report.html into dir. An interrupted run is still
// checked and reported; its error is returned with the results.
func RunOne(ctx context.Context, plan *harness.Plan, dir, id, command string, checkTimeout time.Duration, opts ...harness.Option) (report.Results, error) {
	started := time.Now()
	sum, runErr := plan.Run(ctx, dir, opts...)
	if runErr != nil && !sum.Interrupted {
		return report.Results{}, fmt.Errorf("run %s: %w", id, runErr)
	}
	// One pass over the history, streamed (#15): the check derives the
	// analysis the report and the explanations read.
	copts := checker.Options{Timeout: checkTimeout, LivenessBound: sum.Config.LivenessBound}
	a, err := analyzeFile(sum.HistoryPath, copts)
	if err != nil {
		if sum.Interrupted && errors.Is(err, history.ErrEmpty) {
			return report.Results{}, fmt.Errorf("run %s: interrupted before it recorded an event: %w", id, runErr)
		}
		return report.Results{}, fmt.Errorf("run %s: check %s: %w", id, sum.HistoryPath, err)
	}
	res := a.Result
	explainUntested(&res, sum)
	r := report.Results{
		RunID:         id,
		Started:       started.UTC(),
		Command:       command,
		Config:        sum.Config,
		Seed:          sum.Config.Seed,
		RedisVersion:  sum.RedisVersion,
		RedisVersions: sum.NodeVersions,
		Versions:      report.Versions(),
		Elapsed:       sum.Elapsed.Seconds(),
		Interrupted:   sum.Interrupted,
		Lease:         res.Lease,
		Resource:      res.Resource,
		Check:         res,
	}
	for k, v := range sum.LockVersions {
		r.Versions[k] = v // a client process's language and libraries
	}
	if err := report.WriteResults(dir, r); err != nil {
		return r, err
	}
	a.Result = res // with what explainUntested added
	if err := report.WriteHTML(filepath.Join(dir, "report.html"), r, &a, copts); err != nil {
		return r, err
	}
	if sum.Interrupted {
		return r, fmt.Errorf("run %s: interrupted: %w", id, runErr)
	}
	return r, nil
}

// analyzeFile checks the history at path as it reads it and returns its
// analysis.
func analyzeFile(path string, opts checker.Options) (checker.Analysis, error) {
	f, err := os.Open(path)
	if err != nil {
		return checker.Analysis{}, err
	}
	defer f.Close()
	a, _, err := checker.AnalyzeDecoder(history.NewDecoder(f), opts)
	return a, err
}

// explainUntested adds to the reason of a verdict about nothing what the
// checker, which reads the history alone, cannot know: the part of the
// run's configuration that made every section fail, and an interruption.
func explainUntested(res *checker.Result, sum harness.Summary) {
	cfg := sum.Config
	explain := func(reason *string, prefix, why string) {
		rest, ok := strings.CutPrefix(*reason, prefix+": ")
		if !ok {
			return
		}
		if why != "" {
			rest = why + "; " + rest
		}
		if sum.Interrupted {
			rest += fmt.Sprintf("; the run was interrupted after %s", sum.Elapsed.Round(time.Millisecond))
		}
		*reason = prefix + ": " + rest
	}
	if res.Resource == checker.Unknown {
		why := ""
		switch {
		case res.Stats.Sections == 0: // no acquire succeeded: the hold is not why
		case cfg.Extend: // the hold is worked in sections shorter than the TTL
		case cfg.Hold > cfg.TTL:
			// Each section checks its lease after the hold: a correct
			// lock never lets it write. A lock that over-reports its
			// validity is caught at once.
			why = fmt.Sprintf("the hold of %s is longer than the TTL of %s", cfg.Hold, cfg.TTL)
		case cfg.Hold == cfg.TTL:
			why = fmt.Sprintf("the hold of %s is as long as the TTL", cfg.Hold)
		}
		explain(&res.ResourceReason, checker.ReasonNoSection, why)
	}
	if res.Lease == checker.Unknown {
		explain(&res.LeaseReason, checker.ReasonNoAcquire, "")
		explain(&res.LeaseReason, checker.ReasonNoHold, "")
	}
	noFault(res, sum)
}

// noFault turns a valid verdict of a run that was to inject faults but
// injected none (a targeted step waits for a hold it fits and may never
// find one; an interrupted run may end first) into unknown: a fault test
// without a fault says nothing of the fault. A violation stands.
func noFault(res *checker.Result, sum harness.Summary) {
	if sum.Faults == 0 || res.Stats.FaultEvents > 0 {
		return
	}
	why := fmt.Sprintf("%s: the schedule's %d step(s) of %s left no fault event in the history (schedule.json says why each missed)",
		checker.ReasonNoFault, sum.Faults, strings.Join(sum.Config.Nemesis, ","))
	if res.Lease == checker.Valid {
		res.Lease, res.LeaseReason = checker.Unknown, why
	}
	if res.Resource == checker.Valid {
		res.Resource, res.ResourceReason = checker.Unknown, why
	}
}

// DefaultDuration is the duration of every run of a matrix when
// Options.Duration is zero (raised to a cell's MinDuration).
const DefaultDuration = 8 * time.Second

// Options configure a matrix run.
type Options struct {
	// Seeds run for every cell. Default the harness's default seed, 1.
	Seeds []int64
	// Duration of every run (raised to a cell's MinDuration). Default
	// DefaultDuration.
	Duration time.Duration
	// Dir receives runs/<cell>-seed<n>/ and the summaries. Required by
	// Plan.Run.
	Dir string
	// CheckTimeout bounds porcupine per model. Default
	// checker.DefaultTimeout.
	CheckTimeout time.Duration
	// Command is recorded in the summaries.
	Command string
	// Progress, when set, is called before each run and after the last.
	Progress func(Progress)
	// Log, when set, receives the runs' log lines (see harness.WithLog).
	Log io.Writer
	// Shard, when set, runs only that shard's part of the runs (see
	// Plan) and records in the summaries what Merge needs to join it
	// with the others. The default is the whole matrix.
	Shard Shard
	// Commit and Dirty are recorded in the summaries as the code that
	// ran the matrix. The default is what Commit returns.
	Commit string
	Dirty  bool
}

// Progress tells where a matrix run is.
type Progress struct {
	Done, Total int
	Cell        string
	Seed        int64
	Elapsed     time.Duration
	// Left estimates the time to the end from the durations still to run.
	Left time.Duration
}

// Plan is a matrix validated once: the cells (no name twice) and seeds
// (none twice), the shard, and the harness.Plan of every run of every
// cell (each seed of Options.Seeds, Options.Duration raised to the cell's
// MinDuration), each checked, the programs the cells need found, and its
// faults drawn, before anything runs. Run runs it, or the part of it that
// is its Shard's.
type Plan struct {
	specs []Spec
	o     Options
	runs  map[report.ShardRun]*harness.Plan
}

// NewPlan validates the matrix (see Plan): a run whose faults would not
// fit in its duration, a cell whose lock is not installed, is refused
// here in one line naming the cell, not found out cell by cell.
func NewPlan(specs []Spec, o Options) (*Plan, error) {
	o = o.withDefaults()
	if err := o.Shard.check(); err != nil {
		return nil, err
	}
	seeds := make(map[int64]bool, len(o.Seeds))
	for _, s := range o.Seeds {
		if seeds[s] {
			return nil, fmt.Errorf("matrix: seed %d given twice", s)
		}
		seeds[s] = true
	}
	p := &Plan{specs: specs, o: o, runs: make(map[report.ShardRun]*harness.Plan)}
	for _, sp := range specs {
		for _, seed := range o.Seeds {
			run := report.ShardRun{Cell: sp.Name, Seed: seed}
			if p.runs[run] != nil {
				// Run directories and shards are named by cell.
				return nil, fmt.Errorf("matrix: cell %s given twice", sp.Name)
			}
			hp, err := harness.NewPlan(sp.config(seed, sp.duration(o), ""))
			if err != nil {
				return nil, fmt.Errorf("matrix: cell %s, seed %d: %w", sp.Name, seed, err)
			}
			p.runs[run] = hp
		}
	}
	return p, nil
}

// Run plans the matrix (NewPlan) and runs it (Plan.Run).
func Run(ctx context.Context, specs []Spec, o Options) (report.Matrix, error) {
	p, err := NewPlan(specs, o)
	if err != nil {
		return report.Matrix{}, err
	}
	return p.Run(ctx)
}

// Run runs every cell over every seed (or the runs of the Options'
// Shard), writes the summaries into the Options' Dir and returns the
// matrix. A cancelled ctx stops the current run (what it recorded is
// still checked, and the run is marked interrupted) and starts no other:
// the matrix is then marked interrupted, every cell lists the seeds that
// never ran (Cell.NotRun), no cell with a seed not run to its end matches
// its expectation, and Run returns ctx's error.
func (p *Plan) Run(ctx context.Context) (report.Matrix, error) {
	o, specs := p.o, p.specs
	if o.Dir == "" {
		return report.Matrix{}, errors.New("matrix: no output directory")
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "runs"), 0o700); err != nil {
		return report.Matrix{}, fmt.Errorf("matrix: %w", err)
	}
	if o.Commit == "" {
		o.Commit, o.Dirty = Commit()
	}
	m := report.Matrix{Started: time.Now().UTC(), Command: o.Command, Seeds: o.Seeds, Duration: o.Duration.String(), Versions: report.Versions(),
		Commit: o.Commit, Dirty: o.Dirty, Shard: shardInfo(specs, o, o.Shard), Machine: report.ThisMachine(), Scenarios: ScenariosOf(specs)}
	seedsOf := p.seedsOf(m.Shard)
	start := time.Now()
	total := 0
	left := time.Duration(0)
	for i, sp := range specs {
		total += len(seedsOf[i])
		left += time.Duration(len(seedsOf[i])) * sp.duration(o)
	}
	var hopts []harness.Option
	if o.Log != nil {
		hopts = append(hopts, harness.WithLog(o.Log))
	}
	done := 0
	for i, sp := range specs {
		if len(seedsOf[i]) == 0 {
			continue // every run of the cell is another shard's
		}
		cell := sp.cell()
		for _, seed := range seedsOf[i] {
			if ctx.Err() != nil {
				// Interrupted: the seeds left are listed as never
				// run, so no summary can read as a full matrix.
				cell.NotRun = append(cell.NotRun, seed)
				continue
			}
			if o.Progress != nil {
				o.Progress(Progress{Done: done, Total: total, Cell: sp.Name, Seed: seed, Elapsed: time.Since(start), Left: left})
			}
			id := fmt.Sprintf("%s-seed%d", dirName(sp.Name), seed)
			d := sp.duration(o)
			hp := p.runs[report.ShardRun{Cell: sp.Name, Seed: seed}]
			r, err := RunOne(ctx, hp, filepath.Join(o.Dir, "runs", id), id, fmt.Sprintf("torture run %s", sp.flags(seed, d)), o.CheckTimeout, hopts...)
			left -= d
			done++
			if err != nil && ctx.Err() != nil && r.RunID == "" {
				// Cancelled before it recorded anything to check.
				cell.NotRun = append(cell.NotRun, seed)
				continue
			}
			cell.Runs = append(cell.Runs, cellRun(r, id, err))
			if m.RedisVersion == "" {
				m.RedisVersion = r.RedisVersion
			}
		}
		aggregate(&cell)
		m.Cells = append(m.Cells, cell)
	}
	var runErr error
	if err := ctx.Err(); err != nil {
		m.Interrupted = true
		runErr = err
	}
	m.Elapsed = time.Since(start).Seconds()
	m.Machine.LoadEnd = report.LoadAverage()
	if o.Progress != nil {
		o.Progress(Progress{Done: done, Total: total, Elapsed: time.Since(start)})
	}
	if err := report.WriteMatrix(o.Dir, m); err != nil {
		return m, errors.Join(runErr, err)
	}
	return m, runErr
}

// seedsOf returns the seeds each cell runs, by cell: every seed, or the
// shard's when shard is not nil.
func (p *Plan) seedsOf(shard *report.ShardInfo) [][]int64 {
	seedsOf := make([][]int64, len(p.specs))
	index := make(map[string]int, len(p.specs))
	for i, sp := range p.specs {
		index[sp.Name] = i
		if shard == nil {
			seedsOf[i] = p.o.Seeds
		}
	}
	if shard != nil {
		for _, r := range shard.Runs {
			seedsOf[index[r.Cell]] = append(seedsOf[index[r.Cell]], r.Seed)
		}
	}
	return seedsOf
}

// withDefaults returns o with Seeds, Duration and CheckTimeout set to
// their defaults when unset.
func (o Options) withDefaults() Options {
	if len(o.Seeds) == 0 {
		o.Seeds = []int64{harness.Defaults().Seed}
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = checker.DefaultTimeout
	}
	return o
}

// duration is how long each run of the cell lasts under o: o.Duration
// raised to the cell's MinDuration.
func (sp Spec) duration(o Options) time.Duration { return max(o.Duration, sp.MinDuration) }

// cell is the matrix cell of sp, without runs.
func (sp Spec) cell() report.Cell {
	topology := sp.Topology
	if topology == "" {
		topology = cluster.TopologyMasters
	}
	return report.Cell{Name: sp.Name, Lock: sp.Lock, Language: language(sp.Lock), Nemesis: nemesisName(sp.Nemesis), Fencing: sp.Fencing,
		Topology: topology, Expect: sp.Expect, ExpectLiveness: sp.Liveness, Source: sp.Source, Why: sp.Why, Band: new(sp.band())}
}

// config is the harness configuration of one run of the cell.
func (sp Spec) config(seed int64, d time.Duration, dir string) harness.Config {
	return harness.Config{
		Workload: harness.Workload{Lock: sp.Lock, Clients: sp.Clients, Keys: sp.Keys, Duration: d, TTL: sp.TTL, Hold: sp.Hold, Seed: seed, Fencing: sp.Fencing,
			Extend: sp.Extend, ExtendEvery: sp.ExtendEvery, Store: sp.Store, Quorum: sp.Quorum, WaitReplicas: sp.WaitReplicas},
		Cluster: harness.Cluster{Nodes: sp.Nodes, Topology: sp.Topology, Appendfsync: sp.Appendfsync},
		Faults:  harness.Faults{Nemesis: sp.Nemesis, NemesisInterval: sp.Interval, Restart: sp.Restart},
		Output:  harness.Output{Dir: dir},
	}
}

// flags renders the cell as the `torture run` flags that reproduce one
// of its runs.
func (sp Spec) flags(seed int64, d time.Duration) string {
	f := []string{"--lock " + sp.Lock}
	if sp.Nodes > 0 {
		f = append(f, fmt.Sprintf("--nodes %d", sp.Nodes))
	}
	if sp.Topology != "" {
		f = append(f, "--topology "+sp.Topology)
	}
	if sp.Fencing {
		f = append(f, "--fencing")
	}
	if sp.Quorum > 0 {
		f = append(f, fmt.Sprintf("--quorum %d", sp.Quorum))
	}
	if sp.WaitReplicas > 0 {
		f = append(f, fmt.Sprintf("--wait-replicas %d", sp.WaitReplicas))
	}
	if sp.Appendfsync != "" {
		f = append(f, "--appendfsync "+sp.Appendfsync)
	}
	if sp.Store != "" {
		f = append(f, "--store "+sp.Store)
	}
	if sp.Extend {
		f = append(f, "--extend")
	}
	if sp.ExtendEvery > 0 {
		f = append(f, "--extend-every "+sp.ExtendEvery.String())
	}
	if sp.Clients > 0 {
		f = append(f, fmt.Sprintf("--clients %d", sp.Clients))
	}
	if sp.Keys > 0 {
		f = append(f, fmt.Sprintf("--keys %d", sp.Keys))
	}
	if sp.TTL > 0 {
		f = append(f, "--ttl "+sp.TTL.String())
	}
	if sp.Hold > 0 {
		f = append(f, "--hold "+sp.Hold.String())
	}
	if len(sp.Nemesis) > 0 {
		f = append(f, "--nemesis "+strings.Join(sp.Nemesis, ","))
		if sp.Interval > 0 {
			f = append(f, "--nemesis-interval "+sp.Interval.String())
		}
		if sp.Restart != "" {
			f = append(f, "--restart "+sp.Restart)
		}
	}
	f = append(f, "--duration "+d.String(), fmt.Sprintf("--seed %d", seed))
	return strings.Join(f, " ")
}

// language is what the lock called name is written in, "" for a name
// the registry does not know (Validate refuses it before any run).
func language(name string) string {
	s, err := locks.Lookup(name)
	if err != nil {
		return ""
	}
	return s.Lang()
}

func nemesisName(f []string) string {
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, ",")
}

// dirName turns a cell name into a directory name.
func dirName(name string) string {
	return strings.NewReplacer("/", "_", "+", "-", ",", "-").Replace(name)
}

func cellRun(r report.Results, id string, err error) report.CellRun {
	cr := report.CellRun{Seed: r.Seed, RunID: id, Dir: filepath.Join("runs", id), Lease: r.Lease, Resource: r.Resource, Liveness: r.Check.Liveness,
		LeaseReason: r.Check.LeaseReason, ResourceReason: r.Check.ResourceReason, Interrupted: r.Interrupted}
	if err != nil {
		cr.Error = err.Error()
		if cr.Lease == "" {
			cr.Lease, cr.Resource = checker.Unknown, checker.Unknown
		}
	}
	c := r.Check
	// The first violation of either kind: a lost update is all a
	// client-pause cell shows.
	for _, t := range []*int64{c.FirstLeaseViolation, c.FirstResourceViolation} {
		if t != nil {
			if s := time.Duration(*t).Seconds(); cr.FirstViolation == nil || s < *cr.FirstViolation {
				cr.FirstViolation = &s
			}
		}
	}
	cr.Violations = c.LeaseViolationCount + c.FenceViolationCount + len(c.ResourceFailedKeys)
	cr.AcqPerSec = c.Stats.AcquisitionsPerSecond
	cr.P99Acquire = float64(c.Stats.AcquireLatency.P99) / float64(time.Millisecond)
	cr.Availability = c.Stats.AvailabilityDuringFaults
	return cr
}

// aggregate fills the cell's figures from its runs and decides whether
// the outcome matches the expectation. It is the one place a cell is
// judged, for a whole matrix and for one merged from shards (Merge
// calls it on cells copied from the shards' summaries): it sets every
// aggregate anew from Runs and NotRun, whatever the cell held before.
func aggregate(c *report.Cell) {
	var firsts []float64
	n, measured := 0, 0
	c.RunsWithViolation, c.Violations, c.Unknown = 0, 0, 0
	c.MedianFirstViolation = nil
	c.AcqPerSec, c.P99Acquire, c.Availability = 0, 0, 0
	c.Outcome, c.Matches = "", false
	c.StuckRuns = 0
	for _, r := range c.Runs {
		if r.Liveness == checker.LivenessStuck {
			c.StuckRuns++
		}
		switch o := r.Outcome(); {
		case o == checker.OutcomeViolation:
			c.RunsWithViolation++
		case c.ExpectLiveness == checker.LivenessOK && r.Liveness == checker.LivenessStuck:
			// Stuck counts like invalid only where the cell expects
			// the lock to stay live.
			c.RunsWithViolation++
		case o == checker.OutcomeUnknown:
			c.Unknown++
		}
		c.Violations += r.Violations
		if r.FirstViolation != nil {
			firsts = append(firsts, *r.FirstViolation)
		}
		c.AcqPerSec += r.AcqPerSec
		c.P99Acquire = max(c.P99Acquire, r.P99Acquire)
		if r.Availability >= 0 { // -1: no fault, not measured
			c.Availability += r.Availability
			measured++
		}
		n++
	}
	if n > 0 {
		c.AcqPerSec /= float64(n)
	}
	if measured > 0 {
		c.Availability /= float64(measured)
	} else {
		c.Availability = -1
	}
	if len(firsts) > 0 {
		slices.Sort(firsts)
		med := firsts[len(firsts)/2]
		if len(firsts)%2 == 0 {
			med = (firsts[len(firsts)/2-1] + firsts[len(firsts)/2]) / 2
		}
		c.MedianFirstViolation = &med
	}
	switch {
	case c.RunsWithViolation > 0:
		c.Outcome = checker.OutcomeViolation
	case c.Unknown > 0 || n == 0:
		c.Outcome = checker.OutcomeUnknown
	default:
		c.Outcome = checker.OutcomeSafe
	}
	// The rate over the decided runs, judged against the band (#16): a
	// cell contradicts its expectation when the 95% interval of its rate
	// lies wholly outside the band, or when it expects a violation and
	// no run showed one (report.Band.Contradicts). An undecided outcome
	// (no violation, some run unknown) matches nothing: unknown is never
	// a pass.
	band := report.DefaultBand(c.Expect)
	if c.Band != nil {
		band = *c.Band
	}
	c.Band = &band
	decided := n - c.Unknown
	c.Rate = new(report.NewRate(c.RunsWithViolation, decided))
	c.ContradictedBy = band.ContradictingText(n)
	c.Matches = decided > 0 && c.Outcome != checker.OutcomeUnknown && !band.Contradicts(c.RunsWithViolation, decided)
	// A cell that expects its lock stuck matches only if every run was.
	if c.ExpectLiveness == checker.LivenessStuck && c.StuckRuns < n {
		c.Matches = false
	}
	// A cell not run to its end matches nothing, whatever its runs so far
	// found.
	for _, r := range c.Runs {
		if r.Interrupted {
			c.Matches = false
		}
	}
	if len(c.NotRun) > 0 {
		c.Matches = false
		if n == 0 {
			c.Outcome = report.OutcomeNotRun
		}
	}
}
