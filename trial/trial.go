package trial

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/report"
)

// Options configure Run. The zero value runs to the end, writes both
// reports and checks with checker.DefaultTimeout.
type Options struct {
	// ID names the run in results.json; default the base name of its
	// directory.
	ID string
	// Command is the command line that reproduces the run, recorded in
	// results.json.
	Command string
	// CheckTimeout bounds porcupine per model. Default
	// checker.DefaultTimeout.
	CheckTimeout time.Duration
	// StopOn lists properties (report.PropertyLease,
	// report.PropertyResource) the first violation of any of which ends
	// the run (one expected safe: the run is decided against the lock);
	// StopAfter lists properties once each of which has shown a violation
	// the run ends (those expected violated: it has shown what it must).
	// The verdicts are still the checker's, on the whole history
	// recorded. Default none: the run lasts its duration.
	StopOn, StopAfter []string
	// NoHTML writes results.json alone, not report.html: for the many
	// replays of shrink, the envelope and the benchmarks.
	NoHTML bool
	// Progress, when set, is called every ProgressEvery (default 1 s)
	// while the run goes; Log receives the run's log lines (see
	// harness.WithLog).
	Progress      func(harness.Progress)
	ProgressEvery time.Duration
	Log           io.Writer
}

// Run runs plan in dir, checks its history, judges it by the rules of the
// package and writes results.json (and report.html) into dir. A run that
// was interrupted (ctx cancelled) is still checked and reported, and its
// error is returned with the results; an error before the history could
// be checked returns empty Results.
func Run(ctx context.Context, plan *harness.Plan, dir string, o Options) (report.Results, error) {
	if o.ID == "" {
		o.ID = filepath.Base(dir)
	}
	started := time.Now()
	var hopts []harness.Option
	if o.Progress != nil {
		every := o.ProgressEvery
		if every <= 0 {
			every = time.Second
		}
		hopts = append(hopts, harness.WithProgress(every, o.Progress))
	}
	if o.Log != nil {
		hopts = append(hopts, harness.WithLog(o.Log))
	}
	if len(o.StopOn) > 0 || len(o.StopAfter) > 0 {
		hopts = append(hopts, harness.WithStop(stopAt(o.StopOn, o.StopAfter)))
	}
	sum, runErr := plan.Run(ctx, dir, hopts...)
	if runErr != nil && !sum.Interrupted {
		return report.Results{}, fmt.Errorf("run %s: %w", o.ID, runErr)
	}
	copts := checker.Options{Timeout: o.CheckTimeout, LivenessBound: sum.Config.LivenessBound, Benign: explain.Benign(sum.Config.TTL)}
	a, _, err := Check(sum.HistoryPath, copts)
	if err != nil {
		if sum.Interrupted && errors.Is(err, history.ErrEmpty) {
			return report.Results{}, fmt.Errorf("run %s: interrupted before it recorded an event: %w", o.ID, runErr)
		}
		return report.Results{}, fmt.Errorf("run %s: check %s: %w", o.ID, sum.HistoryPath, err)
	}
	strikes, err := Strikes(filepath.Join(sum.Config.Dir, "schedule.json"), &a, sum.Config.TTL)
	if err != nil {
		return report.Results{}, fmt.Errorf("run %s: %w", o.ID, err)
	}
	trials := Trials(&a, strikes, sum.Config.TTL, sum.Health)
	run := runContext{cfg: sum.Config, faults: sum.Faults, interrupted: sum.Interrupted, elapsed: sum.Elapsed, trials: trials, health: sum.Health}
	judge(&a.Result, run, strikes)
	findings, _ := explain.Findings(&a)
	r := report.Results{
		RunID:          o.ID,
		Started:        started.UTC(),
		Command:        o.Command,
		Config:         sum.Config,
		Seed:           sum.Config.Seed,
		Server:         sum.Server,
		NodeVersions:   sum.NodeVersions,
		Versions:       report.Versions(),
		Elapsed:        sum.Elapsed.Seconds(),
		Interrupted:    sum.Interrupted,
		Stopped:        sum.Stopped,
		Strikes:        strikes,
		Trials:         trials,
		Health:         sum.Health,
		Findings:       findings,
		Contradictions: a.Contradictions(),
		Causes:         causes(findings),
		Lease:          a.Result.Lease,
		Resource:       a.Result.Resource,
		Check:          a.Result,
	}
	// A client process's own account of what it runs on comes under its
	// own keys (client, client:<library>; the harness sees to it) and
	// never over the harness's: it may describe itself, not the harness.
	for k, v := range sum.LockVersions {
		if _, ok := r.Versions[k]; !ok {
			r.Versions[k] = v
		}
	}
	if err := report.WriteResults(dir, r); err != nil {
		return r, err
	}
	if !o.NoHTML {
		if err := report.WriteHTML(filepath.Join(dir, "report.html"), r, &a, copts); err != nil {
			return r, err
		}
	}
	if sum.Interrupted {
		return r, fmt.Errorf("run %s: interrupted: %w", o.ID, runErr)
	}
	return r, nil
}

// Check opens the history at path and checks it as it reads it, never
// holding it whole: the one function that turns a history file into a
// verdict and the analysis the reports and explanations read. It returns
// the number of events read. A history may come from someone else: one
// that is a link, a pipe or a device is refused (history.Open), and so is
// a line longer than history.MaxLine.
func Check(path string, opts checker.Options) (checker.Analysis, int, error) {
	f, err := history.Open(path)
	if err != nil {
		return checker.Analysis{}, 0, err
	}
	defer f.Close()
	return checker.AnalyzeDecoder(history.NewDecoder(f), opts)
}

// Recheck judges the stored run in dir again, by the rules Run applied:
// it checks dir/history.jsonl and applies the context results.json and
// schedule.json record (the configuration, the fault steps and what the
// targeted ones did). It runs nothing: nothing the run directory names
// is executed, so a directory from elsewhere can be rechecked.
func Recheck(dir string, opts checker.Options) (checker.Analysis, int, error) {
	prev, err := report.ReadResults(dir)
	if err != nil {
		return checker.Analysis{}, 0, err
	}
	cfg, err := StoredConfig(prev)
	if err != nil {
		return checker.Analysis{}, 0, fmt.Errorf("%s: %w", dir, err)
	}
	if opts.LivenessBound == 0 {
		opts.LivenessBound = cfg.LivenessBound
	}
	if opts.Benign == nil {
		opts.Benign = explain.Benign(cfg.TTL)
	}
	a, n, err := Check(filepath.Join(dir, "history.jsonl"), opts)
	if errors.Is(err, fs.ErrNotExist) {
		return a, n, fmt.Errorf("%s holds no history.jsonl: a published bundle keeps the histories of the runs that showed a violation or decided nothing, and of each cell's first run; this run is replayed by the command its results.json records (%s)", dir, prev.Command)
	}
	if err != nil {
		return a, n, err
	}
	sched := filepath.Join(dir, "schedule.json")
	faults, err := steps(sched)
	if err != nil {
		return a, n, err
	}
	strikes, err := Strikes(sched, &a, cfg.TTL)
	if err != nil {
		return a, n, err
	}
	trials := Trials(&a, strikes, cfg.TTL, prev.Health)
	judge(&a.Result, runContext{cfg: cfg, faults: faults, interrupted: prev.Interrupted, elapsed: time.Duration(prev.Elapsed * float64(time.Second)), trials: trials, health: prev.Health}, strikes)
	return a, n, nil
}

// StoredConfig is the configuration of a stored run, from its
// results.json.
func StoredConfig(r report.Results) (harness.Config, error) {
	var cfg harness.Config
	if err := convert(r.Config, &cfg); err != nil || cfg.Lock == "" {
		return cfg, fmt.Errorf("results.json has no run configuration (%v)", err)
	}
	return cfg, nil
}

// stopAt returns a watcher for harness.WithStop that ends a run at the
// first violation of a property of anyOf, or once every property of allOf
// has shown one, as a watching checker.Stream sees them (see
// checker.Stream.Watch); an event the stream refuses ends the watch, not
// the run: the check afterwards says what was wrong.
func stopAt(anyOf, allOf []string) func(history.Event) bool {
	var mu sync.Mutex // harness.WithStop calls it from every client
	st := checker.NewStream()
	st.Watch()
	broken := false
	seen := func(p string) bool { _, ok := st.FirstViolationOf(p); return ok }
	return func(e history.Event) bool {
		mu.Lock()
		defer mu.Unlock()
		if broken {
			return false
		}
		if err := st.Add(&e); err != nil {
			broken = true
			return false
		}
		if slices.ContainsFunc(anyOf, seen) {
			return true
		}
		return len(allOf) > 0 && !slices.ContainsFunc(allOf, func(p string) bool { return !seen(p) })
	}
}

// causes counts the run's violations by the cause explain names, most
// frequent first (ties in explain's order of causes): every overlap (or
// lost update) a finding stands for counts, not the finding once.
func causes(fs []explain.Finding) []report.CauseCount {
	n := map[explain.Cause]int{}
	for _, f := range fs {
		n[f.Cause] += f.Count
	}
	var out []report.CauseCount
	for _, c := range explain.Causes {
		if n[c] > 0 {
			out = append(out, report.CauseCount{Cause: string(c), Count: n[c]})
		}
	}
	slices.SortStableFunc(out, func(x, y report.CauseCount) int { return y.Count - x.Count })
	return out
}
