package matrix

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/report"
)

// ErrShards marks shard outputs that Merge refuses to join: of different
// commits, cell lists, seeds, durations or shard counts, overlapping, or
// with a shard missing; shards that hold a symbolic link or anything but
// folders and regular files, or name a run directory outside runs/; an
// OUT inside a shard. Its message says which.
var ErrShards = errors.New("matrix: merge")

// ErrUnknownCommit is wrapped, with ErrShards, by the error of Merge for
// shards that record no known commit (report.UnknownCommit: binaries
// built without a VCS stamp), unless AcceptUnknownCommit is given.
var ErrUnknownCommit = errors.New("no known commit")

// MergeOption configures Merge.
type MergeOption func(*mergeOptions)

type mergeOptions struct {
	unknownCommit bool
}

// AcceptUnknownCommit lets Merge join shards that record no known commit,
// when none of them does: the caller vouches that one build ran them all,
// as scripts/matrix does for the shards it starts side by side from one
// binary. The merged summaries record the commit as unknown. The default
// refuses such shards (ErrUnknownCommit): two binaries without a stamp
// may be any two versions of the code.
func AcceptUnknownCommit() MergeOption {
	return func(o *mergeOptions) { o.unknownCommit = true }
}

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
// commit, see AcceptUnknownCommit), dirty or not, of different cell
// lists, seeds, durations, shard counts or Redis versions, two outputs
// of one shard, a shard missing, a run in two shards or in none, or a
// shard whose summary lacks a run of its plan. Uncommitted changes in
// every shard are allowed, as Merge cannot tell them apart; the merged
// summaries record them (Matrix.Dirty).
//
// Shards are artifacts from elsewhere (a CI job's download), so Merge
// also refuses, wrapping ErrShards: a summary.json, run folder or file
// in one that is a symbolic link (to a file, to a folder, or dangling)
// or not a folder or regular file; a run directory that is not a path
// under the shard's runs/ (absolute, with "..", or elsewhere), or that
// two runs share; an out that is a link, that is inside a shard or
// equal to one, or that holds a shard. Merge writes into a temporary
// folder beside out and renames it to out once everything is written:
// a refusal, found before or while copying, leaves out as it was
// (absent, or empty), and never writes outside it.
func Merge(out string, dirs []string, opts ...MergeOption) (report.Matrix, error) {
	var o mergeOptions
	for _, opt := range opts {
		opt(&o)
	}
	shards, err := readShards(dirs)
	if err != nil {
		return report.Matrix{}, err
	}
	if err := checkShards(shards, o); err != nil {
		return report.Matrix{}, err
	}
	if err := checkOut(out, shards); err != nil {
		return report.Matrix{}, err
	}
	// Each run directory from the shard that ran it, each its own: not
	// another's, nor inside another's.
	from := make(map[string]shardOutput) // clean run dir → shard
	outer := make(map[string]string)     // a folder holding run dirs → one of them
	for _, s := range shards {
		for _, c := range s.m.Cells {
			for _, r := range c.Runs {
				if err := runDir(r.Dir); err != nil {
					return report.Matrix{}, fmt.Errorf("%w: %s: cell %s, run %s: %v", ErrShards, s.dir, c.Name, r.RunID, err)
				}
				d := filepath.Clean(r.Dir)
				other := "" // another run's directory that d is, holds or is in
				if _, ok := from[d]; ok {
					other = d
				} else if inner, ok := outer[d]; ok {
					other = inner
				}
				for p := filepath.Dir(d); p != "." && other == ""; p = filepath.Dir(p) {
					if _, ok := from[p]; ok {
						other = p
					}
					outer[p] = d
				}
				if other != "" {
					return report.Matrix{}, fmt.Errorf("%w: %s: cell %s, run %s: its directory %s overlaps %s, another run's (one is, or holds, the other)", ErrShards, s.dir, c.Name, r.RunID, r.Dir, other)
				}
				from[d] = s
			}
		}
	}
	m := merged(shards)
	var filled error // fill's error: the shards' doing, or the copy's
	err = safefs.WriteDir(out, 0o700, func(tmp string) error {
		filled = fill(tmp, out, m, from)
		return filled
	})
	switch {
	case err == nil:
		return m, nil
	case filled != nil:
		return m, filled
	case errors.Is(err, safefs.ErrNotEmpty):
		return m, fmt.Errorf("%w: %s exists and is not empty", ErrShards, out)
	case errors.Is(err, safefs.ErrLink):
		return m, fmt.Errorf("%w: %s is a symbolic link: name the folder itself", ErrShards, out)
	}
	return m, fmt.Errorf("matrix: merge: %w", err)
}

// fill writes the merged matrix m into tmp, the folder that becomes out:
// each run's directory copied from its shard (from), then the summaries.
// Errors name out, not tmp.
func fill(tmp, out string, m report.Matrix, from map[string]shardOutput) error {
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			s := from[filepath.Clean(r.Dir)]
			err := safefs.CopyTree(tmp, s.dir, r.Dir)
			switch {
			case err == nil:
			case errors.Is(err, safefs.ErrLink), errors.Is(err, safefs.ErrNotRegular), errors.Is(err, safefs.ErrNotLocal):
				return fmt.Errorf("%w: %s: run %s: %s (a shard holds folders and regular files only)", ErrShards, s.dir, r.RunID, unTmp(err, tmp, out))
			default:
				return fmt.Errorf("matrix: merge: run %s: %s", r.RunID, unTmp(err, tmp, out))
			}
		}
	}
	if err := report.WriteMatrix(tmp, m); err != nil {
		return fmt.Errorf("matrix: merge: %s", unTmp(err, tmp, out))
	}
	return nil
}

// runDir checks a run directory named by a shard's summary: a path under
// runs/, without "..".
func runDir(dir string) error {
	if err := safefs.Local(dir); err != nil {
		return fmt.Errorf("its directory %w", err)
	}
	if first, rest, _ := strings.Cut(filepath.ToSlash(filepath.Clean(dir)), "/"); first != "runs" || rest == "" {
		return fmt.Errorf("its directory %q is not under runs/", dir)
	}
	return nil
}

// unTmp is the message of err, about the temporary folder tmp that
// WriteDir fills in out's place, naming out instead.
func unTmp(err error, tmp, out string) string {
	return strings.ReplaceAll(err.Error(), tmp, out)
}

// checkOut refuses an out that is a shard, inside one, or holds one:
// the merge would copy a shard into itself, or write into its input.
func checkOut(out string, shards []shardOutput) error {
	for _, s := range shards {
		in, err := safefs.Inside(out, s.dir)
		if err != nil {
			return fmt.Errorf("matrix: merge: %w", err)
		}
		if in {
			return fmt.Errorf("%w: %s is inside the shard %s (or is it): the merge would write into its own input", ErrShards, out, s.dir)
		}
		if in, err = safefs.Inside(s.dir, out); err != nil {
			return fmt.Errorf("matrix: merge: %w", err)
		}
		if in {
			return fmt.Errorf("%w: the shard %s is inside %s: the merge would write into its own input", ErrShards, s.dir, out)
		}
	}
	return nil
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
// once, with every run in exactly one of them: each one's plan
// (checkPlan), a commit known unless o allows none, and then one matrix
// (sameMatrix), one version of each server (sameServers), each shard once
// (everyShard) and each run once (everyRun).
func checkShards(shards []shardOutput, o mergeOptions) error {
	for _, s := range shards {
		if err := checkPlan(s); err != nil {
			return err
		}
	}
	if first := shards[0]; commitOf(first.m) == report.UnknownCommit && !o.unknownCommit {
		return fmt.Errorf("%w: %w: %s records no commit (its binary carries no VCS stamp: built with -buildvcs=false, or in a git worktree): nothing tells which code ran it", ErrShards, ErrUnknownCommit, first.dir)
	}
	for _, check := range []func([]shardOutput) error{sameMatrix, sameServers, everyShard, everyRun} {
		if err := check(shards); err != nil {
			return err
		}
	}
	return nil
}

// name names the shard in an error: "DIR (shard i/n)".
func (s shardOutput) name() string {
	return fmt.Sprintf("%s (shard %d/%d)", s.dir, s.m.Shard.Index, s.m.Shard.Count)
}

// sameMatrix checks that the shards are of one matrix: every one has the
// first's shard count, commit, cells, seeds and duration.
func sameMatrix(shards []shardOutput) error {
	first := shards[0]
	f := first.m
	for _, s := range shards[1:] {
		m := s.m
		var what, a, b string
		switch {
		case m.Shard.Count != f.Shard.Count:
			what, a, b = "shard counts", fmt.Sprint(f.Shard.Count), fmt.Sprint(m.Shard.Count)
		case commitOf(m) != commitOf(f) || m.Dirty != f.Dirty:
			what, a, b = "commits", commitName(f), commitName(m)
		case !slices.Equal(m.Shard.Cells, f.Shard.Cells):
			what = "cell lists"
			a, b = cellsDiff(f.Shard.Cells, m.Shard.Cells)
		case !slices.Equal(m.Seeds, f.Seeds):
			what, a, b = "seeds", fmt.Sprint(f.Seeds), fmt.Sprint(m.Seeds)
		case m.Duration != f.Duration:
			what, a, b = "durations", f.Duration, m.Duration
		}
		if what != "" {
			return fmt.Errorf("%w: different %s: %s has %s, %s has %s", ErrShards, what, first.name(), a, s.name(), b)
		}
	}
	return nil
}

// sameServers checks that the shards ran one version of each server: they
// may run different servers (one only Redis locks' cells, another only
// etcd's), never two versions of one.
func sameServers(shards []shardOutput) error {
	type ranBy struct {
		s      shardOutput
		server string
	}
	ran := map[string]ranBy{} // by server name, the first shard that ran it
	for _, s := range shards {
		for _, sv := range s.m.Servers {
			name, _, _ := strings.Cut(sv, " ")
			o, ok := ran[name]
			switch {
			case !ok:
				ran[name] = ranBy{s, sv}
			case o.server != sv:
				return fmt.Errorf("%w: different server versions: %s has %s, %s has %s", ErrShards, o.s.name(), o.server, s.name(), sv)
			}
		}
	}
	return nil
}

// everyShard checks that the shards are each shard of their count once,
// and all of them.
func everyShard(shards []shardOutput) error {
	count := shards[0].m.Shard.Count
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
	if n := count - len(seen); n > 0 {
		// Named up to a few, in at most len(seen)+listMissing steps,
		// whatever the count a summary claims.
		var missing []string
		for i := 1; i <= count && len(missing) < listMissing; i++ {
			if _, ok := seen[i]; !ok {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		if n > len(missing) {
			missing = append(missing, fmt.Sprintf("and %d more", n-len(missing)))
		}
		return fmt.Errorf("%w: shard %s of %d missing (given: %s)", ErrShards, strings.Join(missing, ", "), count, strings.Join(dirsOf(shards), ", "))
	}
	return nil
}

// everyRun checks that every run of the matrix is in exactly one shard's
// plan, and in its shard's summary, run or listed as never run.
func everyRun(shards []shardOutput) error {
	owner := make(map[report.ShardRun]shardOutput)
	for _, s := range shards {
		for _, r := range s.m.Shard.Runs {
			if o, ok := owner[r]; ok {
				return fmt.Errorf("%w: overlapping shards: cell %s, seed %d is in %s and in %s", ErrShards, r.Cell, r.Seed, o.name(), s.name())
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
				return fmt.Errorf("%w: %s lacks its run of cell %s, seed %d", ErrShards, s.name(), r.Cell, r.Seed)
			}
			delete(ran, r)
		}
		for r := range ran {
			return fmt.Errorf("%w: %s holds a run of cell %s, seed %d, that is not in its plan", ErrShards, s.name(), r.Cell, r.Seed)
		}
	}
	f := shards[0].m
	for _, c := range f.Shard.Cells {
		for _, seed := range f.Seeds {
			if _, ok := owner[report.ShardRun{Cell: c.Name, Seed: seed}]; !ok {
				return fmt.Errorf("%w: cell %s, seed %d is in no shard", ErrShards, c.Name, seed)
			}
		}
	}
	return nil
}

// listMissing is how many missing shards an error names.
const listMissing = 10

// checkPlan checks the numbers of a shard's plan before they size a loop
// or an allocation: a summary.json is an artifact from elsewhere, and a
// shard count of 2⁶² once ran merge out of memory (everyShard lists the
// missing shards up to a few). A matrix has at least one cell, one seed
// and one shard.
func checkPlan(s shardOutput) error {
	m := s.m
	switch {
	case len(m.Seeds) == 0:
		return fmt.Errorf("%w: %s: its plan has no seed", ErrShards, s.dir)
	case len(m.Shard.Cells) == 0:
		return fmt.Errorf("%w: %s: its plan has no cell", ErrShards, s.dir)
	case m.Shard.Count < 1:
		return fmt.Errorf("%w: %s: shard count %d: want at least 1", ErrShards, s.dir, m.Shard.Count)
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
		Versions: f.Versions, Commit: commitOf(f), Dirty: f.Dirty,
		// Every shard records the whole matrix's scenarios.
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
		for _, sv := range s.m.Servers {
			m.Servers, _ = report.AddServer(m.Servers, sv) // one version each: sameServers
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

// commitOf is the commit m records, report.UnknownCommit when it
// records none.
func commitOf(m report.Matrix) string {
	if m.Commit == "" {
		return report.UnknownCommit
	}
	return m.Commit
}

func commitName(m report.Matrix) string {
	if m.Dirty {
		return commitOf(m) + " with uncommitted changes"
	}
	return commitOf(m)
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
