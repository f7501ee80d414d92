package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/report"
)

// Exit statuses.
const (
	exitValid     = 0
	exitViolation = 1
	exitError     = 2
)

// errViolation is returned when a check found a safety violation;
// errUnknown when a verdict could not be reached.
var (
	errViolation = errors.New("safety violation")
	errUnknown   = errors.New("verdict unknown")
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	case errors.Is(err, errUnknown):
		return exitError
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

const usage = `usage: torture <command> [flags]

commands:
  run     run one torture test and write <out>/<run-id>/
  check   re-check a stored run directory or a bare history file
  explain name the cause of each violation of a run directory or history file, from its evidence
  shrink  the fewest fault steps of a run (and the shortest duration) that still reproduce its violation; writes minimal.json
  matrix  run the comparison matrix (every lock × fault × fencing) against the literature's expectations
          ('torture matrix merge OUT DIR...' joins the outputs of its shards;
          'torture matrix publish MATRIXDIR OUT' writes the bundle results/ publishes)
  gate    the release gate of one lock: the cells its declared promises and the literature give it;
          exit 1 when it breaks a promise it declared
  envelope  sweep and bisect one fault's size (÷ TTL) to find where each lock's safety ends

'torture <command> -h' lists the flags of a command.
`

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
	case "client":
		return clientCmd(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q (want run, check, explain, shrink, matrix, gate or envelope)", args[0])
	}
}

// parseFlags parses args with fs, turning the flag package's multi-line
// complaint into one line; -h prints the usage and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage of torture %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %v (see torture %s -h)", fs.Name(), err, fs.Name())
	}
	return nil
}
