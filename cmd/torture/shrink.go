package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/shrink"
)

// shrinkCmd is `torture shrink RUN` (shrink.Run): the fewest fault steps,
// then the shortest duration, that still reproduce a violation within --tries
// replays, written as RUN/minimal.json (or minimal-1.json, …) with the
// command that replays it.
func shrinkCmd(fs *flag.FlagSet) runFunc {
	var o shrink.Options
	fs.IntVar(&o.Tries, "tries", 3, "replays of each candidate schedule; it reproduces when one of them violates")
	fs.DurationVar(&o.CheckTimeout, "check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	fs.StringVar(&o.Lock, "lock", "", "the stored lock, named again: needed to replay a client process (exec:...), which shrink never runs unasked")
	fs.StringVar(&o.Backend, "backend", "", "the stored backend, named again: needed to replay on an external backend or a docker image other than the default")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		o.Log = stderr
		if fs.NArg() != 1 {
			return fmt.Errorf("shrink: want one run directory, got %d arguments (see torture shrink -h)", fs.NArg())
		}
		res, err := shrink.Run(ctx, fs.Arg(0), o)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d of %d fault steps reproduce a violation within %d tries, over %s (%d replays):\n", len(res.Keep), len(res.Schedule.Steps), o.Tries, res.Duration, res.Replays)
		for _, i := range res.Keep {
			st := res.Schedule.Steps[i]
			fmt.Fprintf(stdout, "  step %d at %s for %s: %s\n", i, time.Duration(st.At), time.Duration(st.For), report.Printable(st.Desc))
		}
		fmt.Fprintf(stdout, "written to %s; replay it with:\n  %s\n", res.Minimal, report.Printable(harness.CommandLine(res.Replay)))
		return nil
	}
}
