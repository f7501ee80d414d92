// Package cli is the main of the module's helper commands (cmd/bench,
// cmd/redis-image, cmd/compose-cluster), written once: run under a
// context that Ctrl-C and SIGTERM cancel, its error mapped to an exit
// status in one place (STYLE rule 18). cmd/torture keeps a main of its
// own, whose exit statuses say more (a violation, an unknown verdict).
//
// It imports only the standard library.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main runs run with the command's arguments under a context cancelled by
// SIGINT or SIGTERM, and exits: 0 when run returns nil or flag.ErrHelp,
// else 2, after one line "name: error" on stderr.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	os.Exit(exitStatus(name, err))
}

// exitStatus is the exit status of err, after printing it as one line
// "name: error" on stderr when it is one: 0 for nil and flag.ErrHelp, 2
// otherwise.
func exitStatus(name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	return 2
}
