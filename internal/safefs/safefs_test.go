//go:build unix

package safefs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/locktorture/locktorture/internal/safefs"
)

// write creates the file path with content, and its folders.
func write(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func symlink(tb testing.TB, target, path string) {
	tb.Helper()
	if err := os.Symlink(target, path); err != nil {
		tb.Fatal(err)
	}
}

// hostile is a folder holding a regular file and one of each thing a
// reader must refuse: a link to a file, a link to a folder, a dangling
// link, a folder, a named pipe.
func hostile(tb testing.TB) (dir, secret string) {
	tb.Helper()
	dir = tb.TempDir()
	secret = filepath.Join(tb.TempDir(), "secret")
	write(tb, secret, "private")
	write(tb, filepath.Join(dir, "plain"), "public")
	symlink(tb, secret, filepath.Join(dir, "to-file"))
	symlink(tb, filepath.Dir(secret), filepath.Join(dir, "to-dir"))
	symlink(tb, filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling"))
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir, secret
}

func TestReadFile(t *testing.T) {
	dir, _ := hostile(t)
	if b, err := safefs.ReadFile(filepath.Join(dir, "plain")); err != nil || string(b) != "public" {
		t.Fatalf("a regular file: %q, %v", b, err)
	}
	for _, tc := range []struct {
		name string
		want error
	}{
		{"to-file", safefs.ErrLink},
		{"to-dir", safefs.ErrLink},
		{"dangling", safefs.ErrLink},
		{"folder", safefs.ErrNotRegular},
		// Without O_NONBLOCK the open would wait for a writer for ever,
		// and the test would end by its timeout.
		{"fifo", safefs.ErrNotRegular},
	} {
		b, err := safefs.ReadFile(filepath.Join(dir, tc.name))
		if !errors.Is(err, tc.want) || b != nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q, %v; want one line wrapping %v", tc.name, b, err, tc.want)
		}
	}
	if _, err := safefs.ReadFile("/dev/zero"); !errors.Is(err, safefs.ErrNotRegular) {
		t.Errorf("/dev/zero: %v, want ErrNotRegular", err)
	}
	if _, err := safefs.ReadFile(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk space used, and refused before it is read.
	if err := f.Truncate(safefs.MaxFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := safefs.ReadFile(path); !errors.Is(err, safefs.ErrTooLarge) {
		t.Fatalf("a file of MaxFile+1 bytes: %v, want ErrTooLarge", err)
	}
}

func TestLocal(t *testing.T) {
	for _, p := range []string{"a", "runs/x", "runs/x/results.json", "a..b"} {
		if err := safefs.Local(p); err != nil {
			t.Errorf("Local(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", ".", "/etc/passwd", "..", "../x", "runs/../../x", "runs/../x", "runs/x/.."} {
		if err := safefs.Local(p); !errors.Is(err, safefs.ErrNotLocal) {
			t.Errorf("Local(%q): %v, want ErrNotLocal", p, err)
		}
	}
}

// TestOpenIn: a link anywhere on the way from the folder to the file is
// refused, not only at its end.
func TestOpenIn(t *testing.T) {
	dir, secret := hostile(t)
	write(t, filepath.Join(dir, "runs", "a", "results.json"), "{}")
	b, err := safefs.ReadFileIn(dir, "runs/a/results.json")
	if err != nil || string(b) != "{}" {
		t.Fatalf("runs/a/results.json: %q, %v", b, err)
	}
	symlink(t, filepath.Join(dir, "runs"), filepath.Join(dir, "linked-runs"))
	symlink(t, filepath.Dir(secret), filepath.Join(dir, "runs", "b"))
	for _, rel := range []string{"linked-runs/a/results.json", "runs/b/secret", "to-dir/secret", "to-file"} {
		if _, err := safefs.ReadFileIn(dir, rel); !errors.Is(err, safefs.ErrLink) {
			t.Errorf("%s: %v, want ErrLink", rel, err)
		}
	}
	for _, rel := range []string{"../" + filepath.Base(dir) + "/plain", filepath.Join(dir, "plain")} {
		if _, err := safefs.ReadFileIn(dir, rel); !errors.Is(err, safefs.ErrNotLocal) {
			t.Errorf("%s: %v, want ErrNotLocal", rel, err)
		}
	}
	if _, err := safefs.ReadFileIn(dir, "plain/x"); err == nil {
		t.Error("a file taken for a folder was read")
	}
	// A named pipe inside a folder is refused without waiting for a
	// writer, and so is a folder where a file was wanted.
	if err := syscall.Mkfifo(filepath.Join(dir, "runs", "a", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"runs/a/fifo", "runs/a"} {
		if _, err := safefs.ReadFileIn(dir, rel); !errors.Is(err, safefs.ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", rel, err)
		}
	}
}

func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "runs", "a", "results.json"), "r")
	write(t, filepath.Join(src, "runs", "a", "nodes", "n1", "redis.log"), "log")
	dst := t.TempDir()
	if err := safefs.CopyTree(dst, src, "runs/a"); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"runs/a/results.json": "r", "runs/a/nodes/n1/redis.log": "log"} {
		if b, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", rel, b, err)
		}
	}
	if err := safefs.CopyTree(dst, src, "runs/a"); err == nil {
		t.Error("a second copy onto the first succeeded")
	}
	for _, tc := range []struct {
		name string
		make func(dir, secret string)
		want error
	}{
		{"link to a file", func(d, s string) { symlink(t, s, filepath.Join(d, "index.html")) }, safefs.ErrLink},
		{"link to a folder", func(d, s string) { symlink(t, filepath.Dir(s), filepath.Join(d, "nodes")) }, safefs.ErrLink},
		{"dangling link", func(d, s string) { symlink(t, filepath.Join(d, "nowhere"), filepath.Join(d, "report.html")) }, safefs.ErrLink},
		{"named pipe", func(d, s string) {
			if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, safefs.ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			secret := filepath.Join(t.TempDir(), "secret")
			write(t, secret, "private")
			write(t, filepath.Join(src, "runs", "a", "results.json"), "r")
			tc.make(filepath.Join(src, "runs", "a"), secret)
			dst := t.TempDir()
			if err := safefs.CopyTree(dst, src, "runs/a"); !errors.Is(err, tc.want) {
				t.Fatalf("CopyTree: %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("the folder copied a link", func(t *testing.T) {
		src, other := t.TempDir(), t.TempDir()
		write(t, filepath.Join(other, "results.json"), "r")
		if err := os.Mkdir(filepath.Join(src, "runs"), 0o700); err != nil {
			t.Fatal(err)
		}
		symlink(t, other, filepath.Join(src, "runs", "a"))
		if err := safefs.CopyTree(t.TempDir(), src, "runs/a"); !errors.Is(err, safefs.ErrLink) {
			t.Fatalf("CopyTree of a linked runs/a: %v, want ErrLink", err)
		}
	})
	t.Run("run folder a link", func(t *testing.T) {
		src, other := t.TempDir(), t.TempDir()
		write(t, filepath.Join(other, "a", "results.json"), "r")
		symlink(t, other, filepath.Join(src, "runs"))
		if err := safefs.CopyTree(t.TempDir(), src, "runs/a"); !errors.Is(err, safefs.ErrLink) {
			t.Fatalf("CopyTree through a linked runs/: %v, want ErrLink", err)
		}
	})
}

// TestWriteFile: a link at the name is replaced, its target untouched;
// no temporary file is left.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "private")
	before, _ := os.Stat(secret)
	name := filepath.Join(dir, "summary.json")
	symlink(t, secret, name)
	if err := safefs.WriteFile(name, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "private" {
		t.Errorf("the link's target now holds %q", b)
	}
	if after, _ := os.Stat(secret); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the link's target was touched")
	}
	st, err := os.Lstat(name)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
		t.Fatalf("summary.json: %v, %v; want a regular file, mode 0644", st, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Errorf("summary.json holds %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d entries, want summary.json alone", len(entries))
	}
	if err := safefs.WriteFile(dir, []byte("x"), 0o644); err == nil {
		t.Error("WriteFile onto a folder succeeded")
	}
}

func TestWriteDir(t *testing.T) {
	root := t.TempDir()
	fill := func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "f"), []byte("x"), 0o600) }

	// Created, with its missing parents.
	out := filepath.Join(root, "a", "b", "out")
	if err := safefs.WriteDir(out, 0o755, fill); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "f")); string(b) != "x" {
		t.Errorf("out/f holds %q", b)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o755 {
		t.Errorf("out has mode %v, want 0755", st.Mode().Perm())
	}
	// Not into a folder that holds something.
	if err := safefs.WriteDir(out, 0o700, fill); !errors.Is(err, safefs.ErrNotEmpty) {
		t.Errorf("into a full folder: %v, want ErrNotEmpty", err)
	}
	// An empty folder is replaced.
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WriteDir(empty, 0o700, fill); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, "f")); err != nil {
		t.Error(err)
	}
	// A failing fill leaves nothing: not the folder, not its parents,
	// not the temporary folder; an empty folder stays, empty.
	boom := errors.New("boom")
	failing := func(tmp string) error {
		if err := fill(tmp); err != nil {
			return err
		}
		return boom
	}
	if err := safefs.WriteDir(filepath.Join(root, "new", "deeper", "out"), 0o700, failing); !errors.Is(err, boom) {
		t.Fatalf("failing fill: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed WriteDir left the parents it created: %v", err)
	}
	empty2 := filepath.Join(root, "empty2")
	if err := os.Mkdir(empty2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WriteDir(empty2, 0o700, failing); !errors.Is(err, boom) {
		t.Fatalf("failing fill: %v", err)
	}
	if entries, err := os.ReadDir(empty2); err != nil || len(entries) != 0 {
		t.Errorf("the empty folder after a failed WriteDir: %v, %v", entries, err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary folder was left: %s", e.Name())
		}
	}
	// Not through a link.
	target := t.TempDir()
	link := filepath.Join(root, "link")
	symlink(t, target, link)
	if err := safefs.WriteDir(link, 0o700, fill); !errors.Is(err, safefs.ErrLink) {
		t.Errorf("onto a link: %v, want ErrLink", err)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Error("WriteDir wrote through a link")
	}
}

func TestInside(t *testing.T) {
	root := t.TempDir()
	shard := filepath.Join(root, "shard")
	write(t, filepath.Join(shard, "summary.json"), "{}")
	link := filepath.Join(root, "link")
	symlink(t, shard, link)
	for _, tc := range []struct {
		inner, outer string
		want         bool
	}{
		{shard, shard, true},
		{filepath.Join(shard, "out"), shard, true},
		{filepath.Join(shard, "new", "deeper"), shard, true},
		{filepath.Join(link, "out"), shard, true},
		{filepath.Join(shard, "x", "..", "out"), shard, true},
		{filepath.Join(root, "out"), shard, false},
		{filepath.Join(root, "shard2"), shard, false},
		{root, shard, false},
	} {
		got, err := safefs.Inside(tc.inner, tc.outer)
		if err != nil || got != tc.want {
			t.Errorf("Inside(%s, %s) = %v, %v; want %v", tc.inner, tc.outer, got, err, tc.want)
		}
	}
}

// TestFresh: two commands started in the same second with one --out
// (one base name) get folders of their own, each made by one mkdir; out
// is created when missing.
func TestFresh(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	seen := map[string]bool{}
	for range 3 {
		name, dir, err := safefs.Fresh(out, "20261207T021700-seed1")
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] || filepath.Join(out, name) != dir {
			t.Fatalf("%s (%s) given twice, or not under %s", dir, name, out)
		}
		seen[dir] = true
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			t.Fatalf("%s: %v", dir, err)
		}
	}
}

// TestWriteFresh: a result written beside an earlier one, beside a link
// at its name or by commands started together gets a name of its own,
// whole; nothing is replaced, and nothing is written through the link.
func TestWriteFresh(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(t.TempDir(), "private")
	if err := os.WriteFile(private, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, filepath.Join(dir, "minimal.json")); err != nil {
		t.Fatal(err)
	}
	const n = 8
	paths := make(chan string, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			p, err := safefs.WriteFresh(dir, "minimal", ".json", []byte(fmt.Sprintf("writer %d\n", i)), 0o600)
			paths <- p
			errs <- err
		}()
	}
	seen := map[string]bool{}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		p := <-paths
		if seen[p] || filepath.Base(p) == "minimal.json" {
			t.Fatalf("%s given twice, or the link's name taken", p)
		}
		seen[p] = true
		if b, err := safefs.ReadFile(p); err != nil || !strings.HasPrefix(string(b), "writer ") {
			t.Fatalf("%s: %q, %v", p, b, err)
		}
	}
	if b, _ := os.ReadFile(private); string(b) != "secret" {
		t.Fatalf("written through the link: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != n+1 {
		t.Fatalf("%d entries; want %d results and the link, no temporary file left", len(ents), n)
	}
}

// TestWriteDirSideBySide: commands started together with one output
// folder (a merge, a publish) never mix their files: one fills it, each
// other is refused with ErrNotEmpty, and no temporary folder is left.
func TestWriteDirSideBySide(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	const n = 6
	start, ready := make(chan struct{}), make(chan struct{}, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- safefs.WriteDir(out, 0o700, func(tmp string) error {
				ready <- struct{}{}
				<-start // every writer has its temporary folder before any renames
				for j := range 3 {
					if err := os.WriteFile(filepath.Join(tmp, fmt.Sprint(j)), []byte(fmt.Sprint(i)), 0o600); err != nil {
						return err
					}
				}
				return nil
			})
		}()
	}
	for range n {
		<-ready
	}
	close(start)
	won := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			won++
		case !errors.Is(err, safefs.ErrNotEmpty):
			t.Errorf("a writer refused otherwise than ErrNotEmpty: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers filled %s; want one", won, out)
	}
	var first []byte
	for j := range 3 {
		b, err := os.ReadFile(filepath.Join(out, fmt.Sprint(j)))
		if err != nil || (first != nil && string(b) != string(first)) {
			t.Fatalf("%s mixes the writers' files: %q after %q (%v)", out, b, first, err)
		}
		first = b
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 {
		t.Errorf("%d entries beside the folder; want no temporary one left", len(ents)-1)
	}
}
