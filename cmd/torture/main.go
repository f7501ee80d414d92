package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	_ "github.com/locktorture/locktorture/cluster/docker" // the docker backend (--backend docker)
	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/internal/cli"
	"github.com/locktorture/locktorture/internal/suggest"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// Exit statuses, the same for every command (and gate.Main): CI tells
// a broken lock from a broken run from a run that decided nothing.
const (
	exitValid     = 0 // every verdict valid, every cell as expected
	exitViolation = 1 // a violation: a lock broke a promise, a cell contradicts its expectation
	exitError     = 2 // an error: bad input, a run that could not run
	exitUnknown   = 3 // inconclusive: some verdict unknown, never a pass
)

// errViolation is returned when a check found a safety violation;
// errUnknown when a verdict could not be reached.
var (
	errViolation = errors.New("safety violation")
	errUnknown   = errors.New("verdict unknown")
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal cancels the run, which stops its clients,
		// checks what it recorded and cleans up; a second one always
		// ends the process at once (the default action), whatever the
		// run still waits on (a client's final release, up to its TTL).
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode maps the error of run to the exit status, in one place.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitValid
	case errors.Is(err, flag.ErrHelp):
		return exitValid
	case errors.Is(err, errViolation), errors.Is(err, gate.ErrBroken):
		return exitViolation
	case errors.Is(err, errUnknown) && !strings.Contains(err.Error(), ": "):
		return exitUnknown // the summary on stdout says why
	case errors.Is(err, errUnknown), errors.Is(err, gate.ErrInconclusive):
		fmt.Fprintf(stderr, "torture: %s\n", printableLines(err.Error()))
		return exitUnknown
	default:
		fmt.Fprintf(stderr, "torture: %s\n", printableLines(err.Error()))
		return exitError
	}
}

// printableLines is report.Printable line by line: an error may quote a
// history (a key, a token, a line that does not parse) and may span
// several lines (a node's log tail).
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = report.Printable(l)
	}
	return strings.Join(lines, "\n")
}

const usage = `usage: torture <command> [flags] [arguments]

commands:
  run       run one torture test and write <out>/<run-id>/
  check     re-check a stored run directory or a bare history file
  explain   name the cause of each violation of a run directory or history file
  shrink    the fewest fault steps (and the shortest duration) that still reproduce a run's violation
  matrix    run the comparison matrix: every lock × the rows of the literature table its promises select
  matrix merge    join the outputs of the matrix's shards
  matrix publish  write the bundle results/ publishes
  matrix trend    compare bundles night by night: rates, intervals, versions; exit 1 when a cell's rate moved
  gate      the release gate of one lock: its rows of the table; exit 1 when it breaks a promise it declared
  envelope  sweep and bisect one fault's size (÷ TTL) to find where each lock's safety ends
  client    serve a registered Go lock over the client protocol (for exec: or --client-process)
  version   the versions of this binary, its commit and the libraries that decide verdicts

'torture <command> -h' lists the flags of a command; flags may come anywhere on the line.
exit status: 0 valid or as expected, 1 a violation or a contradicted expectation,
2 an error, 3 inconclusive (a verdict unknown, which is never a pass).
`

// commands are the commands run dispatches, for suggestions.
var commands = []string{"run", "check", "explain", "shrink", "matrix", "gate", "envelope", "client", "version", "help"}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return runCmd(ctx, args[1:], stdout, stderr)
	case "check":
		return checkCmd(ctx, args[1:], stdout, stderr)
	case "explain":
		return explainCmd(ctx, args[1:], stdout, stderr)
	case "shrink":
		return shrinkCmd(ctx, args[1:], stdout, stderr)
	case "matrix":
		return matrixCmd(ctx, args[1:], stdout, stderr)
	case "gate":
		return gate.Command(ctx, args[1:], stdout, stderr)
	case "envelope":
		return envelopeCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return versionCmd(stdout)
	case "client":
		return clientCmd(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q%s (want %s; torture help lists them)", args[0], suggest.DidYouMean(args[0], commands), strings.Join(commands[:len(commands)-1], ", "))
	}
}

// versionCmd prints the binary's versions: its module, its commit (from
// the build's VCS stamp: "unknown" without one), Go, and the libraries
// whose versions a verdict depends on.
func versionCmd(stdout io.Writer) error {
	v := report.Versions()
	mod := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		mod = bi.Main.Version
	}
	commit, dirty := matrix.Commit()
	if dirty {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(stdout, "torture %s, commit %s, %s\n", mod, commit, v["go"])
	keys := make([]string, 0, len(v))
	for k := range v {
		if k != "go" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "  %s %s\n", k, v[k])
	}
	return nil
}

// parseFlags parses args with fs: flags anywhere on the line, a one-line
// error naming the flag meant (cli.Parse); -h prints the usage and returns
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	return cli.Parse(fs, args, "usage of torture "+fs.Name()+":", stdout)
}
