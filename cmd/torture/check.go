package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

func checkCmd(fs *flag.FlagSet) runFunc {
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	bound := fs.Duration("liveness-bound", 0, "how long a key may stay free yet unacquired after the faults healed before liveness is stuck (default 3 × the longest validity granted, about 3×TTL)")
	return func(_ context.Context, _ []string, stdout, _ io.Writer) error {
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
		// A run directory is judged again by its run's rules (trial.Recheck:
		// its configuration and fault steps as stored), a bare history by the
		// checker's alone; either is streamed.
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
}

// explainCmd is `torture explain RUN`: one paragraph for each fault step and
// cause of the run's violations, from its history alone (explain.Findings).
func explainCmd(fs *flag.FlagSet) runFunc {
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	limit := fs.Int("limit", explain.DefaultLimit, "print at most this many findings, one per fault step and cause (the rest are counted)")
	asJSON := fs.Bool("json", false, "write the explanations as JSON")
	return func(_ context.Context, _ []string, stdout, _ io.Writer) error {
		if *timeout <= 0 {
			return fmt.Errorf("explain: --check-timeout must be positive, got %s", *timeout)
		}
		if *limit < 1 {
			return fmt.Errorf("explain: --limit must be at least 1, got %d", *limit)
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("explain: want one run directory or history file, got %d arguments (see torture explain -h)", fs.NArg())
		}
		path, err := historyPath(fs.Arg(0))
		if err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		a, _, err := trial.Check(path, checker.Options{Timeout: *timeout})
		if err != nil {
			return fmt.Errorf("explain %s: %w", path, err)
		}
		ex, total := explain.Explain(&a, math.MaxInt)
		found := explain.Group(ex)
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Outcome      checker.Outcome       `json:"outcome"`
				Violations   int                   `json:"violations"`
				Explanations []explain.Explanation `json:"explanations"`
				Findings     []explain.Finding     `json:"findings"`
			}{a.Result.Outcome(), total, ex[:min(len(ex), *limit)], found[:min(len(found), *limit)]})
		}
		writeFindings(stdout, path, &a, found, total, *limit)
		return nil
	}
}

// historyPath is path, or history.jsonl in it when it is a directory.
func historyPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return filepath.Join(path, "history.jsonl"), nil
	}
	return path, nil
}

// writeFindings prints at most limit findings under a line that counts the
// violations and names the evidence.
func writeFindings(w io.Writer, path string, a *checker.Analysis, found []explain.Finding, total, limit int) {
	r := &a.Result
	if total == 0 {
		fmt.Fprintf(w, "%s: nothing to explain: lease %s, resource %s\n", report.Printable(path), r.Lease, r.Resource)
		return
	}
	evidence := "per-node evidence"
	if !a.Reported {
		evidence = "no per-node evidence"
	}
	if a.Observed {
		evidence += ", node observations"
	} else {
		evidence += ", no node observations"
	}
	fmt.Fprintf(w, "%s: %d overlaps of leases (%d listed), %d keys with a lost update; %s; %d findings, one per fault step and cause\n\n",
		report.Printable(path), r.LeaseViolationCount, len(r.LeaseViolations), len(a.LostUpdates), evidence, len(found))
	report.WriteFindings(w, "", found, limit)
	if limit < len(found) {
		fmt.Fprintln(w, "(--limit)")
	}
}
