package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

func checkCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	bound := fs.Duration("liveness-bound", 0, "how long a key may stay free yet unacquired after the faults healed before liveness is stuck (default 3 × the longest validity granted, about 3×TTL)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *bound < 0 {
		return fmt.Errorf("check: --liveness-bound must not be negative, got %s", *bound)
	}
	if *timeout <= 0 {
		return fmt.Errorf("check: --check-timeout must be positive, got %s", *timeout)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("check: want one run directory or history file, got %d arguments (see torture check -h)", fs.NArg())
	}
	var err error
	// A run directory is judged again by the rules its run was judged by
	// (trial.Recheck: its configuration and fault steps as stored); a
	// bare history by the checker's alone. Either is streamed, never
	// held whole.
	arg := fs.Arg(0)
	copts := checker.Options{Timeout: *timeout, LivenessBound: *bound}
	var (
		a    checker.Analysis
		n    int
		path = arg
	)
	if st, serr := os.Stat(arg); serr == nil && st.IsDir() {
		path = filepath.Join(arg, "history.jsonl")
		if _, rerr := os.Stat(filepath.Join(arg, "results.json")); rerr == nil {
			a, n, err = trial.Recheck(arg, copts)
		} else {
			a, n, err = trial.Check(path, copts)
		}
	} else {
		a, n, err = trial.Check(path, copts)
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	res := a.Result
	found, _ := explain.Findings(&a)
	report.Summary(stdout, fmt.Sprintf("%s (%d events)", path, n), res, found)
	return verdictErr(res)
}
