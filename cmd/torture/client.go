package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/locktorture/locktorture/locks"
)

// clientCmd is `torture client --lock NAME`: a client process that serves
// the registered Go lock NAME over the line protocol of
// locks/clients/PROTOCOL.md on its standard input and output (locks.Serve),
// until its input ends. The harness starts it for a run with
// --client-process (locks.AsProcess); `--lock exec:'torture client --lock
// NAME'` does the same by hand.
func clientCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	name := fs.String("lock", "", "the registered Go lock to serve: "+goLocks())
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("client: unexpected argument %q (see torture client -h)", fs.Arg(0))
	case *name == "":
		return errors.New("client: --lock is required (see torture client -h)")
	}
	spec, err := locks.Lookup(*name)
	switch {
	case err != nil:
		return fmt.Errorf("client: %w", err)
	case spec.Process:
		return fmt.Errorf("client: %s runs in client processes of its own; a client process serves a Go lock (%s)", *name, goLocks())
	}
	return locks.Serve(ctx, *name, os.Stdin, stdout)
}

// goLocks names the registered locks that run in this process, the ones
// a client process can serve.
func goLocks() string {
	s := ""
	for _, sp := range locks.Specs() {
		if sp.Process {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += sp.Name
	}
	return s
}
