// Package cli is the main of the module's helper commands (cmd/bench,
// cmd/redis-image, cmd/compose-cluster), written once: run under a context
// that Ctrl-C and SIGTERM cancel, the error mapped to an exit status in one
// place (STYLE rule 18); cmd/torture keeps a main of its own, whose exit
// statuses say more. Parse parses every command's flags the same way.
//
// It imports the standard library and internal/suggest.
package cli

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

	"github.com/locktorture/locktorture/internal/suggest"
)

// Main runs run with the arguments under a context SIGINT and SIGTERM cancel,
// and exits with exitStatus.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	os.Exit(exitStatus(name, err))
}

// exitStatus is 0 for nil and flag.ErrHelp, else 2 after one line "name:
// error" on stderr.
func exitStatus(name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	return 2
}

// Parse parses args with fs, flags anywhere on the line ("--" ends them),
// leaving the arguments in fs.Args(). Its error is one line, naming the flag
// most likely meant when one is unknown; -h writes usage and every flag to
// stdout and returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, usage)
			fs.PrintDefaults()
			return err
		}
		if err != nil {
			return fmt.Errorf("%s: %v%s (see torture %s -h)", fs.Name(), err, flagHint(fs, err), fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// flag stops at the first argument, or consumed a "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// flagHint is " (did you mean --x?)" for an unknown flag close to one of
// fs's, "" otherwise.
func flagHint(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := suggest.Closest(strings.TrimLeft(name, "-"), names); c != "" {
		return " (did you mean --" + c + "?)"
	}
	return ""
}
