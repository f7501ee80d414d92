package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/envelope"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

func matrixCmd(fs *flag.FlagSet) runFunc {
	quick := fs.Bool("quick", false, "only the release gate's cells (the reliable ones)")
	f := matrix.Flags{Seeds: strconv.FormatInt(harness.Defaults().Seed, 10), Duration: matrix.DefaultDuration, Out: filepath.Join("results", "matrix"), CheckTimeout: checker.DefaultTimeout}
	matrix.BindFlags(fs, &f, map[string]string{"jobs": "up to three per CPU, one more only while the timers keep time; a run the machine was too slow to decide runs again"})
	shardFlag := fs.String("shard", "", "run only shard i of n (i/n, e.g. 2/4), a share of the runs balanced by expected time; 'torture matrix merge' joins the shards' outputs")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		var shard matrix.Shard
		if *shardFlag != "" {
			var err error
			if shard, err = matrix.ParseShard(*shardFlag); err != nil {
				return fmt.Errorf("matrix: --shard %q: want i/n with 1 ≤ i ≤ n, e.g. 2/4", *shardFlag)
			}
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("matrix: unexpected argument %q (see torture matrix -h)", fs.Arg(0))
		}
		seedList, err := f.Check()
		if err != nil {
			return fmt.Errorf("matrix: %w", err)
		}
		specs, err := matrix.Select(matrix.Cells(*quick), f.Cells)
		if err != nil {
			return fmt.Errorf("matrix: %w", err)
		}
		opts := matrix.Options{
			Seeds: seedList, Duration: f.Duration, CheckTimeout: f.CheckTimeout, Shard: shard, Jobs: f.Jobs,
			// The command of the whole matrix: every shard records the same one.
			Command: "torture matrix " + strings.Join(withoutFlag(args, "shard"), " "),
		}
		if f.List {
			if !shard.Whole() {
				listShard(stdout, specs, opts, shard)
				return nil
			}
			for _, s := range specs {
				fmt.Fprintf(stdout, "%-40s expect %s\n", s.Name, s.Expect)
			}
			return nil
		}
		id := time.Now().UTC().Format("20060102T150405")
		if *quick {
			id += "-quick"
		}
		if !shard.Whole() {
			id += fmt.Sprintf("-shard%dof%d", shard.Index, shard.Count)
		}
		return runMatrix(ctx, specs, opts, f.Out, id, stdout, stderr)
	}
}

// runMatrix plans specs with opts, runs them in a folder of their own under
// out (named after id) and prints their table.
func runMatrix(ctx context.Context, specs []matrix.Spec, opts matrix.Options, out, id string, stdout, stderr io.Writer) error {
	shard := opts.Shard
	prog := newProgress(stderr)
	opts.Progress, opts.Log = prog.matrix, logLines{prog}
	// Every run of every cell is validated once, before anything is printed
	// or created.
	plan, err := matrix.NewPlan(specs, opts)
	if err != nil {
		return err
	}
	// A folder of its own even beside a matrix started in the same second
	// with the same --out (their histories would mix), made once the plan
	// holds.
	id, dir, err := safefs.Fresh(out, id)
	if err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	plan = plan.In(dir)
	if shard.Whole() {
		fmt.Fprintf(stderr, "matrix %s: %d cells × %d seeds, %s per run → %s\n", id, len(specs), len(opts.Seeds), opts.Duration, dir)
	} else {
		runs := matrix.Shards(specs, opts, shard.Count)[shard.Index-1]
		fmt.Fprintf(stderr, "matrix %s: shard %s, %d of the %d runs (%d cells × %d seeds), %s per run, about %s → %s\n", id, shard, len(runs),
			len(specs)*len(opts.Seeds), len(specs), len(opts.Seeds), opts.Duration, matrix.ExpectedTime(specs, opts, runs).Round(time.Second), dir)
	}
	m, err := plan.Run(ctx)
	prog.done()
	if len(m.Cells) > 0 {
		printMatrix(stdout, m, dir)
	}
	if m.Interrupted {
		// Never "every cell matches": what did not run proves nothing.
		return fmt.Errorf("matrix: interrupted: %s: %w", unrun(m, dir), err)
	}
	if err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	if !shard.Whole() {
		// A shard judges nothing: a cell's expected violation may be another
		// shard's to find.
		fmt.Fprintf(stdout, "shard %s ran every run it was given; 'torture matrix merge OUT DIR...' judges the cells once every shard is done\n", shard)
		return nil
	}
	return matrixErr(m)
}

// withoutFlag returns args without the flag name and its value (as
// "--name v", "--name=v", or with one dash).
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		n, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && n == name {
			if !hasValue {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// listShard prints the runs of one shard and their expected time.
func listShard(w io.Writer, specs []matrix.Spec, o matrix.Options, shard matrix.Shard) {
	plan := matrix.Shards(specs, o, shard.Count)
	runs := plan[shard.Index-1]
	for _, r := range runs {
		fmt.Fprintf(w, "%-32s seed %d\n", r.Cell, r.Seed)
	}
	var longest time.Duration
	for _, p := range plan {
		longest = max(longest, matrix.ExpectedTime(specs, o, p))
	}
	fmt.Fprintf(w, "shard %s: %d of %d runs, about %s (the longest of the %d shards: %s)\n", shard, len(runs), len(specs)*len(o.Seeds),
		matrix.ExpectedTime(specs, o, runs).Round(time.Second), shard.Count, longest.Round(time.Second))
}

// unrun says what of the interrupted matrix m in dir did not run: the
// cells that never ran, and those with a seed that never ran or was cut.
func unrun(m report.Matrix, dir string) string {
	incomplete := 0
	for _, c := range m.Cells {
		if c.Incomplete() {
			incomplete++
		}
	}
	return fmt.Sprintf("%d of %d cells never ran, %d more did not run every seed to its end (see %s)",
		len(m.NeverRan()), len(m.Cells), incomplete-len(m.NeverRan()), filepath.Join(dir, "summary.md"))
}

// printMatrix writes the one-screen summary of a matrix run.
func printMatrix(w io.Writer, m report.Matrix, dir string) {
	fmt.Fprintf(w, "%-40s %-9s %-9s %8s %8s  %-42s\n", "cell", "expect", "outcome", "violated", "acq/s", "trials")
	for _, c := range m.Cells {
		mark := "ok"
		switch {
		case c.Outcome == report.OutcomeNotRun:
			mark = "NEVER RAN"
		case c.Incomplete():
			mark = "INTERRUPTED"
		case !c.Matches:
			mark = "CONTRADICTS EXPECTATION"
		}
		fmt.Fprintf(w, "%-40s %-9s %-9s %5d/%-2d %8.1f  %-42s %s\n", c.Name, c.Expect, c.Outcome, c.RunsWithViolation, len(c.Runs), c.AcqPerSec, c.Power(), mark)
		for _, r := range c.Runs {
			why := r.Error
			if why == "" && !c.Matches && r.Outcome() == checker.OutcomeUnknown {
				// Why a run of a cell that did not match decided nothing, for
				// a CI log.
				why = "decided nothing: " + r.Undecided()
			}
			if why != "" {
				// The first line: the rest is in the run's directory.
				first, _, _ := strings.Cut(why, "\n")
				fmt.Fprintf(w, "    seed %d: %s\n", r.Seed, report.Printable(first))
			}
		}
	}
	if never := m.NeverRan(); len(never) > 0 {
		names := make([]string, len(never))
		for i, c := range never {
			names[i] = c.Name
		}
		fmt.Fprintf(w, "never ran (the matrix was interrupted): %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "whole matrix: %s\n", time.Duration(m.Elapsed*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "summary: %s, %s, %s\n", filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "index.html"))
}

// matrixErr gives a whole matrix its exit status: a violation when a cell
// contradicts its expectation, else inconclusive when one decided nothing.
func matrixErr(m report.Matrix) error {
	contradicted, undecided := 0, 0
	for _, c := range m.Failed() {
		if c.Outcome == checker.OutcomeUnknown || c.Outcome == report.OutcomeNotRun {
			undecided++
		} else {
			contradicted++
		}
	}
	switch {
	case contradicted > 0:
		return fmt.Errorf("%w: %d cells contradict their expectation (%d more undecided)", errViolation, contradicted, undecided)
	case undecided > 0:
		return fmt.Errorf("%w: %d cells decided nothing", errUnknown, undecided)
	}
	return nil
}

// mergeAbout is the -h of torture matrix merge.
const mergeAbout = "torture matrix merge [--allow-unknown-commit] OUT DIR...: join the output directories of every shard of one matrix ('torture matrix --shard i/n', same commit, cells, seeds and duration) into OUT, which must not exist or be empty, and judge the cells as a whole matrix. Shards may come from elsewhere: a symbolic link, a special file or a run directory outside a shard's runs/ is refused, and a refused merge leaves OUT as it was"

// mergeCmd is torture matrix merge (mergeAbout), with a whole matrix's exit
// status.
func mergeCmd(fs *flag.FlagSet) runFunc {
	unknown := fs.Bool("allow-unknown-commit", false, "merge shards that record no commit (binaries built without a VCS stamp) when you know one binary ran them all; the merged summaries say the commit is unknown")
	return func(_ context.Context, _ []string, stdout, stderr io.Writer) error {
		if fs.NArg() < 2 {
			return errors.New("matrix merge: want OUT and at least one shard directory: torture matrix merge OUT DIR...")
		}
		out, dirs := fs.Arg(0), fs.Args()[1:]
		var opts []matrix.MergeOption
		if *unknown {
			opts = append(opts, matrix.AcceptUnknownCommit())
		}
		m, err := matrix.Merge(out, dirs, opts...)
		if errors.Is(err, matrix.ErrUnknownCommit) {
			return fmt.Errorf("%w; if one binary ran every shard, --allow-unknown-commit merges them", err)
		}
		if err != nil {
			return err
		}
		if m.Commit == report.UnknownCommit {
			fmt.Fprintf(stderr, "warning: the shards record no commit (--allow-unknown-commit): the merged summaries say the commit is unknown\n")
		}
		if m.Dirty {
			fmt.Fprintf(stderr, "warning: the shards ran commit %s with uncommitted changes: the merge cannot tell whether they ran the same code\n", m.Commit)
		}
		fmt.Fprintf(stderr, "merged %d shards → %s\n", len(dirs), out)
		printMatrix(stdout, m, out)
		if m.Interrupted {
			return fmt.Errorf("matrix merge: a shard was interrupted: %s", unrun(m, out))
		}
		return matrixErr(m)
	}
}

// envelopeCmd is torture envelope: where locks' safety ends along one fault
// parameter.
func envelopeCmd(fs *flag.FlagSet) runFunc {
	var faults []string
	for _, f := range envelope.Faults {
		faults = append(faults, fmt.Sprintf("%s (--param %s: %s)", f.Name, f.Param, f.Doc))
	}
	lockList := fs.String("lock", "", "locks to compare, comma-separated (e.g. setnx,redlock)")
	fault := fs.String("fault", "", "the fault to size: "+strings.Join(faults, "; "))
	param := fs.String("param", "", "the swept parameter (default: the fault's own; see --fault)")
	from := fs.Float64("from", 0.5, "the sweep's first value, in TTLs (for --fault drift a rate: 0.02 is 2% fast)")
	to := fs.Float64("to", 1.5, "the sweep's last value, in TTLs (for --fault drift a rate)")
	points := fs.Int("points", 6, "points of the sweep, evenly spaced")
	bisect := fs.Int("bisect", 3, "bisection steps between the last point without a violation and the first with one")
	seeds := fs.String("seeds", "1..3", "seeds every point runs with, one run each: comma-separated, each a number or a range a..b (as everywhere)")
	duration := fs.Duration("duration", 6*time.Second, "duration of every run")
	ttl := fs.Duration("ttl", 500*time.Millisecond, "lock TTL")
	hold := fs.Duration("hold", 100*time.Millisecond, "time inside the critical section")
	clients := fs.Int("clients", 6, "concurrent clients, all on one key")
	out := fs.String("out", "results/envelope", "directory under which the envelope's directory is created")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 0 {
			return fmt.Errorf("envelope: unexpected argument %q", fs.Arg(0))
		}
		seedList, err := matrix.ParseSeeds(*seeds)
		if err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
		f, err := envelope.Lookup(*fault, *param)
		if err != nil {
			return err
		}
		locks := strings.Split(*lockList, ",")
		if *lockList == "" {
			locks = nil
		}
		o := envelope.Options{
			Locks: locks, Fault: f, From: *from, To: *to, Points: *points, Bisect: *bisect, Seeds: seedList,
			Duration: *duration, TTL: *ttl, Hold: *hold, Clients: *clients,
			Progress: func(s string) { fmt.Fprintln(stderr, "  "+s) },
		}
		// Checked before its folder is made: a refused envelope leaves none.
		if err := o.Check(); err != nil {
			return err
		}
		_, dir, err := safefs.Fresh(*out, fmt.Sprintf("%s-%s-%s", time.Now().UTC().Format("20060102T150405"), strings.Join(locks, "+"), f.Name))
		if err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
		o.Dir = dir
		fmt.Fprintf(stderr, "envelope %s of %s, %s ÷ TTL %g..%g → %s\n", f.Name, strings.Join(locks, ","), f.Param, *from, *to, dir)
		res, err := envelope.Run(ctx, o)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, envelope.Table(res))
		fmt.Fprintf(stdout, "\n%s\n", filepath.Join(dir, "envelope.svg"))
		return nil
	}
}
