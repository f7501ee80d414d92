package lazyfs_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/lazyfs"
)

// mount mounts a lazyfs on a temporary folder, unmounted when the test
// ends; it skips the test, quoting the machine's refusal, where FUSE
// mounts are refused.
func mount(t *testing.T) *lazyfs.FS {
	t.Helper()
	if err := lazyfs.Available(); err != nil {
		t.Skipf("lazyfs not tested: %v", err)
	}
	f, err := lazyfs.Mount(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return f
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestDrop: what was written is read back at once; a drop keeps what was
// synced and nothing written since; a file never synced keeps its name
// and no bytes.
func TestDrop(t *testing.T) {
	fsys := mount(t)
	never := filepath.Join(fsys.Dir(), "never")
	if err := os.WriteFile(never, []byte("lost"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(fsys.Dir(), "aof")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write(t, f, "kept;")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, f, "lost;")
	if got := read(t, p); got != "kept;lost;" {
		t.Fatalf("before the drop: %q", got)
	}
	if fsys.Unsynced() == 0 {
		t.Error("Unsynced = 0 with bytes written since the last sync")
	}
	files, bytes := fsys.Drop()
	if files != 2 || bytes < int64(len("lost;")) {
		t.Errorf("Drop = %d files, %d bytes; want 2 files", files, bytes)
	}
	if got := read(t, p); got != "kept;" {
		t.Errorf("after the drop: %q, want the synced %q", got, "kept;")
	}
	if got := read(t, never); got != "" {
		t.Errorf("a file never synced: %q after the drop, want it empty", got)
	}
	if fsys.Unsynced() != 0 {
		t.Errorf("Unsynced = %d after the drop", fsys.Unsynced())
	}
	// fdatasync counts as a sync too. (The descriptor's offset is past
	// the dropped bytes: it writes at the end, as after a truncation.)
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	write(t, f, "more;")
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	fsys.Drop()
	if got := read(t, p); got != "kept;more;" {
		t.Errorf("after fdatasync and a drop: %q", got)
	}
}

// TestAppendAfterDrop: a file opened to append, before or after a drop,
// appends at the end of what the file holds now, not at the size the
// kernel last knew (as Redis appends to its append-only file).
func TestAppendAfterDrop(t *testing.T) {
	fsys := mount(t)
	p := filepath.Join(fsys.Dir(), "incr.aof")
	old, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	write(t, old, "abc")
	if err := old.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, old, "lostlostlost")
	fsys.Drop()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write(t, f, "def")
	write(t, old, "ghi")
	if got := read(t, p); got != "abcdefghi" {
		t.Errorf("appends after a drop: %q, want %q", got, "abcdefghi")
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Size() != 9 {
		t.Errorf("stat: %v, %v; want size 9", fi, err)
	}
}

// TestNames: names are durable at once: a folder made, a file renamed
// over another, a file removed stay so across a drop; a rename carries
// the file's synced bytes.
func TestNames(t *testing.T) {
	fsys := mount(t)
	dir := filepath.Join(fsys.Dir(), "appendonlydir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, manifest := filepath.Join(dir, "temp-manifest"), filepath.Join(dir, "manifest")
	if err := os.WriteFile(manifest, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "new")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(tmp, manifest); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone")
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Errorf("fsync of a folder: %v", err)
	}
	d.Close()
	fsys.Drop()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "manifest" {
		t.Fatalf("after the drop the folder holds %v (%v), want only the manifest", entries, err)
	}
	if got := read(t, manifest); got != "new" {
		t.Errorf("the renamed manifest holds %q, want %q", got, "new")
	}
	if err := os.Remove(dir); err == nil {
		t.Error("removed a folder that is not empty")
	}
}

// mountedAt reports whether a lazyfs is mounted at dir.
func mountedAt(t *testing.T, dir string) bool {
	t.Helper()
	m, err := lazyfs.Mounted()
	if err != nil {
		t.Fatal(err)
	}
	_, ok := m[dir]
	return ok
}

// TestUnmount: an unmounted lazyfs leaves no mount, also when a file in
// it is still open (it is detached); Unmount can be called again.
func TestUnmount(t *testing.T) {
	if err := lazyfs.Available(); err != nil {
		t.Skipf("lazyfs not tested: %v", err)
	}
	dir := t.TempDir()
	fsys, err := lazyfs.Mount(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !mountedAt(t, dir) {
		t.Fatalf("no lazyfs mount listed at %s", dir)
	}
	busy, err := os.Create(filepath.Join(dir, "busy"))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := fsys.Unmount(); err != nil {
		t.Fatal(err)
	}
	if mountedAt(t, dir) {
		t.Errorf("a lazyfs is still mounted at %s after Unmount", dir)
	}
	if err := fsys.Unmount(); err != nil {
		t.Errorf("second Unmount: %v", err)
	}
}

// TestRemoveStale: a process that mounted a lazyfs and was killed leaves
// the mount behind; RemoveStale (which Mount calls) detaches it, and
// leaves the mounts of live processes alone.
func TestRemoveStale(t *testing.T) {
	if err := lazyfs.Available(); err != nil {
		t.Skipf("lazyfs not tested: %v", err)
	}
	live := mount(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMount$")
	cmd.Env = append(os.Environ(), "LAZYFS_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if mountedAt(t, dir) {
			lazyfs.RemoveStale()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "mounted" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !mountedAt(t, dir) {
		t.Fatalf("the killed helper's mount at %s is not listed", dir)
	}
	gone, err := lazyfs.RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0] != dir {
		t.Errorf("RemoveStale = %v, want [%s]", gone, dir)
	}
	if mountedAt(t, dir) {
		t.Errorf("the stale mount at %s is still there", dir)
	}
	if !mountedAt(t, live.Dir()) {
		t.Errorf("RemoveStale detached this live process's mount at %s", live.Dir())
	}
}

// TestHelperMount is the process TestRemoveStale kills: it mounts a
// lazyfs where it is told and waits.
func TestHelperMount(t *testing.T) {
	dir := os.Getenv("LAZYFS_HELPER_DIR")
	if dir == "" {
		t.Skip("a helper of TestRemoveStale")
	}
	if _, err := lazyfs.Mount(dir); err != nil {
		fmt.Println("mount:", err)
		os.Exit(1)
	}
	fmt.Println("mounted")
	// Killed by TestRemoveStale; the bound keeps a lost helper from
	// running for ever.
	time.Sleep(time.Minute)
	os.Exit(1)
}
