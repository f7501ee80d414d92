package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Modes of everything the package creates: a node's or sentinel's folder
// holds its configuration file, and that holds the password.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// privateDir creates dir with mode 0700 (parents it creates too) and, if
// it already existed, sets it to 0700: a node's and a sentinel's folder
// hold their password.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// writePrivate writes data to path as a new file of mode 0600, created
// beside it and renamed into place: a file that a container rewrote with
// a wider mode (see keeper) does not keep that mode, as it would through
// os.WriteFile, and no reader ever sees half a file.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-") // mode 0600
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// umaskShell runs a program with umask 077 and then replaces itself with
// it (same PID, so signals and Pdeathsig reach the program): Go's os/exec
// cannot set a child's umask, and Redis creates its files (log,
// append-only files, and the configuration file that Sentinel and CONFIG
// REWRITE rewrite) with mode 0644 & ~umask: with the usual umask 022 a
// rewritten sentinel.conf is 0644 whatever its mode was (measured with
// 7.0.15; it rewrites it at start-up already), with 077 it is 0600.
const umaskShell = `umask 077 && exec "$0" "$@"`

// privateCommand returns the command running bin with args under umask
// 077 (see umaskShell). Nothing secret may be in args: every local user
// can read a process's command line.
func privateCommand(bin string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", umaskShell, bin}, args...)...)
}

// redisQuote quotes s as a Redis configuration file argument: in double
// quotes, with backslash, double quote and every byte outside printable
// ASCII escaped (\xHH), as Redis's sdssplitargs reads them back.
func redisQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// keeper keeps the folders that containers write into private. A
// container runs with Docker's umask 022, which no Docker option changes,
// so what Redis creates in a bind-mounted folder (its log, append-only
// files, and the configuration file that Sentinel and CONFIG REWRITE
// rewrite, with the password in it) is readable by group and others. The
// keeper watches each folder with inotify (fsnotify) and, on every
// creation, rename into place or mode change, takes group's and others'
// access away (a 0644 file becomes 0600, a 0755 folder 0700, and is
// watched too). The folders themselves are 0700,
// so the moment between a container's write and the keeper's chmod gives
// no other user a way in.
type keeper struct {
	w    *fsnotify.Watcher
	done chan struct{}

	mu    sync.Mutex
	roots []string // given to watch
	errs  []error  // of chmods that failed, reported by close
}

func newKeeper() (*keeper, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cluster: watch folders: %w", err)
	}
	k := &keeper{w: w, done: make(chan struct{})}
	go k.loop()
	return k, nil
}

// watch makes dir and everything under it private now, and keeps it so.
func (k *keeper) watch(dir string) error {
	if err := k.w.Add(dir); err != nil {
		return fmt.Errorf("cluster: watch %s: %w", dir, err)
	}
	k.mu.Lock()
	k.roots = append(k.roots, dir)
	k.mu.Unlock()
	if err := k.sweep(dir, true); err != nil {
		return fmt.Errorf("cluster: keep %s private: %w", dir, err)
	}
	return nil
}

// sweep takes group's and others' access to dir and everything under it
// away and, with watch, watches the folders below dir.
func (k *keeper) sweep(dir string, watch bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone meanwhile (a renamed temporary file)
		} else if err != nil {
			return err
		}
		if watch && d.IsDir() { // the root too: a folder just created in a watched one
			if err := k.w.Add(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return restrict(path)
	})
}

// restrict takes group's and others' access to path away; a path gone
// meanwhile is no error, nor is a symbolic link (its mode means nothing).
func restrict(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (k *keeper) loop() {
	defer close(k.done)
	for {
		select {
		case ev, ok := <-k.w.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Chmod) {
				continue
			}
			if err := k.sweep(ev.Name, true); err != nil {
				k.fail(err)
			}
		case err, ok := <-k.w.Errors:
			if !ok {
				return
			}
			k.fail(err)
		}
	}
}

func (k *keeper) fail(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.errs = append(k.errs, err)
}

// close stops watching, sweeps every folder once more (call it once the
// containers are gone, so nothing is written after), and returns what went
// wrong meanwhile.
func (k *keeper) close() error {
	err := k.w.Close()
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	errs := append(k.errs, err)
	for _, r := range k.roots {
		errs = append(errs, k.sweep(r, false))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: keep folders private: %w", err)
	}
	return nil
}
