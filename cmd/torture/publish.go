package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// publishAbout is the -h of torture matrix publish.
const publishAbout = "torture matrix publish [--readme FILE] [--findings FILE] [--all-histories] MATRIXDIR OUT: write the bundle that results/ publishes into OUT, which must not exist or be empty: the summaries (summary.md, summary.json, junit.xml, index.html) and " + report.RunsArchive + ", each run's report.html, results.json and schedule.json and the histories kept (unpack it beside index.html, tar -xJf " + report.RunsArchive + ", for the links, torture check and torture explain)"

// publishCmd is torture matrix publish (publishAbout; report.Publish).
func publishCmd(fs *flag.FlagSet) runFunc {
	all := fs.Bool("all-histories", false, "keep every run's history (by default: every run that showed a violation or decided nothing, and the first of every cell)")
	readme := fs.String("readme", "", "also regenerate this README (e.g. results/README.md) from the bundle: the twelve scenarios, every cell's rate and what would contradict it, with links relative to the README")
	url := fs.String("archive-url", "", "where "+report.RunsArchive+" will be published (a release asset): the manifest names it as the archive's source")
	findings := fs.String("findings", "", "also rewrite the findings table of this page (e.g. README.md, between its findings markers) from the bundle")
	return func(_ context.Context, _ []string, stdout, stderr io.Writer) error {
		if fs.NArg() != 2 {
			return errors.New("matrix publish: want MATRIXDIR and OUT: torture matrix publish [--readme FILE] [--findings FILE] MATRIXDIR OUT")
		}
		size, err := report.Publish(fs.Arg(0), fs.Arg(1), report.PublishOptions{AllHistories: *all, ArchiveURL: *url})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "published %s → %s: %.1f MB\n", fs.Arg(0), fs.Arg(1), float64(size)/1e6)
		if *readme != "" {
			if err := writeReadme(*readme, fs.Arg(1), size); err != nil {
				return fmt.Errorf("matrix publish: --readme: %w", err)
			}
			fmt.Fprintf(stderr, "regenerated %s from %s\n", *readme, fs.Arg(1))
		}
		if *findings != "" {
			page, err := findingsPage(*findings, fs.Arg(1))
			if err == nil {
				err = safefs.WriteFile(*findings, page, 0o644)
			}
			if err != nil {
				return fmt.Errorf("matrix publish: --findings: %w", err)
			}
			fmt.Fprintf(stderr, "rewrote the findings of %s from %s\n", *findings, fs.Arg(1))
		}
		return nil
	}
}

// findingsPage returns the page at path with its findings table
// (report.FindingsBlock's markers) rendered anew from the bundle
// (report.Findings): linked relative to the page, rows in the literature
// table's order, mutants apart.
func findingsPage(path, bundle string) ([]byte, error) {
	m, rel, page, err := bundlePage(path, bundle, "the page's")
	if err != nil {
		return nil, err
	}
	block := report.Findings(m, report.FindingsOptions{Bundle: rel, Rows: matrix.Rows(), Mutant: func(lock string) bool {
		spec, err := locks.Lookup(lock)
		return err == nil && spec.Mutant
	}})
	return report.ReplaceBlock(page, block, report.FindingsBlock)
}

// bundlePage reads the bundle's summary, its path relative to the page at
// path (relativeTo) and the page.
func bundlePage(path, bundle, inside string) (m report.Matrix, rel string, page []byte, err error) {
	if m, err = report.ReadMatrix(bundle); err != nil {
		return m, "", nil, err
	}
	if rel, err = relativeTo(path, bundle, inside); err != nil {
		return m, "", nil, err
	}
	page, err = os.ReadFile(path)
	return m, rel, page, err
}

// relativeTo is dir's path, with slashes, relative to the folder of the page
// at path; with inside (naming that folder), dir must lie in it.
func relativeTo(path, dir, inside string) (string, error) {
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(base, abs)
	if inside != "" && (err != nil || !filepath.IsLocal(rel)) {
		return "", fmt.Errorf("the bundle %s is not inside %s, %s directory", dir, base, inside)
	}
	return filepath.ToSlash(rel), err
}

// writeReadme regenerates the README at path from the published bundle, which
// its folder must hold, with relative links (safefs.WriteFile: a link at path
// is replaced).
func writeReadme(path, bundle string, size int64) error {
	m, err := report.ReadMatrix(bundle)
	if err != nil {
		return err
	}
	rel, err := relativeTo(path, bundle, "the README's")
	if err != nil {
		return err
	}
	others, err := report.PublishedBeside(filepath.Dir(path), strings.SplitN(rel, "/", 2)[0])
	if err != nil {
		return err
	}
	r := report.Readme{Matrix: m, Bundle: rel, Size: size, Others: others}
	return safefs.WriteFile(path, r.Markdown(), 0o644)
}

// consensusPage returns the page at path with its consensus block rendered
// from the bundle (report.Consensus), mutants left out.
func consensusPage(path, bundle string) ([]byte, error) {
	// docs/ links the bundle in results/ beside it: relative, with "..".
	m, rel, page, err := bundlePage(path, bundle, "")
	if err != nil {
		return nil, err
	}
	lookup := func(lock string) locks.Spec {
		spec, _ := locks.Lookup(lock)
		return spec
	}
	block := report.Consensus(m, report.ConsensusOptions{
		Bundle:    rel,
		Consensus: func(l string) bool { p := lookup(l).Promises; return p != nil && p.Consensus },
		Skip:      func(l string) bool { return lookup(l).Mutant },
		Refused:   refusedRow,
	})
	return report.ReplaceBlock(page, block, report.ConsensusBlock)
}

// refusedRow is why the harness refuses row of matrix.Literature on lock, as
// a run would print it without the kind's name, found offline
// (harness.FitsSchedule); "" when it runs.
func refusedRow(lock, row string) string {
	for _, r := range matrix.Literature {
		if r.Name != row {
			continue
		}
		cfg := r.Config
		cfg.Lock, cfg.Seed = lock, 1
		err := harness.FitsSchedule(cfg)
		if err == nil {
			return ""
		}
		why := err.Error()
		if _, after, ok := strings.Cut(why, " refused: "); ok {
			why = after
		}
		return why
	}
	return ""
}

// consensusBundle returns the newest folder of results whose summary holds a
// consensus lock's cell.
func consensusBundle(results string) (string, error) {
	entries, err := os.ReadDir(results)
	if err != nil {
		return "", err
	}
	best, bestM := "", report.Matrix{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m, err := report.ReadMatrix(filepath.Join(results, e.Name()))
		if err != nil {
			continue
		}
		has := slices.ContainsFunc(m.Cells, func(c report.Cell) bool {
			spec, err := locks.Lookup(c.Lock)
			return err == nil && spec.Promises != nil && spec.Promises.Consensus
		})
		if has && (best == "" || m.Started.After(bestM.Started)) {
			best, bestM = e.Name(), m
		}
	}
	if best == "" {
		return "", fmt.Errorf("no bundle in %s holds a consensus lock's cells", results)
	}
	return filepath.Join(results, best), nil
}

// trendAbout is the -h of torture matrix trend.
const trendAbout = "torture matrix trend [--out DIR] BUNDLE BUNDLE...: each cell's violation rate and interval per bundle (a matrix's output or a published bundle: a folder with summary.json), ordered by when each matrix started, with the module versions each was built with; writes DIR/trend.html and DIR/trend.md; exit 1 when a cell's rate in the latest bundle lies outside its interval in the one before"

// trendCmd is torture matrix trend (trendAbout; report.Trend): a cell whose
// rate moved is named, with both rates, intervals and bundles, and the exit
// is 1.
func trendCmd(fs *flag.FlagSet) runFunc {
	out := fs.String("out", ".", "directory the pages are written into (trend.html, trend.md)")
	return func(_ context.Context, _ []string, stdout, stderr io.Writer) error {
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
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
