package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locktorture/locktorture/report"
)

// trendCmd is `torture matrix trend [--out DIR] BUNDLE...`: the trend of
// the matrix over its bundles (report.Trend), written as trend.html and
// trend.md; exit 1 (errViolation) when a cell's rate in the latest
// bundle lies outside its interval in the one before, each such cell
// named with both rates, both intervals and both bundles.
func trendCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix trend", flag.ContinueOnError)
	out := fs.String("out", ".", "directory the pages are written into (trend.html, trend.md)")
	if err := parseFlagsAbout(fs, args, stdout, "torture matrix trend [--out DIR] BUNDLE BUNDLE...: each cell's violation rate and interval per bundle (a matrix's output or a published bundle: a folder with summary.json), ordered by when each matrix started, with the module versions each was built with; writes DIR/trend.html and DIR/trend.md; exit 1 when a cell's rate in the latest bundle lies outside its interval in the one before"); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("matrix trend: want at least two bundles: torture matrix trend [--out DIR] BUNDLE BUNDLE...")
	}
	t, err := report.ReadTrend(fs.Args())
	if err != nil {
		return fmt.Errorf("matrix %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("matrix trend: --out: %w", err)
	}
	if err := report.WriteTrend(*out, t); err != nil {
		return fmt.Errorf("matrix trend: %w", err)
	}
	fmt.Fprintf(stderr, "trend of %d bundles, %d cells: %s, %s\n", len(t.Nights), len(t.Cells), filepath.Join(*out, report.TrendHTML), filepath.Join(*out, report.TrendMarkdown))
	for _, c := range t.Changes {
		fmt.Fprintf(stdout, "version: %s %s → %s in %s\n", c.Module, orNone(c.From), orNone(c.To), t.Nights[c.Night].Dir)
	}
	reg := t.Regressions()
	if len(reg) == 0 {
		fmt.Fprintln(stdout, "no cell's rate moved outside the interval of the bundle before")
		return nil
	}
	lines := make([]string, len(reg))
	for i, m := range reg {
		lines[i] = "moved: " + report.Printable(m.String())
		fmt.Fprintln(stderr, lines[i]) // the exit status alone would say nothing of which cell
	}
	return fmt.Errorf("%w: %d cells moved outside the interval of the bundle before:\n%s", errViolation, len(reg), strings.Join(lines, "\n"))
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
