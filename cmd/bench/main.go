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

// options are the flags of a benchmark run, by part.
type options struct {
	out, jsonOut, only string
	budget             time.Duration
	// workload (and evidence)
	clients, rounds int
	workloadDur     time.Duration
	sizes           []int // checker
	// detect
	seeds, safeSeeds, parallel int
	detectDur, detectMax       time.Duration
	cells                      *regexp.Regexp // nil: every cell
	detectFull                 bool
	startupRounds              int
	// adapter
	adapterCl, adapterRounds int
	adapterDur               time.Duration
	example                  string
	// gate
	gateLocks, gateHogs, matrixJobs string
	// targeted
	targeted                    *regexp.Regexp
	targetedSeeds, targetedSafe int
	targetedMax                 time.Duration
	onepassOps, onepassRounds   int
	clockCells                  *regexp.Regexp
	clockSeeds                  int
	goBench                     bool
	benchTime                   string
	// flags are the flags given on the command line, as given, but for
	// -only, -out and -json: a part's command repeats them.
	flags []string
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
	fs.StringVar(&o.out, "out", "BENCHMARKS.md", "rewrite this file, and the record beside it (-json), with the sections measured (empty: print them only)")
	fs.DurationVar(&o.budget, "budget", 10*time.Minute, "wall-clock budget of each part that runs cells (detect, targeted, clock); runs not started by then are skipped and reported")
	fs.IntVar(&o.clients, "clients", 50, "workload: clients, each on its own key")
	fs.DurationVar(&o.workloadDur, "workload-duration", 4*time.Second, "workload: length of each measurement")
	fs.IntVar(&o.rounds, "rounds", 4, "workload: rounds of the four measurements, back to back, the order rotated each round")
	sizes := fs.String("sizes", "10000,100000,1000000", "checker: history sizes, in operations")
	fs.IntVar(&o.seeds, "seeds", 3, "detection: seeds per expected-violation cell")
	fs.IntVar(&o.safeSeeds, "safe-seeds", 1, "detection: seeds per expected-safe cell")
	fs.DurationVar(&o.detectDur, "detect-duration", matrix.DefaultDuration, "detection: length of a run of an expected-safe cell (raised to the cell's MinDuration, at most 30s)")
	fs.DurationVar(&o.detectMax, "detect-max", 30*time.Second, "detection: longest run of an expected-violation cell, which stops at its first violation (raised to the cell's MinDuration, at most 30s)")
	fs.IntVar(&o.parallel, "parallel", 2, "detection: runs at once")
	cells := fs.String("cells", "", "detection: only the cells whose name matches this regular expression (as torture matrix --cells)")
	fs.IntVar(&o.startupRounds, "startup-rounds", 5, "start-up: cluster starts measured")
	fs.BoolVar(&o.goBench, "gobench", true, "run the Go benchmarks (go test -bench) and include their output")
	fs.StringVar(&o.benchTime, "benchtime", "300ms", "Go benchmarks: -benchtime")
	fs.StringVar(&o.only, "only", "", "run only these parts, comma-separated ("+strings.Join(partNames(), ", ")+"), and rewrite only their sections")
	fs.StringVar(&o.jsonOut, "json", "", "the machine-readable record (default: -out with .json for .md)")
	fs.BoolVar(&o.detectFull, "detect-full", false, "detection: every cell of the full matrix instead of the quick profile's")
	fs.StringVar(&o.gateLocks, "gate-locks", "redsync,redislock,setnx", "gate: the locks gated, comma-separated")
	fs.StringVar(&o.gateHogs, "gate-hogs", "0,4,8", "gate: the counts of busy CPU hogs each gate runs beside, comma-separated")
	fs.StringVar(&o.matrixJobs, "matrix-jobs", "1,2,4,0", "gate: the --jobs of each `torture matrix --quick` measured (0: the default)")
	targeted := fs.String("targeted-cells", defaultTargeted, "targeted: the cells (regular expression on the name) run beside their random twins")
	fs.IntVar(&o.targetedSeeds, "targeted-seeds", 3, "targeted: seeds per expected-violation cell and per random twin")
	fs.DurationVar(&o.targetedMax, "targeted-max", 10*time.Second, "targeted: longest run of an expected-violation cell or a twin, which stops at its first violation (the targets are set for 10 s runs)")
	fs.IntVar(&o.targetedSafe, "targeted-safe-seeds", 2, "targeted: seeds per expected-safe control")
	fs.IntVar(&o.onepassOps, "onepass-ops", 1000000, "one pass: operations of the generated history")
	fs.IntVar(&o.onepassRounds, "onepass-rounds", 3, "one pass: rounds of the two modes, alternating")
	clockCells := fs.String("clock-cells", defaultClockCells, "clock: the cells (regular expression on the name)")
	fs.IntVar(&o.clockSeeds, "clock-seeds", 3, "clock: seeds per cell")
	fs.IntVar(&o.adapterCl, "adapter-clients", 10, "adapter: clients (one client process each)")
	fs.DurationVar(&o.adapterDur, "adapter-duration", 4*time.Second, "adapter: length of each measurement")
	fs.IntVar(&o.adapterRounds, "adapter-rounds", 3, "adapter: rounds of the measurements, back to back, the order rotated each round")
	fs.StringVar(&o.example, "example", filepath.Join("locks", "clients", "example", "example_client.py"), "adapter: the example client")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains([]string{"only", "out", "json"}, f.Name) {
			o.flags = append(o.flags, "-"+f.Name+"="+shellQuote(f.Value.String()))
		}
	})
	if o.jsonOut == "" && o.out != "" {
		o.jsonOut = strings.TrimSuffix(o.out, filepath.Ext(o.out)) + ".json"
	}
	var err error
	if o.targeted, err = regexp.Compile(*targeted); err != nil {
		return fmt.Errorf("-targeted-cells: %v", err)
	}
	if o.clockCells, err = regexp.Compile(*clockCells); err != nil {
		return fmt.Errorf("-clock-cells: %v", err)
	}
	if *cells != "" {
		re, err := regexp.Compile(*cells)
		if err != nil {
			return fmt.Errorf("-cells: %v", err)
		}
		o.cells = re
	}
	if o.sizes, err = intList(*sizes); err != nil {
		return fmt.Errorf("-sizes: %w", err)
	}
	return bench(ctx, o, stdout, stderr)
}

// bench runs the parts asked for, prints their sections and, with -out,
// merges them into BENCHMARKS.json and rewrites BENCHMARKS.md from it.
func bench(ctx context.Context, o options, stdout, stderr io.Writer) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "locktorture-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	todo, err := selectParts(o.only)
	if err != nil {
		return err
	}
	m := machine()
	logf("machine: %s, %d CPUs, load average %s", m.CPU, m.NumCPU, m.LoadStart)
	env := &benchEnv{o: o, tmp: tmp, logf: logf}
	var fresh []section
	for _, pt := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := runPart(ctx, env, pt, m.Revision)
		if err != nil {
			return fmt.Errorf("%s: %w", pt.name, err)
		}
		logf("%s took %s", pt.name, time.Duration(s.Duration).Round(time.Second))
		fresh = append(fresh, s)
	}
	m.LoadStart, m.LoadEnd, m.Revision = "", "", ""
	if o.out == "" {
		fmt.Fprint(stdout, merge(record{}, m, fresh, partNames()).markdown())
		return nil
	}
	r, err := writeRecord(o.out, o.jsonOut, m, fresh, partNames())
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, r.markdown())
	logf("wrote %s and %s", o.out, o.jsonOut)
	return nil
}
