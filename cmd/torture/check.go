package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/report"
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
	path, err := historyPath(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	// Streamed: the history is checked as it is read, never held whole.
	// A history may come from someone else: not a link, nor a pipe or
	// a device (history.Open); no line longer than history.MaxLine.
	f, err := history.Open(path)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	defer f.Close()
	res, n, err := checker.CheckDecoder(history.NewDecoder(f), checker.Options{Timeout: *timeout, LivenessBound: *bound})
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	report.Summary(stdout, fmt.Sprintf("%s (%d events)", path, n), res)
	return verdictErr(res)
}
