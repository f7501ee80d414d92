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

// Modes of everything the package creates: a folder holds a configuration
// file, which holds the password.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// privateDir creates dir, or narrows it, to mode 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// writePrivate writes data to path as a new 0600 file renamed into place:
// a file a container rewrote with a wider mode does not keep it, as it
// would through os.WriteFile, and no reader sees half a file.
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

// umaskShell sets umask 077 and execs the program (same PID, so signals and
// Pdeathsig reach it): os/exec cannot set a child's umask, and Redis
// creates its files (log, AOF, the configuration Sentinel and CONFIG
// REWRITE rewrite) 0644 & ~umask: under 022 a sentinel.conf is 0644 from
// its start-up rewrite on (measured with 7.0.15), under 077 0600.
const umaskShell = `umask 077 && exec "$0" "$@"`

// privateCommand runs bin with args under umask 077. Nothing secret may
// be in args: every local user can read a command line.
func privateCommand(bin string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", umaskShell, bin}, args...)...)
}

// redisQuote double-quotes s for a Redis configuration file, escaping
// backslash, quote and non-printable bytes (\xHH) as sdssplitargs reads
// them.
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

// keeper keeps the folders containers write into private: a container
// runs with umask 022, which no Docker option changes, so what Redis
// creates there (see umaskShell) is readable by group and others. It
// watches each folder with fsnotify and, on every creation, rename or
// chmod, takes group's and others' access away (and watches new folders).
// The folders are 0700, so no other user gets in before its chmod.
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

// sweep restricts dir and everything under it and, with watch, watches
// the folders below.
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
// meanwhile or a symbolic link (its mode means nothing) is left.
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
// containers are gone) and returns what went wrong meanwhile.
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
