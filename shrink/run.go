package shrink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// Options say how Run replays a stored run.
type Options struct {
	// Tries is how many replays of each candidate schedule Run makes; it
	// reproduces when one of them violates. At least 1.
	Tries int
	// CheckTimeout is porcupine's limit per model.
	CheckTimeout time.Duration
	// Lock and Backend are the stored run's lock and backend named again
	// by the user: Run replays a client process (an exec: lock), an
	// external backend or a docker image other than the default only
	// when they name it.
	Lock, Backend string
	// Log, when set, gets one line per replay.
	Log io.Writer
}

// Result is what Run found: the steps of the stored schedule (by index)
// that still reproduce a violation, over Duration, written as a schedule
// to Minimal, and the configuration that replays it.
type Result struct {
	Schedule nemesis.Schedule
	Keep     []int
	Duration time.Duration
	Replays  int
	Minimal  string
	Replay   harness.Config
}

// Run shrinks the stored run in dir: the smallest subset of its fault
// steps (Steps), and then the shortest duration, that still reproduce a
// violation within o.Tries replays each; written as dir/minimal.json
// (minimal-1.json, … when that name is taken: a shrink never replaces
// another's result).
//
// A run directory may come from someone else (a bundle, a colleague), so
// Run treats what it stores as a request, not an order: it runs a client
// process or reaches an external backend or a docker image of someone's
// choosing only when o names it again; and it replays no longer, and with
// no more clients, than the stored history shows the run took.
func Run(ctx context.Context, dir string, o Options) (Result, error) {
	if o.Tries < 1 {
		return Result{}, fmt.Errorf("shrink: --tries must be at least 1, got %d", o.Tries)
	}
	cfg, sc, err := load(dir, o)
	if err != nil {
		return Result{}, fmt.Errorf("shrink: %s: %w", dir, err)
	}
	logf(o.Log, "shrink: replaying %s with subsets of its %d fault steps\n", report.Printable(harness.CommandLine(cfg)), len(sc.Steps))
	work, err := os.MkdirTemp("", "torture-shrink-")
	if err != nil {
		return Result{}, fmt.Errorf("shrink: %w", err)
	}
	defer os.RemoveAll(work)
	r := replayer{cfg: cfg, sc: sc, work: work, o: o}
	keep, err := Steps(ctx, len(sc.Steps), func(ctx context.Context, keep []int) (bool, error) {
		return r.reproduces(ctx, keep, cfg.Duration)
	})
	if err != nil {
		return Result{}, fmt.Errorf("shrink: %w", err)
	}
	// The shortest duration: the last kept step's end and two TTLs, if
	// that still reproduces.
	d := cfg.Duration
	last := sc.Steps[keep[len(keep)-1]]
	if short := (time.Duration(last.At+last.For) + 2*cfg.TTL).Round(500 * time.Millisecond); short < d {
		ok, err := r.reproduces(ctx, keep, short)
		if err != nil {
			return Result{}, fmt.Errorf("shrink: %w", err)
		}
		if ok {
			d = short
		}
	}
	b, err := subset(sc, keep).Encode()
	if err != nil {
		return Result{}, fmt.Errorf("shrink: %w", err)
	}
	// A file of its own: a shrink of the same run beside this one, or an
	// earlier one, keeps its minimal.json (this one is minimal-1.json, …),
	// and a link at the name is never written through.
	out, err := safefs.WriteFresh(dir, "minimal", ".json", b, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("shrink: %w", err)
	}
	c := cfg
	c.Replay, c.Duration = out, d
	return Result{Schedule: sc, Keep: keep, Duration: d, Replays: r.trials, Minimal: out, Replay: c}, nil
}

// load reads the stored run's configuration and schedule and refuses
// what Run must not replay: a run without a fault step or a violation,
// or one that asks for what o does not name again or for more than its
// history shows.
func load(dir string, o Options) (harness.Config, nemesis.Schedule, error) {
	var sc nemesis.Schedule
	res, err := report.ReadResults(dir)
	if err != nil {
		return harness.Config{}, sc, err
	}
	cfg, err := trial.StoredConfig(res)
	if err != nil {
		return cfg, sc, err
	}
	if err := askedFor(cfg, o.Lock, o.Backend); err != nil {
		return cfg, sc, err
	}
	if sc, err = nemesis.ReadSchedule(filepath.Join(dir, "schedule.json")); err != nil {
		return cfg, sc, err
	}
	if len(sc.Steps) == 0 {
		return cfg, sc, errors.New("the schedule has no fault step to shrink")
	}
	// The verdict is the history's, judged again here, not what
	// results.json says of it.
	a, _, err := trial.Recheck(dir, checker.Options{Timeout: o.CheckTimeout})
	if err != nil {
		return cfg, sc, err
	}
	if a.Result.Outcome() != checker.OutcomeViolation {
		return cfg, sc, fmt.Errorf("the run found no violation (%s); nothing to reproduce", a.Result.Outcome())
	}
	return cfg, sc, boundedBy(&cfg, &a)
}

// replayer replays candidate schedules of a stored run in work.
type replayer struct {
	cfg    harness.Config
	sc     nemesis.Schedule
	work   string
	o      Options
	trials int
}

// reproduces replays the steps keep over d, up to o.Tries times, and
// reports whether one replay violated.
func (r *replayer) reproduces(ctx context.Context, keep []int, d time.Duration) (bool, error) {
	path := filepath.Join(r.work, fmt.Sprintf("candidate-%d.json", r.trials))
	if err := subset(r.sc, keep).Save(path); err != nil {
		return false, err
	}
	for try := 1; try <= r.o.Tries; try++ {
		r.trials++
		c := r.cfg
		c.Replay, c.Duration = path, d
		run := filepath.Join(r.work, fmt.Sprintf("run-%d", r.trials))
		out, err := replay(ctx, c, run, r.o.CheckTimeout)
		logf(r.o.Log, "shrink: steps %v, %s, try %d: %s\n", keep, d, try, out)
		if err != nil {
			return false, err
		}
		os.RemoveAll(run)
		if out == checker.OutcomeViolation {
			return true, nil
		}
	}
	return false, nil
}

// subset is sc with only the steps keep.
func subset(sc nemesis.Schedule, keep []int) nemesis.Schedule {
	out := sc
	out.Steps = nil
	for _, i := range keep {
		out.Steps = append(out.Steps, sc.Steps[i])
	}
	return out
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// askedFor refuses to replay what a stored configuration names that runs
// code or reaches hosts of someone else's choosing, unless the user named
// it again: a client process (an exec: lock, the command given again with
// --lock), an external backend or a docker image other than the default
// (the backend given again with --backend).
func askedFor(cfg harness.Config, lock, backend string) error {
	if strings.HasPrefix(cfg.Lock, locks.ExecPrefix) && lock != cfg.Lock {
		return fmt.Errorf("the run's lock is the client process %s, which shrink runs only when you name it again: --lock %s",
			report.Printable(cfg.Lock), report.Printable(harness.Args(harness.Config{Workload: harness.Workload{Lock: cfg.Lock}})[1]))
	}
	if lock != "" && lock != cfg.Lock {
		return fmt.Errorf("--lock %s differs from the run's lock %s", report.Printable(lock), report.Printable(cfg.Lock))
	}
	foreign := cfg.Backend == cluster.BackendExternal || (cfg.Backend == cluster.BackendDocker && cfg.Image != "" && cfg.Image != cluster.DefaultImage)
	if foreign && backend != cfg.Backend {
		return fmt.Errorf("the run used the %s backend (%s), which shrink reaches only when you name it again: --backend %s",
			cfg.Backend, report.Printable(strings.Join(append(cfg.External, cfg.Image), " ")), cfg.Backend)
	}
	if backend != "" && backend != cfg.Backend {
		return fmt.Errorf("--backend %s differs from the run's backend %s", report.Printable(backend), cfg.Backend)
	}
	return nil
}

// boundedBy refuses a stored configuration that asks for more than its
// stored history shows the run took: a duration longer than the history's
// span (a run records events to its end), more clients than the history
// has. What a replay then costs is what the original run cost.
func boundedBy(cfg *harness.Config, a *checker.Analysis) error {
	first, last, ok := a.Span()
	if !ok {
		return errors.New("the history has no event")
	}
	span := time.Duration(last - first)
	if cfg.Duration > span+time.Second {
		return fmt.Errorf("results.json asks for %s but the history spans %s: shrink replays no longer than the run took", cfg.Duration, span.Round(time.Millisecond))
	}
	if n := len(a.Processes()); cfg.Clients > n {
		return fmt.Errorf("results.json asks for %d clients but the history has %d: shrink replays no more than the run had", cfg.Clients, n)
	}
	return nil
}

// replay runs cfg in dir and returns the outcome of its check; it ends at
// the first violation, which is all a replay needs to see.
func replay(ctx context.Context, cfg harness.Config, dir string, timeout time.Duration) (checker.Outcome, error) {
	plan, err := harness.NewPlan(cfg)
	if err != nil {
		return "", err
	}
	r, err := trial.Run(ctx, plan, dir, trial.Options{CheckTimeout: timeout, NoHTML: true, StopOn: []string{report.PropertyLease, report.PropertyResource}})
	if r.RunID == "" {
		return "", err
	}
	return r.Check.Outcome(), nil
}
