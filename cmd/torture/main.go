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
	_ "github.com/locktorture/locktorture/locks/etcdlock" // etcd-mutex, the consensus lock (--lock etcd-mutex)
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
		// The first signal cancels the run (its clients stop, what it
		// recorded is checked, it cleans up); a second ends the process at
		// once, whatever the run still waits on (a final release, up to a TTL).
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
	}
	fmt.Fprintf(stderr, "torture: %s\n", printableLines(err.Error()))
	if errors.Is(err, errUnknown) || errors.Is(err, gate.ErrInconclusive) {
		return exitUnknown
	}
	return exitError
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

// runFunc runs a command; args are its arguments as given, flags
// included (matrix records them).
type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// command is one command of torture: the words that name it, what it
// takes, what it does, and how it runs. The one table, commands, gives
// the usage, the suggestions for a misspelt command, the dispatch, and
// the list the package doc holds (TestDocListsCommands).
type command struct {
	name, args, summary string
	// flags declares the command's flags and returns what runs once they
	// are parsed (open); run is a command that parses its own arguments.
	flags func(fs *flag.FlagSet) runFunc
	run   runFunc
	// about follows the flags in the command's -h: its synopsis and a
	// paragraph.
	about string
	// helpToStderr: -h writes to stderr, as stdout carries a protocol.
	helpToStderr bool
}

// commands are torture's commands, in the order the usage lists them.
var commands = []command{
	{name: "run", args: "[flags]", summary: "run one torture test and write <out>/<run-id>/", flags: runCmd},
	{name: "check", args: "[flags] DIR|FILE", summary: "re-check a stored run directory or a bare history file", flags: checkCmd},
	{name: "explain", args: "[flags] DIR|FILE", summary: "name the cause of each violation of a run directory or history file", flags: explainCmd},
	{name: "shrink", args: "[flags] DIR", summary: "the fewest fault steps (and the shortest duration) that still reproduce a run's violation", flags: shrinkCmd},
	{name: "matrix", args: "[flags]", summary: "the comparison matrix: every lock × the rows of the literature table its promises select (--quick: the release gate; --shard i/n: a share of it)", flags: matrixCmd},
	{name: "matrix merge", args: "OUT DIR...", summary: "join the outputs of a matrix's shards and judge its cells", flags: mergeCmd, about: mergeAbout},
	{name: "matrix publish", args: "[flags] MATRIXDIR OUT", summary: "the bundle results/ publishes (--readme, --findings: the pages made from it)", flags: publishCmd, about: publishAbout},
	{name: "matrix fetch", args: "[flags] BUNDLE...", summary: "fetch a published bundle's runs archive, verify its sha256 and hold it against the bundle's summary", flags: fetchCmd},
	{name: "matrix trend", args: "NIGHT... TONIGHT", summary: "compare bundles night by night: rates, intervals, versions; exit 1 when a cell's rate moved", flags: trendCmd, about: trendAbout},
	{name: "gate", args: "[flags]", summary: "the release gate of one lock, from the promises it declares; exit 1 when it breaks one", run: gate.Command},
	{name: "envelope", args: "[flags]", summary: "sweep and bisect one fault's size (÷ TTL) to find where each lock's safety ends", flags: envelopeCmd},
	{name: "client", args: "--lock NAME", summary: "serve a registered Go lock over the client protocol (for exec: or --client-process)", flags: clientCmd, helpToStderr: true},
	{name: "version", summary: "this binary's commit and the versions that decide verdicts", run: versionCmd},
}

// open runs c with args: its flag set named after it, its flags
// declared and parsed (flags anywhere on the line, a one-line error
// naming the flag meant: cli.Parse; -h prints the usage and about, and
// returns flag.ErrHelp).
func (c command) open(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if c.flags == nil {
		return c.run(ctx, args, stdout, stderr)
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	run := c.flags(fs)
	help := stdout
	if c.helpToStderr {
		help = stderr
	}
	if err := cli.Parse(fs, args, "usage of torture "+c.name+":", help); err != nil {
		if errors.Is(err, flag.ErrHelp) && c.about != "" {
			fmt.Fprintln(help, c.about)
		}
		return err
	}
	return run(ctx, args, stdout, stderr)
}

// usage lists the commands, from the table.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: torture <command> [flags] [arguments]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-15s %s\n", c.name, c.summary)
	}
	b.WriteString(`
'torture <command> -h' lists the flags of a command; flags may come anywhere on the line.
exit status: 0 valid or as expected, 1 a violation or a contradicted expectation,
2 an error, 3 inconclusive (a verdict unknown, which is never a pass).
`)
	return b.String()
}

// lookup returns the command args name (the longest that matches, so
// "matrix merge" before "matrix") and the arguments that follow it.
func lookup(args []string) (command, []string, bool) {
	best, n := command{}, 0
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(words) > n && len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			best, n = c, len(words)
		}
	}
	return best, args[n:], n > 0
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return errors.New("no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage())
		return nil
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, rest, ok := lookup(args)
	if !ok {
		var names []string
		for _, c := range commands {
			if !strings.Contains(c.name, " ") {
				names = append(names, c.name)
			}
		}
		return fmt.Errorf("unknown command %q%s (want %s; torture help lists them)", args[0], suggest.DidYouMean(args[0], append(names, "help")), strings.Join(names, ", "))
	}
	return c.open(ctx, rest, stdout, stderr)
}

// versionCmd prints the binary's versions: its module, its commit (from
// the build's VCS stamp: "unknown" without one), Go, and the libraries
// whose versions a verdict depends on.
func versionCmd(_ context.Context, _ []string, stdout, _ io.Writer) error {
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
