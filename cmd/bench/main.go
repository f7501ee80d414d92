package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/internal/cli"
	"github.com/locktorture/locktorture/matrix"
)

func main() {
	cli.Main("bench", func(ctx context.Context, args []string) error { return run(ctx, args, os.Stdout, os.Stderr) })
}

// options are the flags of a benchmark run.
type options struct {
	out           string
	budget        time.Duration
	clients       int
	workloadDur   time.Duration
	rounds        int
	sizes         []int
	seeds         int
	safeSeeds     int
	detectDur     time.Duration
	detectMax     time.Duration
	parallel      int
	cells         *regexp.Regexp // nil: every cell
	startupRounds int
	goBench       bool
	benchTime     string
	only          string
	adapterCl     int
	adapterDur    time.Duration
	adapterRounds int
	example       string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "check-one":
		return checkChild(args[1:], stdout)
	case len(args) > 0 && args[0] == "gen":
		if len(args) != 4 {
			return errors.New("usage: bench gen <path> <ops> valid|violation")
		}
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		_, _, err = genHistory(args[1], n, 10, 5, args[3] == "violation")
		return err
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.out, "out", "BENCHMARKS.md", "write the report here too (empty: stdout only)")
	fs.DurationVar(&o.budget, "budget", 14*time.Minute, "wall-clock budget of the whole run; detection runs not started by then are skipped and reported")
	fs.IntVar(&o.clients, "clients", 50, "workload: clients, each on its own key")
	fs.DurationVar(&o.workloadDur, "workload-duration", 4*time.Second, "workload: length of each measurement")
	fs.IntVar(&o.rounds, "rounds", 4, "workload: rounds of the four measurements, back to back, the order rotated each round")
	sizes := fs.String("sizes", "10000,100000,1000000", "checker: history sizes, in operations")
	fs.IntVar(&o.seeds, "seeds", 10, "detection: seeds per expected-violation cell")
	fs.IntVar(&o.safeSeeds, "safe-seeds", 3, "detection: seeds per expected-safe cell")
	fs.DurationVar(&o.detectDur, "detect-duration", matrix.DefaultDuration, "detection: length of a run of an expected-safe cell (raised to the cell's MinDuration, at most 30s)")
	fs.DurationVar(&o.detectMax, "detect-max", 30*time.Second, "detection: longest run of an expected-violation cell, which stops at its first violation (raised to the cell's MinDuration, at most 30s)")
	fs.IntVar(&o.parallel, "parallel", 2, "detection: runs at once")
	cells := fs.String("cells", "", "detection: only the cells whose name matches this regular expression (as torture matrix --cells)")
	fs.IntVar(&o.startupRounds, "startup-rounds", 5, "start-up: cluster starts measured")
	fs.BoolVar(&o.goBench, "gobench", true, "run the Go benchmarks (go test -bench) and include their output")
	fs.StringVar(&o.benchTime, "benchtime", "300ms", "Go benchmarks: -benchtime")
	fs.StringVar(&o.only, "only", "", "run one part only: workload, checker, detect, startup, adapter, evidence or gobench")
	fs.IntVar(&o.adapterCl, "adapter-clients", 10, "adapter: clients (one client process each)")
	fs.DurationVar(&o.adapterDur, "adapter-duration", 4*time.Second, "adapter: length of each measurement")
	fs.IntVar(&o.adapterRounds, "adapter-rounds", 3, "adapter: rounds of the measurements, back to back, the order rotated each round")
	fs.StringVar(&o.example, "example", filepath.Join("locks", "clients", "example", "example_client.py"), "adapter: the example client")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cells != "" {
		re, err := regexp.Compile(*cells)
		if err != nil {
			return fmt.Errorf("-cells: %v", err)
		}
		o.cells = re
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-sizes: %w", err)
		}
		o.sizes = append(o.sizes, n)
	}
	return bench(ctx, o, stdout, stderr)
}

// bench runs every part and writes the report.
func bench(ctx context.Context, o options, stdout, stderr io.Writer) error {
	start := time.Now()
	deadline := start.Add(o.budget)
	tmp, err := os.MkdirTemp("", "locktorture-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	part := func(name string) bool { return o.only == "" || o.only == name }

	r := &results{Opts: o, Started: start, Machine: machine()}
	logf("machine: %s, %d CPUs, load average %s", r.Machine.CPU, r.Machine.NumCPU, r.Machine.LoadStart)

	if part("startup") {
		if r.Startup, err = startup(ctx, 5, o.startupRounds, logf); err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
	}
	if part("workload") {
		r.ProfilePath = filepath.Join(tmp, "harness.prof")
		w, err := workload(ctx, tmp, o.clients, o.workloadDur, o.rounds, r.ProfilePath, logf)
		if err != nil {
			return fmt.Errorf("workload: %w", err)
		}
		r.Workload = &w
		r.ProfileTop = profileTop(ctx, r.ProfilePath)
	}
	if part("adapter") {
		example, err := filepath.Abs(o.example)
		if err != nil {
			return err
		}
		a, err := adapterBench(ctx, tmp, example, filepath.ToSlash(o.example), o.adapterCl, o.adapterDur, o.adapterRounds, logf)
		if err != nil {
			return fmt.Errorf("adapter: %w", err)
		}
		r.Adapter = &a
	}
	if part("evidence") {
		e, err := evidenceBench(ctx, tmp, o.clients, o.workloadDur, o.rounds, logf)
		if err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
		r.Evidence = &e
	}
	if part("checker") {
		if r.Checker, err = checkerBench(ctx, tmp, o.sizes, logf); err != nil {
			return fmt.Errorf("checker: %w", err)
		}
	}
	if part("gobench") && o.goBench {
		if r.GoBench, err = goBench(ctx, o.benchTime, logf); err != nil {
			return fmt.Errorf("go benchmarks: %w", err)
		}
	}
	if part("detect") {
		rows := detectPlan(o.seeds, o.safeSeeds)
		if o.cells != nil {
			rows = slices.DeleteFunc(rows, func(row detectRow) bool { return !o.cells.MatchString(row.Spec.Name) })
		}
		dstart := time.Now()
		detect(ctx, tmp, rows, runLengths{safe: o.detectDur, violation: o.detectMax}, o.parallel, deadline, logf)
		r.Detect, r.DetectWall = rows, time.Since(dstart)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.Wall = time.Since(start)
	r.Machine.LoadEnd = loadAvg()
	md := r.markdown()
	fmt.Fprint(stdout, md)
	if o.out != "" && o.only == "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
		logf("wrote %s", o.out)
	}
	return nil
}
