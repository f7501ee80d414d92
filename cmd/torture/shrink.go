package main

import (
	"context"
	"errors"
	"flag"
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
	"github.com/locktorture/locktorture/shrink"
	"github.com/locktorture/locktorture/trial"
)

// shrinkCmd is `torture shrink RUN`: the smallest subset of the run's
// fault steps, and then the shortest duration, that still reproduce a
// violation within --tries replays each; written as RUN/minimal.json
// (minimal-1.json, … when that name is taken: a shrink never replaces
// another's result) with the one command that replays it.
//
// A run directory may come from someone else (a bundle, a colleague), so
// shrink treats what it stores as a request, not an order: it prints what
// it will run; it runs a client process (an exec: lock) or reaches an
// external backend or a docker image of someone's choosing only when the
// user names it again on the command line; and it replays no longer, and
// with no more clients, than the stored history shows the run took.
func shrinkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	tries := fs.Int("tries", 3, "replays of each candidate schedule; it reproduces when one of them violates")
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	lockFlag := fs.String("lock", "", "the stored lock, named again: needed to replay a client process (exec:...), which shrink never runs unasked")
	backendFlag := fs.String("backend", "", "the stored backend, named again: needed to replay on an external backend or a docker image other than the default")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *tries < 1 {
		return fmt.Errorf("shrink: --tries must be at least 1, got %d", *tries)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("shrink: want one run directory, got %d arguments (see torture shrink -h)", fs.NArg())
	}
	dir := fs.Arg(0)
	res, err := report.ReadResults(dir)
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	cfg, err := trial.StoredConfig(res)
	if err != nil {
		return fmt.Errorf("shrink: %s: %w", dir, err)
	}
	if err := askedFor(cfg, *lockFlag, *backendFlag); err != nil {
		return fmt.Errorf("shrink: %s: %w", dir, err)
	}
	sc, err := nemesis.ReadSchedule(filepath.Join(dir, "schedule.json"))
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	if len(sc.Steps) == 0 {
		return fmt.Errorf("shrink: %s: the schedule has no fault step to shrink", dir)
	}
	// The verdict is the history's, judged again here, not what
	// results.json says of it.
	a, _, err := trial.Recheck(dir, checker.Options{Timeout: *timeout})
	if err != nil {
		return fmt.Errorf("shrink: %s: %w", dir, err)
	}
	if a.Result.Outcome() != checker.OutcomeViolation {
		return fmt.Errorf("shrink: %s: the run found no violation (%s); nothing to reproduce", dir, a.Result.Outcome())
	}
	if err := boundedBy(&cfg, &a); err != nil {
		return fmt.Errorf("shrink: %s: %w", dir, err)
	}
	fmt.Fprintf(stderr, "shrink: replaying %s with subsets of its %d fault steps\n", report.Printable(harness.CommandLine(cfg)), len(sc.Steps))
	work, err := os.MkdirTemp("", "torture-shrink-")
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	defer os.RemoveAll(work)

	trials := 0
	// reproduces replays the steps keep over d, up to --tries times.
	reproduces := func(ctx context.Context, keep []int, d time.Duration) (bool, error) {
		cand := sc
		cand.Steps = nil
		for _, i := range keep {
			cand.Steps = append(cand.Steps, sc.Steps[i])
		}
		path := filepath.Join(work, fmt.Sprintf("candidate-%d.json", trials))
		if err := cand.Save(path); err != nil {
			return false, err
		}
		for try := 1; try <= *tries; try++ {
			trials++
			c := cfg
			c.Replay, c.Duration = path, d
			run := filepath.Join(work, fmt.Sprintf("run-%d", trials))
			out, err := replay(ctx, c, run, *timeout)
			fmt.Fprintf(stderr, "shrink: steps %v, %s, try %d: %s\n", keep, d, try, out)
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
	keep, err := shrink.Steps(ctx, len(sc.Steps), func(ctx context.Context, keep []int) (bool, error) {
		return reproduces(ctx, keep, cfg.Duration)
	})
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	// The shortest duration: the last kept step's end and two TTLs, if
	// that still reproduces.
	d := cfg.Duration
	last := sc.Steps[keep[len(keep)-1]]
	if short := (time.Duration(last.At+last.For) + 2*cfg.TTL).Round(500 * time.Millisecond); short < d {
		ok, err := reproduces(ctx, keep, short)
		if err != nil {
			return fmt.Errorf("shrink: %w", err)
		}
		if ok {
			d = short
		}
	}
	minimal := sc
	minimal.Steps = nil
	for _, i := range keep {
		minimal.Steps = append(minimal.Steps, sc.Steps[i])
	}
	b, err := minimal.Encode()
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	// A file of its own: a shrink of the same run beside this one, or an
	// earlier one, keeps its minimal.json (this one is minimal-1.json, …),
	// and a link at the name is never written through.
	out, err := safefs.WriteFresh(dir, "minimal", ".json", b, 0o600)
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	fmt.Fprintf(stdout, "%d of %d fault steps reproduce a violation within %d tries, over %s (%d replays):\n", len(keep), len(sc.Steps), *tries, d, trials)
	for _, i := range keep {
		st := sc.Steps[i]
		fmt.Fprintf(stdout, "  step %d at %s for %s: %s\n", i, time.Duration(st.At), time.Duration(st.For), report.Printable(st.Desc))
	}
	c := cfg
	c.Replay, c.Duration = out, d
	fmt.Fprintf(stdout, "written to %s; replay it with:\n  %s\n", out, report.Printable(harness.CommandLine(c)))
	return nil
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
