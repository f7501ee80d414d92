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
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/report"
)

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
	// Jobs is how many runs go side by side; 0 (the default) starts as
	// many as the machine holds, measured while they run (schedule). Each
	// run starts its own nodes and proxies on free ports, so runs never
	// share anything but the machine's cores, and each measures its own
	// health: a run the machine was too slow to decide runs again.
	Jobs int
	// More, when set, is asked after each run of a cell, with the cell
	// as its ended runs show it, how many more seeds the cell needs
	// (the release gate's power target); the next seeds after the
	// cell's last are queued to run side by side (up to
	// CellSideBySide), less those queued and not ended, as far as
	// Budget leaves room for them within
	// Budget of the matrix's start. A seed queued so is asked about
	// again when its turn comes, and dropped if the runs that ended
	// meanwhile gave the cell what it needed.
	More   func(report.Cell) int
	Budget time.Duration
}

// Progress tells where a matrix run is.
type Progress struct {
	Done, Total int
	Cell        string
	Seed        int64
	Elapsed     time.Duration
	// Left estimates the time to the end from the durations still to run,
	// at the pace of the runs so far (once one has ended).
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
			hp, err := harness.NewPlan(sp.RunConfig(seed, sp.duration(o)))
			if err != nil {
				return nil, fmt.Errorf("matrix: cell %s, seed %d: %w", sp.Name, seed, err)
			}
			p.runs[run] = hp
		}
	}
	return p, nil
}

// In returns the plan writing into dir (Options.Dir): a command validates
// the plan before it makes the folder, so a refused plan leaves nothing.
func (p *Plan) In(dir string) *Plan {
	q := *p
	q.o.Dir = dir
	return &q
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
	q := p.newQueue(seedsOf)
	// Up to o.Jobs runs at once, or as many as the machine holds (see
	// schedule).
	probe, stop := p.probe(ctx)
	schedule(ctx, o.Jobs, healthyLate(specs), probe, func() (func() bool, bool) { return q.take(ctx) })
	stop()
	for i := range specs {
		if len(seedsOf[i]) == 0 {
			continue // every run of the cell is another shard's
		}
		cell, servers := q.cell(i)
		for _, s := range servers {
			// The runs of one matrix find one version of each server
			// on this machine; the first is kept.
			m.Servers, _ = report.AddServer(m.Servers, s)
		}
		m.Cells = append(m.Cells, cell)
	}
	var runErr error
	if err := ctx.Err(); err != nil {
		m.Interrupted = true
		runErr = err
	}
	m.Elapsed = time.Since(q.start).Seconds()
	m.Machine.LoadEnd = report.LoadAverage()
	if o.Progress != nil {
		o.Progress(Progress{Done: q.done, Total: q.total, Elapsed: time.Since(q.start)})
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

// RunConfig is the harness configuration of one run of the cell with
// seed, lasting d (not raised to MinDuration: the caller decides); the
// run's directory is the caller's.
func (sp Spec) RunConfig(seed int64, d time.Duration) harness.Config {
	c := sp.Config
	c.Nemesis = slices.Clone(c.Nemesis)
	c.Seed, c.Duration = seed, d
	return c
}

// FitsSchedule reports whether a run of the cell with seed, lasting d,
// draws a fault schedule that fits it (harness.FitsSchedule), with the
// harness's error when it does not.
func (sp Spec) FitsSchedule(seed int64, d time.Duration) error {
	return harness.FitsSchedule(sp.RunConfig(seed, d))
}

// stops says when a run of the cell may end before its duration: at the
// first violation of a property it expects safe (anyOf: decided against
// the lock), or once every property it expects violated has shown one
// (allOf), but only where it expects no property safe: a safe property's
// verdict needs the whole run. A cell expected safe, or only possibly
// violated, runs to its end. (A client-pause cell, expecting the lease
// safe and lost updates, runs on after its first lost update: a release
// without its token check shows as two holders only later.)
func (sp Spec) stops() (anyOf, allOf []string) {
	if sp.Expect.Overall() != report.ExpectViolation {
		return nil, nil
	}
	for _, p := range []string{report.PropertyLease, report.PropertyResource} {
		switch sp.Expect.Of(p) {
		case report.ExpectSafe:
			anyOf = append(anyOf, p)
		case report.ExpectViolation:
			allOf = append(allOf, p)
		}
	}
	if len(anyOf) > 0 || sp.Expect.Liveness != "" {
		allOf = nil
	}
	return anyOf, allOf
}

// dirName turns a cell name into a directory name.
func dirName(name string) string {
	return strings.NewReplacer("/", "_", "+", "-", ",", "-").Replace(name)
}
