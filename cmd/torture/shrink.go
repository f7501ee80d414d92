package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/shrink"
)

// shrinkCmd is `torture shrink RUN` (#15): the smallest subset of the
// run's fault steps, and then the shortest duration, that still
// reproduce a violation within --tries replays each; written as
// RUN/minimal.json with the one command that replays it.
func shrinkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	tries := fs.Int("tries", 3, "replays of each candidate schedule; it reproduces when one of them violates")
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
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
	cfg, err := runConfig(res)
	if err != nil {
		return fmt.Errorf("shrink: %s: %w", dir, err)
	}
	var sc nemesis.Schedule
	b, err := os.ReadFile(filepath.Join(dir, "schedule.json"))
	if err == nil {
		err = json.Unmarshal(b, &sc)
	}
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	if len(sc.Steps) == 0 {
		return fmt.Errorf("shrink: %s: the schedule has no fault step to shrink", dir)
	}
	if res.Check.Outcome() != checker.OutcomeViolation {
		return fmt.Errorf("shrink: %s: the run found no violation (%s); nothing to reproduce", dir, res.Check.Outcome())
	}
	work, err := os.MkdirTemp("", "torture-shrink-")
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	defer os.RemoveAll(work)

	trial := 0
	// reproduces replays the steps keep over d, up to --tries times.
	reproduces := func(ctx context.Context, keep []int, d time.Duration) (bool, error) {
		cand := sc
		cand.Steps = nil
		for _, i := range keep {
			cand.Steps = append(cand.Steps, sc.Steps[i])
		}
		path := filepath.Join(work, fmt.Sprintf("candidate-%d.json", trial))
		if err := cand.Save(path); err != nil {
			return false, err
		}
		for try := 1; try <= *tries; try++ {
			trial++
			c := cfg
			c.Replay, c.Duration, c.Dir = path, d, filepath.Join(work, fmt.Sprintf("run-%d", trial))
			out, err := replay(ctx, c, *timeout)
			fmt.Fprintf(stderr, "shrink: steps %v, %s, try %d: %s\n", keep, d, try, out)
			if err != nil {
				return false, err
			}
			os.RemoveAll(c.Dir)
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
	out := filepath.Join(dir, "minimal.json")
	if err := minimal.Save(out); err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	fmt.Fprintf(stdout, "%d of %d fault steps reproduce a violation within %d tries, over %s (%d replays):\n", len(keep), len(sc.Steps), *tries, d, trial)
	for _, i := range keep {
		st := sc.Steps[i]
		fmt.Fprintf(stdout, "  step %d at %s for %s: %s\n", i, time.Duration(st.At), time.Duration(st.For), report.Printable(st.Desc))
	}
	fmt.Fprintf(stdout, "written to %s; replay it with:\n  %s\n", out, replayCommand(res.Command, out, d))
	return nil
}

// runConfig is the harness configuration of a stored run, from its
// results.json.
func runConfig(res report.Results) (harness.Config, error) {
	var cfg harness.Config
	b, err := json.Marshal(res.Config)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil || cfg.Lock == "" {
		return cfg, fmt.Errorf("results.json has no run configuration (%v)", err)
	}
	return cfg, nil
}

// replay runs cfg and returns the outcome of its check.
func replay(ctx context.Context, cfg harness.Config, timeout time.Duration) (checker.Outcome, error) {
	sum, err := harness.Run(ctx, cfg)
	if err != nil && (ctx.Err() != nil || sum.HistoryPath == "") {
		return "", err
	}
	// A run whose nodes were unhealthy afterwards still recorded a
	// history; its verdicts count.
	f, ferr := os.Open(sum.HistoryPath)
	if ferr != nil {
		return "", errors.Join(err, ferr)
	}
	defer f.Close()
	res, _, cerr := checker.CheckDecoder(history.NewDecoder(f), checker.Options{Timeout: timeout})
	if cerr != nil {
		return "", errors.Join(err, cerr)
	}
	return res.Outcome(), nil
}

// replayCommand is the run's command with --replay path and --duration d
// in place of its own.
func replayCommand(command, path string, d time.Duration) string {
	f := strings.Fields(command)
	var out []string
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == "--duration" || f[i] == "--replay" || f[i] == "--out":
			i++ // and its value
		case strings.HasPrefix(f[i], "--duration=") || strings.HasPrefix(f[i], "--replay=") || strings.HasPrefix(f[i], "--out="):
		default:
			out = append(out, f[i])
		}
	}
	if len(out) == 0 {
		out = []string{"torture", "run"}
	}
	return strings.Join(append(out, "--replay", path, "--duration", d.String()), " ")
}
