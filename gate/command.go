package gate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/internal/cli"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// Exit statuses of Main.
const (
	ExitPass         = 0 // every cell matches
	ExitBroken       = 1 // the lock broke a promise it declared
	ExitError        = 2 // the gate could not run (bad input, an error)
	ExitInconclusive = 3 // no promise broke, but some cell decided nothing or did not show what its class shows: never a pass
)

// Main is the main of a program that gates a lock it registered:
// register the lock (locks.Register, with its Promises), then
//
//	func main() { os.Exit(gate.Main(os.Args[1:])) }
//
// It runs Command under a context that Ctrl-C and SIGTERM cancel and
// returns the exit status: ExitPass, ExitBroken, ExitError or
// ExitInconclusive.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) > 0 && args[0] == "client" {
		// The gate's client-process cells (client-stop) run this
		// program as `PROG client --lock NAME` (locks.ClientCommand).
		return ExitCode(Client(ctx, args[1:], os.Stdin, os.Stdout), os.Stderr)
	}
	return ExitCode(Command(ctx, args, os.Stdout, os.Stderr), os.Stderr)
}

// Client is `PROG client --lock NAME`: it serves the registered Go lock
// NAME on in and out, the client side of the line protocol
// (locks.Serve), until in ends. The gate runs its lock in client
// processes of their own for the cells that stop a whole client
// (client-stop) by starting this program so (locks.ClientCommand); Main
// answers it, and a main of one's own that calls Command hands it here:
//
//	if len(os.Args) > 1 && os.Args[1] == "client" {
//		os.Exit(gate.ExitCode(gate.Client(ctx, os.Args[2:], os.Stdin, os.Stdout), os.Stderr))
//	}
func Client(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	name := fs.String("lock", "", "the registered Go lock to serve")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if fs.NArg() > 0 || *name == "" {
		return errors.New("client: usage: client --lock NAME")
	}
	spec, err := locks.Lookup(*name)
	switch {
	case err != nil:
		return fmt.Errorf("client: %w", err)
	case spec.Process:
		return fmt.Errorf("client: %s runs in client processes of its own; a client process serves a Go lock", *name)
	}
	return locks.Serve(ctx, *name, in, out)
}

// ExitCode maps an error of Command to its exit status, writing the
// error to stderr when it is not a broken promise (whose summary is on
// stdout already) or a request for help.
func ExitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitPass
	case errors.Is(err, ErrBroken):
		return ExitBroken
	case errors.Is(err, ErrInconclusive):
		fmt.Fprintln(stderr, report.Printable(err.Error()))
		return ExitInconclusive
	}
	fmt.Fprintln(stderr, report.Printable(err.Error()))
	return ExitError
}

// Command is `torture gate`: it parses args, runs the gate and prints
// its verdict to stdout and its progress to stderr. Its error wraps
// ErrBroken when a promise broke.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	lock := fs.String("lock", "", "the registered lock to gate (or exec:COMMAND, a client process that declares its promises in its hello); required")
	f := matrix.Flags{Seeds: "1", Duration: matrix.DefaultDuration, Out: filepath.Join("results", "gate"), CheckTimeout: checker.DefaultTimeout, Jobs: DefaultJobs}
	matrix.BindFlags(fs, &f, map[string]string{
		"seeds":    "the first seeds: a cell that needs more trials for --rate, or has not shown the violation its class expects, runs the next seeds within the budget",
		"duration": "the budget may shorten it",
		"cells":    "a quick look, not a release: the kinds left out are listed as not run",
		"list":     "with the fault kinds not run",
	})
	budget := fs.Duration("budget", DefaultBudget, "the time the runs should take; the duration, then the seeds, are scaled down to fit, and the runs are cut short at 1.5 × it")
	rate := fs.Float64("rate", DefaultRate, "the per-trial violation rate every promise must exclude at 95 % to pass (0.25: 11 trials without a violation per promise cell; smaller needs more)")
	if err := cli.Parse(fs, args, "usage of torture gate: derive a lock's cells from the promises it declares and the literature's table, run them, and fail when it breaks a promise (exit 1; 2 on error; 3 when inconclusive)", stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gate: unexpected argument %q (see torture gate -h)", fs.Arg(0))
	}
	if *lock == "" {
		return errors.New("gate: --lock is required (see torture gate -h)")
	}
	seedList, err := f.Check()
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if *budget <= 0 {
		return fmt.Errorf("gate: --budget must be positive, got %s", *budget)
	}
	if !(*rate > 0 && *rate < 1) {
		return fmt.Errorf("gate: --rate must be between 0 and 1 (a per-trial violation rate), got %g", *rate)
	}
	o := Options{Lock: *lock, Seeds: seedList, Duration: f.Duration, Budget: *budget, CheckTimeout: f.CheckTimeout, Cells: f.Cells, Jobs: f.Jobs, Rate: *rate,
		Command: "torture gate " + strings.Join(args, " ")}
	if f.List {
		return list(o, stdout)
	}
	return run(ctx, o, f.Out, stdout, stderr)
}

// list prints the cells the gate o would run, with their expectations
// and promises, the kinds it leaves out and its budget.
func list(o Options, stdout io.Writer) error {
	plan, err := NewPlan(o)
	var budgetErr error
	if errors.Is(err, ErrBudget) {
		// The cells are listed all the same, and the last line says
		// that the budget does not hold them.
		budgetErr = err
		big := o
		big.Budget = 1000 * time.Hour
		plan, err = NewPlan(big)
	}
	if err != nil {
		return err
	}
	res := plan.Result()
	fmt.Fprintf(stdout, "%s declares: %s\n", res.Lock, strings.Join(res.Traits, ", "))
	for _, sp := range plan.Cells() {
		fmt.Fprintf(stdout, "%-36s expect %s\n", sp.Name, sp.Expect)
		if sp.Promise != "" {
			fmt.Fprintf(stdout, "%-36s promise: %s\n", "", sp.Promise)
		}
	}
	for _, n := range res.NotRun() {
		fmt.Fprintf(stdout, "not run: %s: %s\n", n.Kinds, n.Why)
	}
	fmt.Fprintf(stdout, "seeds %v, %s a run, about %s\n", res.Seeds, res.Duration, res.expected())
	if res.Scaled != "" {
		fmt.Fprintf(stdout, "scaled: %s\n", res.Scaled)
	}
	if budgetErr != nil {
		fmt.Fprintf(stdout, "the run would stop: %v (a larger --budget, or fewer cells with --cells)\n", budgetErr)
	}
	return nil
}

// run runs the gate o in a folder of its own under out and prints its
// verdict.
func run(ctx context.Context, o Options, out string, stdout, stderr io.Writer) error {
	o.Progress = func(p matrix.Progress) {
		if p.Cell != "" {
			fmt.Fprintf(stderr, "gate: [%d/%d] %s seed %d (%s elapsed, about %s left)\n", p.Done+1, p.Total, p.Cell, p.Seed,
				p.Elapsed.Round(time.Second), p.Left.Round(time.Second))
		}
	}
	plan, err := NewPlan(o)
	if err != nil {
		return err
	}
	// A folder of its own, even beside a gate started in the same second
	// with the same --out (their histories would mix); created only once
	// the plan holds, so a refused gate leaves no folder behind, --out
	// included.
	_, dir, err := safefs.Fresh(out, dirName(o.Lock)+"-"+time.Now().UTC().Format("20060102T150405"))
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	plan = plan.In(dir)
	res := plan.Result()
	if res.Scaled != "" {
		fmt.Fprintf(stderr, "gate: scaled to the budget: %s\n", res.Scaled)
	}
	fmt.Fprintf(stderr, "gate %s: %d cells × %d seeds, %s a run, about %s → %s\n", res.Lock, len(plan.Cells()), len(res.Seeds), res.Duration,
		res.expected(), dir)
	res, err = plan.Run(ctx)
	if len(res.Cells) > 0 {
		fmt.Fprint(stdout, Markdown(res))
		fmt.Fprintf(stdout, "\nsummary: %s, %s, %s, %s\n", filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "index.html"), filepath.Join(dir, "gate.json"))
		fmt.Fprintln(stdout, VerdictLine(res, colour(stdout)))
	}
	return err
}

// VerdictLine is the gate's last line, read at a glance: "GATE PASS",
// "GATE BROKEN" or "GATE INCONCLUSIVE", the lock and the count behind it
// (a pass: it keeps its promises); in bold on green, red or amber when
// colour is set. When the runs broke the lease where the literature
// expects it of the lock's class, a second line says where
// (Result.KnownUnsafe): a pass is not "safe under every fault".
func VerdictLine(res Result, colour bool) string {
	broken, off := 0, 0
	for _, c := range res.Cells {
		switch {
		case c.Broken != "":
			broken++
		case !c.Matches:
			off++
		}
	}
	why := fmt.Sprintf("keeps its promises, every one of %d cells matches", len(res.Cells))
	switch res.Status {
	case StatusBroken:
		why = fmt.Sprintf("%d of %d cells broke a promise the lock declared", broken, len(res.Cells))
	case StatusInconclusive:
		why = fmt.Sprintf("no promise broke, %d of %d cells did not match (never a pass)", off, len(res.Cells))
	}
	word := " GATE " + res.Verdict() + " "
	if colour {
		code := map[Status]string{StatusPass: "42;97", StatusBroken: "41;97", StatusInconclusive: "43;30"}[res.Status]
		word = "\x1b[1;" + code + "m" + word + "\x1b[0m"
	}
	line := fmt.Sprintf("%s %s: %s", word, report.Printable(res.Lock), why)
	if u := res.KnownUnsafe(); u != "" {
		line += "\n" + u
	}
	return line
}

// colour reports whether w is a terminal and NO_COLOR (no-color.org) is
// unset: only then does the verdict line carry colour codes.
func colour(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// dirName turns a lock name into part of a directory name.
func dirName(lock string) string {
	if strings.HasPrefix(lock, locks.ExecPrefix) {
		return "exec"
	}
	return lock
}
