package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/locktorture/locktorture/report"
)

// publishCmd is `torture matrix publish MATRIXDIR OUT` (#16): the bundle
// that results/ publishes, from one matrix's output.
func publishCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix publish", flag.ContinueOnError)
	fs.Usage = func() {}
	if err := parseFlags(fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "torture matrix publish MATRIXDIR OUT: write the bundle that results/ publishes into OUT, which must not exist or be empty: the summaries (summary.md, summary.json, junit.xml, index.html) and %s, each run's report.html, results.json and schedule.json (unpack it beside index.html for the links)\n", report.RunsArchive)
		}
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("matrix publish: want MATRIXDIR and OUT: torture matrix publish MATRIXDIR OUT")
	}
	size, err := report.Publish(fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "published %s → %s: %.1f MB\n", fs.Arg(0), fs.Arg(1), float64(size)/1e6)
	return nil
}
