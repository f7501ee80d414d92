//go:build unix

package matrix

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/report"
)

// sentinel is a file outside every shard and every OUT, with a content
// and a modification time of its own: a merge that writes through a link
// to it changes one or the other.
type sentinel struct {
	dir, path string
	mtime     time.Time
}

func newSentinel(tb testing.TB) sentinel {
	tb.Helper()
	dir := tb.TempDir()
	s := sentinel{dir: dir, path: filepath.Join(dir, "precious"), mtime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := os.WriteFile(s.path, []byte("precious"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(s.path, s.mtime, s.mtime); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(dir, s.mtime, s.mtime); err != nil {
		tb.Fatal(err)
	}
	return s
}

// check fails tb when the sentinel's content or time changed, or when its
// folder holds anything else (a file a merge created through a link).
func (s sentinel) check(tb testing.TB) {
	tb.Helper()
	b, err := os.ReadFile(s.path)
	if err != nil || string(b) != "precious" {
		tb.Errorf("the file outside OUT now holds %q (%v)", b, err)
	}
	if st, err := os.Stat(s.path); err != nil || !st.ModTime().Equal(s.mtime) {
		tb.Errorf("the file outside OUT was written: %v, %v", st.ModTime(), err)
	}
	entries, _ := os.ReadDir(s.dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		tb.Errorf("the folder outside OUT holds %v, want precious alone", names)
	}
	if st, err := os.Stat(s.dir); err != nil || !st.ModTime().Equal(s.mtime) {
		tb.Errorf("the folder outside OUT was written into: %v, %v", st.ModTime(), err)
	}
}

// editSummary rewrites dir/summary.json with f applied.
func editSummary(tb testing.TB, dir string, f func(m *report.Matrix)) {
	tb.Helper()
	m, err := report.ReadMatrix(dir)
	if err != nil {
		tb.Fatal(err)
	}
	f(&m)
	if err := report.WriteMatrix(dir, m); err != nil {
		tb.Fatal(err)
	}
}

func mustSymlink(tb testing.TB, target, path string) {
	tb.Helper()
	os.RemoveAll(path)
	if err := os.Symlink(target, path); err != nil {
		tb.Fatal(err)
	}
}

// TestMergeRefusesLinks: a shard from elsewhere that holds a symbolic
// link (to a file, dangling, to a folder), a special file, or a summary
// that names a run directory outside its runs/ is refused in one line;
// nothing outside OUT changes, and OUT is not created.
func TestMergeRefusesLinks(t *testing.T) {
	specs := []Spec{
		testSpec("a/none", "setnx", report.ExpectSafe, nil),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	for _, tc := range []struct {
		name string
		// hostile makes shard (whose first run's folder is run) hostile;
		// RUN in want stands for run.
		hostile func(t *testing.T, shard, run string, s sentinel)
		want    string
	}{
		// What merge did before: the run directory "index.html", a link
		// to any file, copied as a link, and the summary written
		// through it.
		{"run directory a link named like a summary", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, s.path, filepath.Join(shard, "index.html"))
			editSummary(t, shard, func(m *report.Matrix) { m.Cells[0].Runs[0].Dir = "index.html" })
		}, `its directory "index.html" is not under runs/`},
		{"dangling run directory named like a summary", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, filepath.Join(s.dir, "created"), filepath.Join(shard, "summary.md"))
			editSummary(t, shard, func(m *report.Matrix) { m.Cells[0].Runs[0].Dir = "summary.md" })
		}, `its directory "summary.md" is not under runs/`},
		{"link to a file in a run", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, s.path, filepath.Join(shard, run, "report.html"))
		}, "report.html is a symbolic link"},
		{"dangling link in a run", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, filepath.Join(s.dir, "created"), filepath.Join(shard, run, "index.html"))
		}, "index.html is a symbolic link"},
		{"link to a folder in a run", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, s.dir, filepath.Join(shard, run, "nodes"))
		}, "nodes is a symbolic link"},
		{"run directory a link to a folder", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, s.dir, filepath.Join(shard, run))
		}, "RUN is a symbolic link"},
		{"run directory a link to a file", func(t *testing.T, shard, run string, s sentinel) {
			mustSymlink(t, s.path, filepath.Join(shard, run))
		}, "RUN is a symbolic link"},
		{"runs a link", func(t *testing.T, shard, run string, s sentinel) {
			if err := os.Rename(filepath.Join(shard, "runs"), filepath.Join(s.dir, "..", filepath.Base(s.dir)+"-runs")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(s.dir, "..", filepath.Base(s.dir)+"-runs"), filepath.Join(shard, "runs"))
		}, "runs is a symbolic link"},
		{"summary a link", func(t *testing.T, shard, run string, s sentinel) {
			b, _ := os.ReadFile(filepath.Join(shard, "summary.json"))
			other := filepath.Join(t.TempDir(), "summary.json")
			if err := os.WriteFile(other, b, 0o600); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, other, filepath.Join(shard, "summary.json"))
		}, "summary.json is a symbolic link"},
		{"named pipe in a run", func(t *testing.T, shard, run string, s sentinel) {
			if err := syscall.Mkfifo(filepath.Join(shard, run, "history.jsonl"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "history.jsonl is not a regular file (a named pipe)"},
		{"parent directory", func(t *testing.T, shard, run string, s sentinel) {
			editSummary(t, shard, func(m *report.Matrix) { m.Cells[0].Runs[0].Dir = "runs/../../" + filepath.Base(s.dir) })
		}, "is not a path inside its folder"},
		{"absolute directory", func(t *testing.T, shard, run string, s sentinel) {
			editSummary(t, shard, func(m *report.Matrix) { m.Cells[0].Runs[0].Dir = s.dir })
		}, "is not a path inside its folder"},
		{"a run inside another", func(t *testing.T, shard, run string, s sentinel) {
			editSummary(t, shard, func(m *report.Matrix) {
				// The shard's last run inside its first.
				c := &m.Cells[len(m.Cells)-1]
				c.Runs[len(c.Runs)-1].Dir = run + "/inner"
			})
		}, "/inner overlaps RUN, another run's"},
		{"a run holding another", func(t *testing.T, shard, run string, s sentinel) {
			editSummary(t, shard, func(m *report.Matrix) {
				// The shard's first run inside its last.
				m.Cells[0].Runs[0].Dir = run + "/inner"
				c := &m.Cells[len(m.Cells)-1]
				c.Runs[len(c.Runs)-1].Dir = run
			})
		}, "its directory RUN overlaps RUN/inner, another run's"},
		{"two runs, one directory", func(t *testing.T, shard, run string, s sentinel) {
			editSummary(t, shard, func(m *report.Matrix) {
				c := &m.Cells[len(m.Cells)-1]
				c.Runs[len(c.Runs)-1].Dir = "runs/./" + filepath.Base(run)
			})
		}, "overlaps RUN, another run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSentinel(t)
			dirs := fakeShards(t, specs, []int64{1, 2}, 2, nil)
			m, err := report.ReadMatrix(dirs[0])
			if err != nil {
				t.Fatal(err)
			}
			run := m.Cells[0].Runs[0].Dir
			tc.hostile(t, dirs[0], run, s)
			s.mtime = mtimeOf(t, s)
			parent := filepath.Join(t.TempDir(), "ci")
			out := filepath.Join(parent, "merged")
			_, err = Merge(out, dirs)
			want := strings.ReplaceAll(tc.want, "RUN", run)
			if !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Merge: %v\nwant one line wrapping ErrShards with %q", err, want)
			}
			s.check(t)
			if _, err := os.Lstat(parent); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused merge left %s (%v)", parent, err)
			}
		})
	}
}

// mtimeOf is the sentinel's time once a case has made its links (a
// rename out of its parent folder changes that folder's time).
func mtimeOf(tb testing.TB, s sentinel) time.Time {
	tb.Helper()
	if err := os.Chtimes(s.dir, s.mtime, s.mtime); err != nil {
		tb.Fatal(err)
	}
	return s.mtime
}

// TestMergeOutInsideShard: OUT inside a shard, equal to one, reached
// through a link to one, or holding one is refused before anything is
// written: the shard is unchanged, and OUT stays as it was.
func TestMergeOutInsideShard(t *testing.T) {
	specs := []Spec{testSpec("a/none", "setnx", report.ExpectSafe, nil)}
	for _, tc := range []struct {
		name string
		out  func(t *testing.T, dirs []string) string
		want string
	}{
		{"inside", func(t *testing.T, d []string) string { return filepath.Join(d[0], "merged") }, "is inside the shard"},
		{"deep inside", func(t *testing.T, d []string) string { return filepath.Join(d[1], "runs", "x", "merged") }, "is inside the shard"},
		{"the shard", func(t *testing.T, d []string) string { return d[0] }, "is inside the shard"},
		{"through a link", func(t *testing.T, d []string) string {
			link := filepath.Join(t.TempDir(), "link")
			mustSymlink(t, d[1], link)
			return filepath.Join(link, "merged")
		}, "is inside the shard"},
		{"holding a shard", func(t *testing.T, d []string) string { return filepath.Dir(d[0]) }, "the shard " + "%s is inside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := fakeShards(t, specs, []int64{1, 2}, 2, nil)
			before := make([]map[string]string, len(dirs))
			for i, d := range dirs {
				before[i] = tree(t, d)
			}
			out := tc.out(t, dirs)
			_, outBefore := os.Lstat(out)
			_, err := Merge(out, dirs)
			want := strings.ReplaceAll(tc.want, "%s", dirs[0])
			if !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Merge into %s: %v\nwant %q", out, err, want)
			}
			for i, d := range dirs {
				if after := tree(t, d); !equalTrees(before[i], after) {
					t.Errorf("the shard %s changed: %v, was %v", d, after, before[i])
				}
			}
			if _, err := os.Lstat(out); (err == nil) != (outBefore == nil) {
				t.Errorf("OUT %s: %v before, %v after", out, outBefore, err)
			}
		})
	}
}

// tree is every file under dir, with its content.
func tree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(path)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestMergeRefusalLeavesOut: a merge refused half way through the copy
// (a link in the last shard's last run) leaves an OUT that existed empty
// as it was, empty, and one that did not exist absent with the folders
// made for it; no temporary folder is left beside it.
func TestMergeRefusalLeavesOut(t *testing.T) {
	specs := []Spec{
		testSpec("a/none", "setnx", report.ExpectSafe, nil),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	dirs := fakeShards(t, specs, []int64{1, 2, 3}, 2, nil)
	last, err := report.ReadMatrix(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	c := last.Cells[len(last.Cells)-1]
	mustSymlink(t, "/etc/hostname", filepath.Join(dirs[1], c.Runs[len(c.Runs)-1].Dir, "report.html"))

	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(empty, dirs); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("Merge: %v", err)
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Errorf("an empty OUT after a refused merge: %v, %v", entries, err)
	}
	if _, err := Merge(filepath.Join(root, "new", "merged"), dirs); !errors.Is(err, ErrShards) {
		t.Fatalf("Merge: %v", err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "empty" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside OUT after refused merges: %v, want empty alone", names)
	}
}

// TestMergeUnknownCommit: shards of binaries without a VCS stamp are
// not taken for one code: refused, unless the caller vouches that one
// binary ran them all; then the merged summaries say the commit is
// unknown. An unknown commit beside a known one is a different commit.
func TestMergeUnknownCommit(t *testing.T) {
	specs := []Spec{testSpec("a/none", "setnx", report.ExpectSafe, nil)}
	dirs := fakeShards(t, specs, []int64{1, 2}, 2, nil)
	for _, d := range dirs {
		editSummary(t, d, func(m *report.Matrix) { m.Commit = report.UnknownCommit })
	}
	out := filepath.Join(t.TempDir(), "merged")
	_, err := Merge(out, dirs)
	if !errors.Is(err, ErrShards) || !errors.Is(err, ErrUnknownCommit) || !strings.Contains(err.Error(), "records no commit") {
		t.Fatalf("Merge of unknown commits: %v, want ErrUnknownCommit", err)
	}
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused merge wrote %s", out)
	}
	m, err := Merge(out, dirs, AcceptUnknownCommit())
	if err != nil {
		t.Fatalf("Merge with AcceptUnknownCommit: %v", err)
	}
	if m.Commit != report.UnknownCommit || m.Dirty {
		t.Errorf("merged commit %q, dirty %v; want %q", m.Commit, m.Dirty, report.UnknownCommit)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "summary.md")); !strings.Contains(string(md), report.UnknownCommit) {
		t.Errorf("the merged summary.md does not say the commit is unknown:\n%s", md)
	}
	// One shard of a known commit: different commits, even when asked
	// to accept unknown ones.
	editSummary(t, dirs[1], func(m *report.Matrix) { m.Commit = "0123abcd" })
	if _, err := Merge(filepath.Join(t.TempDir(), "merged"), dirs, AcceptUnknownCommit()); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "different commits") {
		t.Errorf("an unknown and a known commit: %v, want different commits", err)
	}
	// A summary from before UnknownCommit existed ("") is the same as one.
	editSummary(t, dirs[1], func(m *report.Matrix) { m.Commit = "" })
	if _, err := Merge(filepath.Join(t.TempDir(), "merged"), dirs, AcceptUnknownCommit()); err != nil {
		t.Errorf("\"\" and unknown, accepted: %v", err)
	}
}
