package report

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/internal/safefs"
)

// publishedFiles are the summaries Publish copies as they are.
var publishedFiles = []string{"summary.md", "summary.json", "junit.xml", "index.html"}

// publishedRunFiles are what Publish keeps of each run (not the nodes'
// folders), and HistoryFile where PublishOptions.keeps says.
var publishedRunFiles = []string{"report.html", "results.json", "schedule.json"}

// HistoryFile is a run's history, kept so that `torture check` and
// `torture explain` can re-judge the run from the bundle alone.
const HistoryFile = "history.jsonl"

// PublishOptions say what a bundle keeps beside every run's reports.
type PublishOptions struct {
	// AllHistories keeps every run's history (the nightly's artifact);
	// by default those of runs that showed a violation or decided
	// nothing and of each cell's first run, about HistoryBudget.
	AllHistories bool
	// ArchiveURL, when set, is where the runs archive will be published:
	// the manifest names it as a source.
	ArchiveURL string
}

// HistoryBudget is what the default histories take under xz: a full
// matrix's 402 runs wrote 180 MB, 13 MB compressed, two thirds kept.
const HistoryBudget = 10 << 20

func (o PublishOptions) keeps(r CellRun, i int) bool {
	return o.AllHistories || i == 0 || r.Outcome() != checker.OutcomeSafe
}

// RunsArchive is the archive of a bundle's runs; unpacked beside
// index.html, its links work. xz, not gzip: every report embeds
// porcupine's script once per model, which gzip's 32 KiB window cannot
// see repeat; xz's 64 MiB dictionary spans many reports, a third of the
// gzip size.
const RunsArchive = "runs.tar.xz"

// Publish writes into dst (absent or empty) the bundle results/ publishes
// from the matrix directory src: the summaries, RunsArchive of the runs'
// publishedRunFiles and kept histories under the paths the summaries
// link, and the ManifestFile. It returns the bundle's size in bytes.
//
// src may come from someone else and the bundle is public: Publish packs
// only regular files reached without a link, refuses a run directory
// that is absolute or leaves src, and renames a temporary folder to dst
// at the end, so a refusal leaves dst as it was.
func Publish(src, dst string, o PublishOptions) (int64, error) {
	m, err := ReadMatrix(src)
	if err != nil {
		return 0, fmt.Errorf("report: publish: %w", err)
	}
	// A run folder belongs to one run: 200 runs naming one packed it 200
	// times, a minute of compression from a 5.5 MB input.
	owner := map[string]string{}
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if r.Dir == "" {
				continue // never ran
			}
			if err := safefs.Local(r.Dir); err != nil {
				return 0, fmt.Errorf("report: publish: cell %s, run %s: its directory %w", Printable(c.Name), Printable(r.RunID), err)
			}
			dir := filepath.Clean(r.Dir)
			if o, ok := owner[dir]; ok {
				return 0, fmt.Errorf("report: publish: cell %s, run %s: its directory %s is also run %s's (a run folder belongs to one run)", Printable(c.Name), Printable(r.RunID), Printable(r.Dir), Printable(o))
			}
			owner[dir] = r.RunID
		}
	}
	var size int64
	err = safefs.WriteDir(dst, 0o755, func(tmp string) error {
		for _, name := range publishedFiles {
			b, err := safefs.ReadFileIn(src, name)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
				return err
			}
			size += int64(len(b))
		}
		n, err := writeRunsArchive(filepath.Join(tmp, RunsArchive), src, m, o)
		size += n
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(tmp, RunsArchive))
		if err != nil {
			return err
		}
		var sources []string
		if o.ArchiveURL != "" {
			sources = append(sources, o.ArchiveURL)
		}
		return WriteManifest(tmp, Manifest{Archives: []Archive{NewArchive(RunsArchive, b, sources...)}})
	})
	if err != nil {
		return 0, fmt.Errorf("report: publish: %w", err)
	}
	return size, nil
}

// writeRunsArchive packs m's runs' files from src; it returns its size.
func writeRunsArchive(path, src string, m Matrix, o PublishOptions) (size int64, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	zw, err := xz.WriterConfig{DictCap: 64 << 20}.NewWriter(f)
	if err != nil {
		return 0, errors.Join(err, f.Close())
	}
	tw := tar.NewWriter(zw)
	defer func() {
		err = errors.Join(err, tw.Close(), zw.Close())
		if st, serr := f.Stat(); serr == nil {
			size = st.Size()
		}
		err = errors.Join(err, f.Close())
	}()
	for _, c := range m.Cells {
		for i, r := range c.Runs {
			if r.Dir == "" {
				continue
			}
			names := publishedRunFiles
			if o.keeps(r, i) {
				names = append(slices.Clone(names), HistoryFile)
			}
			for _, name := range names {
				rel := filepath.Join(r.Dir, name)
				b, err := safefs.ReadFileIn(src, rel)
				if errors.Is(err, fs.ErrNotExist) {
					continue // a run cut short may lack its report
				}
				if err != nil {
					return 0, fmt.Errorf("run %s: %w", r.RunID, err)
				}
				hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), ModTime: m.Started.Truncate(time.Second)}
				if err := tw.WriteHeader(hdr); err != nil {
					return 0, err
				}
				if _, err := tw.Write(b); err != nil {
					return 0, err
				}
			}
		}
	}
	return 0, nil
}
