package matrix

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/report"
)

// ErrShards marks shard outputs that Merge refuses to join: of different
// commits, cell lists, seeds, durations or shard counts, overlapping, or
// with a shard missing. Its message says which.
var ErrShards = errors.New("matrix: merge")

// shardOutput is one shard's output directory, read.
type shardOutput struct {
	dir string
	m   report.Matrix
}

// Merge joins the outputs of the shards of one matrix (Run with
// Options.Shard), in dirs, into out, which it creates (it may exist, if
// empty): runs/ (each run's directory copied from its shard) and the
// summaries, written by report.WriteMatrix as Run writes them. Each cell
// is judged by the function Run uses, over the runs of every shard, so
// the merged summaries are those of the whole matrix run on one
// machine, but for the times (Started is the earliest shard's start,
// Elapsed the sum of the shards') and what the runs measured.
//
// Merge refuses, with an error wrapping ErrShards that names the
// directories, shards that do not make one matrix: a directory that is
// not a shard's output, shards of different commits (or of no known
// commit), dirty or not, of different cell lists, seeds, durations,
// shard counts or Redis versions, two outputs of one shard, a shard
// missing, a run in two shards or in none, or a shard whose summary
// lacks a run of its plan. It writes nothing then. Uncommitted changes
// in every shard are allowed, as Merge cannot tell them apart; the
// merged summaries record them (Matrix.Dirty).
func Merge(out string, dirs []string) (report.Matrix, error) {
	shards, err := readShards(dirs)
	if err != nil {
		return report.Matrix{}, err
	}
	if err := checkShards(shards); err != nil {
		return report.Matrix{}, err
	}
	m := merged(shards)
	if err := createEmpty(out); err != nil {
		return m, err
	}
	if err := os.Mkdir(filepath.Join(out, "runs"), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return m, fmt.Errorf("matrix: merge: %w", err)
	}
	// Each run directory from the shard that ran it.
	from := make(map[string]string) // run dir → shard dir
	for _, s := range shards {
		for _, c := range s.m.Cells {
			for _, r := range c.Runs {
				from[r.Dir] = s.dir
			}
		}
	}
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if r.Dir == "" || filepath.IsAbs(r.Dir) || !filepath.IsLocal(r.Dir) {
				return m, fmt.Errorf("%w: %s: run %s has the directory %q, not one inside the shard's", ErrShards, from[r.Dir], r.RunID, r.Dir)
			}
			if err := copyTree(filepath.Join(out, r.Dir), filepath.Join(from[r.Dir], r.Dir)); err != nil {
				return m, fmt.Errorf("matrix: merge: run %s: %w", r.RunID, err)
			}
		}
	}
	if err := report.WriteMatrix(out, m); err != nil {
		return m, err
	}
	return m, nil
}

// readShards reads the summaries in dirs, sorted by shard index.
func readShards(dirs []string) ([]shardOutput, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no shard directory given", ErrShards)
	}
	var shards []shardOutput
	for _, d := range dirs {
		m, err := report.ReadMatrix(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s has no summary.json: not a matrix's output directory", ErrShards, d)
		case err != nil:
			return nil, fmt.Errorf("%w: %s: %v", ErrShards, d, err)
		case m.Shard == nil:
			return nil, fmt.Errorf("%w: %s is a whole matrix, not a shard's output (run with --shard i/n)", ErrShards, d)
		}
		shards = append(shards, shardOutput{dir: d, m: m})
	}
	slices.SortStableFunc(shards, func(a, b shardOutput) int { return cmp.Compare(a.m.Shard.Index, b.m.Shard.Index) })
	return shards, nil
}

// checkShards checks that shards are every shard of one matrix, each
// once, with every run in exactly one of them.
func checkShards(shards []shardOutput) error {
	first := shards[0]
	f := first.m
	if f.Commit == "" {
		return fmt.Errorf("%w: %s records no commit (built without VCS information, outside a git work tree): cannot tell which code ran it", ErrShards, first.dir)
	}
	for _, s := range shards[1:] {
		m := s.m
		var what, a, b string
		switch {
		case m.Shard.Count != f.Shard.Count:
			what, a, b = "shard counts", fmt.Sprint(f.Shard.Count), fmt.Sprint(m.Shard.Count)
		case m.Commit != f.Commit || m.Dirty != f.Dirty:
			what, a, b = "commits", commitName(f), commitName(m)
		case !slices.Equal(m.Shard.Cells, f.Shard.Cells):
			what = "cell lists"
			a, b = cellsDiff(f.Shard.Cells, m.Shard.Cells)
		case !slices.Equal(m.Seeds, f.Seeds):
			what, a, b = "seeds", fmt.Sprint(f.Seeds), fmt.Sprint(m.Seeds)
		case m.Duration != f.Duration:
			what, a, b = "durations", f.Duration, m.Duration
		case m.RedisVersion != "" && f.RedisVersion != "" && m.RedisVersion != f.RedisVersion:
			what, a, b = "Redis versions", f.RedisVersion, m.RedisVersion
		}
		if what != "" {
			return fmt.Errorf("%w: different %s: %s (shard %d/%d) has %s, %s (shard %d/%d) has %s",
				ErrShards, what, first.dir, f.Shard.Index, f.Shard.Count, a, s.dir, m.Shard.Index, m.Shard.Count, b)
		}
	}
	// Each shard once, and all of them.
	count := f.Shard.Count
	seen := make(map[int]string)
	for _, s := range shards {
		i := s.m.Shard.Index
		if i < 1 || i > count {
			return fmt.Errorf("%w: %s is shard %d/%d", ErrShards, s.dir, i, count)
		}
		if d, ok := seen[i]; ok {
			return fmt.Errorf("%w: overlapping shards: %s and %s are both shard %d/%d", ErrShards, d, s.dir, i, count)
		}
		seen[i] = s.dir
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: shard %s of %d missing (given: %s)", ErrShards, strings.Join(missing, ", "), count, strings.Join(dirsOf(shards), ", "))
	}
	// Every run of the matrix in exactly one plan, and in its shard's
	// summary, run or listed as never run.
	owner := make(map[report.ShardRun]shardOutput)
	for _, s := range shards {
		for _, r := range s.m.Shard.Runs {
			if o, ok := owner[r]; ok {
				return fmt.Errorf("%w: overlapping shards: cell %s, seed %d is in %s (shard %d/%d) and in %s (shard %d/%d)",
					ErrShards, r.Cell, r.Seed, o.dir, o.m.Shard.Index, count, s.dir, s.m.Shard.Index, count)
			}
			owner[r] = s
		}
		ran := make(map[report.ShardRun]bool)
		for _, c := range s.m.Cells {
			for _, r := range c.Runs {
				ran[report.ShardRun{Cell: c.Name, Seed: r.Seed}] = true
			}
			for _, seed := range c.NotRun {
				ran[report.ShardRun{Cell: c.Name, Seed: seed}] = true
			}
		}
		for _, r := range s.m.Shard.Runs {
			if !ran[r] {
				return fmt.Errorf("%w: %s (shard %d/%d) lacks its run of cell %s, seed %d", ErrShards, s.dir, s.m.Shard.Index, count, r.Cell, r.Seed)
			}
			delete(ran, r)
		}
		for r := range ran {
			return fmt.Errorf("%w: %s (shard %d/%d) holds a run of cell %s, seed %d, that is not in its plan", ErrShards, s.dir, s.m.Shard.Index, count, r.Cell, r.Seed)
		}
	}
	for _, c := range f.Shard.Cells {
		for _, seed := range f.Seeds {
			if _, ok := owner[report.ShardRun{Cell: c.Name, Seed: seed}]; !ok {
				return fmt.Errorf("%w: cell %s, seed %d is in no shard", ErrShards, c.Name, seed)
			}
		}
	}
	return nil
}

// merged joins checked shards into the whole matrix.
// sameMachine is the machine of shards that all ran on one kind of
// machine (the same CPUs, OS and architecture: shards run side by side,
// or on identical runners), with the highest load any saw at its start
// and at its end; nil when they differ or one does not say.
func sameMachine(shards []shardOutput) *report.Machine {
	var m *report.Machine
	for _, s := range shards {
		sm := s.m.Machine
		switch {
		case sm == nil:
			return nil
		case m == nil:
			cp := *sm
			m = &cp
		case sm.CPUs != m.CPUs || sm.OS != m.OS || sm.Arch != m.Arch:
			return nil
		default:
			m.LoadStart, m.LoadEnd = max(m.LoadStart, sm.LoadStart), max(m.LoadEnd, sm.LoadEnd)
		}
	}
	return m
}

func merged(shards []shardOutput) report.Matrix {
	f := shards[0].m
	m := report.Matrix{
		Started: f.Started, Command: f.Command, Seeds: f.Seeds, Duration: f.Duration,
		Versions: f.Versions, Commit: f.Commit, Dirty: f.Dirty,
		// Every shard records the whole matrix's scenarios (#16).
		Scenarios: f.Scenarios,
		Machine:   sameMachine(shards),
	}
	seedPos := make(map[int64]int, len(f.Seeds))
	for i, s := range f.Seeds {
		seedPos[s] = i
	}
	bySeed := func(a, b int64) int { return cmp.Compare(seedPos[a], seedPos[b]) }
	for _, s := range shards {
		if s.m.Started.Before(m.Started) {
			m.Started = s.m.Started
		}
		if m.RedisVersion == "" {
			m.RedisVersion = s.m.RedisVersion
		}
		m.Elapsed += s.m.Elapsed
		m.Interrupted = m.Interrupted || s.m.Interrupted
	}
	for _, sc := range f.Shard.Cells {
		var cell *report.Cell
		for _, s := range shards {
			for _, c := range s.m.Cells {
				if c.Name != sc.Name {
					continue
				}
				if cell == nil {
					cp := c // what describes the cell, from its first shard
					cp.Runs, cp.NotRun = nil, nil
					cell = &cp
				}
				cell.Runs = append(cell.Runs, c.Runs...)
				cell.NotRun = append(cell.NotRun, c.NotRun...)
			}
		}
		slices.SortStableFunc(cell.Runs, func(a, b report.CellRun) int { return bySeed(a.Seed, b.Seed) })
		slices.SortStableFunc(cell.NotRun, bySeed)
		aggregate(cell)
		m.Cells = append(m.Cells, *cell)
	}
	return m
}

// createEmpty creates dir (mode 0700), or accepts it when it exists and
// is empty: a merge never mixes its output with another.
func createEmpty(dir string) error {
	err := os.MkdirAll(filepath.Dir(dir), 0o700)
	if err == nil {
		err = os.Mkdir(dir, 0o700)
	}
	if errors.Is(err, fs.ErrExist) {
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			return fmt.Errorf("matrix: merge: %w", rerr)
		}
		if len(entries) > 0 {
			return fmt.Errorf("%w: %s exists and is not empty", ErrShards, dir)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("matrix: merge: %w", err)
	}
	return nil
}

// copyTree copies the directory src to dst (which must not exist):
// folders, regular files and symbolic links, keeping their modes.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(target, path, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a file, folder or link (%s)", path, d.Type())
	})
}

func copyFile(dst, src string, perm fs.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

func commitName(m report.Matrix) string {
	if m.Dirty {
		return m.Commit + " with uncommitted changes"
	}
	return m.Commit
}

// cellsDiff names the first difference of two cell lists.
func cellsDiff(a, b []report.ShardCell) (string, string) {
	name := func(cs []report.ShardCell, i int) string {
		if i >= len(cs) {
			return fmt.Sprintf("no cell %d (%s in all)", i+1, cellsCount(len(cs)))
		}
		return fmt.Sprintf("cell %d %s (expect %s)", i+1, cs[i].Name, cs[i].Expect)
	}
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return name(a, i), name(b, i)
		}
	}
	return "", ""
}

func cellsCount(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}

func dirsOf(shards []shardOutput) []string {
	out := make([]string, len(shards))
	for i, s := range shards {
		out[i] = fmt.Sprintf("%s (%d/%d)", s.dir, s.m.Shard.Index, s.m.Shard.Count)
	}
	return out
}
