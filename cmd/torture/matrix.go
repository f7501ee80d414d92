package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

func matrixCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "only the release gate's cells (the reliable ones)")
	seeds := fs.String("seeds", "1", "comma-separated seeds; every cell runs once per seed")
	duration := fs.Duration("duration", matrix.DefaultDuration, "duration of every run (raised where a cell needs more)")
	out := fs.String("out", filepath.Join("results", "matrix"), "directory under which the matrix directory is created")
	only := fs.String("cells", "", "run only the cells whose name matches this regular expression")
	list := fs.Bool("list", false, "list the cells with their expectations and exit")
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("matrix: unexpected argument %q (see torture matrix -h)", fs.Arg(0))
	}
	specs := matrix.Cells(*quick)
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("matrix: --cells: %v", err)
		}
		var keep []matrix.Spec
		for _, s := range specs {
			if re.MatchString(s.Name) {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("matrix: --cells %q matches no cell", *only)
		}
		specs = keep
	}
	if *list {
		for _, s := range specs {
			fmt.Fprintf(stdout, "%-32s expect %-9s %s\n", s.Name, s.Expect, s.Why)
		}
		return nil
	}
	var seedList []int64
	for _, f := range strings.Split(*seeds, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("matrix: --seeds: %q is not a non-zero integer", f)
		}
		seedList = append(seedList, n)
	}
	if *duration <= 0 {
		return errors.New("matrix: --duration must be positive")
	}
	if *timeout <= 0 {
		return fmt.Errorf("matrix: --check-timeout must be positive, got %s", *timeout)
	}
	started := time.Now()
	id := started.UTC().Format("20060102T150405")
	if *quick {
		id += "-quick"
	}
	dir := filepath.Join(*out, id)
	prog := newMatrixProgress(stderr)
	// Every run of every cell is validated here, once, before anything
	// is printed or created.
	plan, err := matrix.NewPlan(specs, matrix.Options{
		Seeds: seedList, Duration: *duration, Dir: dir, CheckTimeout: *timeout,
		Command:  "torture matrix " + strings.Join(args, " "),
		Progress: prog.update,
		Log:      logLines{prog.p},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "matrix %s: %d cells × %d seeds, %s per run → %s\n", id, len(specs), len(seedList), *duration, dir)
	m, err := plan.Run(ctx)
	prog.done()
	if len(m.Cells) > 0 {
		printMatrix(stdout, m, dir)
	}
	if m.Interrupted {
		// Never "every cell matches": what did not run proves nothing.
		return fmt.Errorf("matrix: interrupted: %d of %d cells never ran, %d more did not run every seed to its end (see %s): %w",
			len(m.NeverRan()), len(m.Cells), incomplete(m)-len(m.NeverRan()), filepath.Join(dir, "summary.md"), err)
	}
	if err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	if bad := m.Failed(); len(bad) > 0 {
		return fmt.Errorf("%w: %d cells contradict their expectation", errViolation, len(bad))
	}
	return nil
}

// incomplete counts the cells with a seed that never ran or was cut short.
func incomplete(m report.Matrix) int {
	n := 0
	for _, c := range m.Cells {
		if c.Incomplete() {
			n++
		}
	}
	return n
}

// printMatrix writes the one-screen summary of a matrix run.
func printMatrix(w io.Writer, m report.Matrix, dir string) {
	fmt.Fprintf(w, "%-32s %-9s %-9s %8s %8s\n", "cell", "expect", "outcome", "violated", "acq/s")
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
		fmt.Fprintf(w, "%-32s %-9s %-9s %5d/%-2d %8.1f  %s\n", c.Name, c.Expect, c.Outcome, c.RunsWithViolation, len(c.Runs), c.AcqPerSec, mark)
		for _, r := range c.Runs {
			if r.Error != "" {
				// The first line of the error: enough to say why, the rest is in the run's directory.
				first, _, _ := strings.Cut(r.Error, "\n")
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
