package cluster

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// ErrNoClockShim is returned by SetClockOffset without WithClockShim, and
// by StartDocker WithClockShim when the image carries no shim.
var ErrNoClockShim = errors.New("cluster: no clock shim")

const (
	clockFileEnv   = "LOCKTORTURE_CLOCK_FILE" // read by clockshim.c
	clockFileName  = "clock.offset"           // in the node's directory
	shimBuildLimit = time.Minute              // for gcc
)

// clockShimSource is the LD_PRELOAD shim that shifts a process's wall
// clock; see its header.
//
//go:embed clockshim.c
var clockShimSource []byte

// clockShimFlags are gcc's flags before "-o out.so clockshim.c".
var clockShimFlags = []string{"-shared", "-fPIC", "-O2"}

// WithClockShim preloads the clock shim (built from clockshim.c with gcc
// on first use, cached in the user's cache directory) into every node, so
// Node.SetClockOffset can shift the wall clock that key expiry and TIME
// read (CLOCK_REALTIME and _COARSE, gettimeofday, time); the monotonic
// clock (event-loop timers) runs on. Start fails without gcc. Default off.
func WithClockShim() Option {
	return func(o *options) { o.clockShim = true }
}

// SetClockOffset shifts the node's wall clock to the real time plus d
// from its next clock read on; expiry sees it on the next access to a key
// and the next active-expire cycle. It holds across Kill and Restart (a
// machine's clock does not change when Redis restarts); Start sets 0. It
// returns ErrNoClockShim without WithClockShim, ErrClosed after Close.
func (n *Node) SetClockOffset(d time.Duration) error {
	if n.clock == nil {
		return fmt.Errorf("%w: set clock offset of %s (the nodes were not started WithClockShim)", ErrNoClockShim, n.name)
	}
	if !n.clock.store(int64(d)) {
		return fmt.Errorf("%w: set clock offset of %s", ErrClosed, n.name)
	}
	return nil
}

// ClockOffset returns the offset set by SetClockOffset: 0 without
// WithClockShim, after Start and after Close.
func (n *Node) ClockOffset() time.Duration {
	if n.clock == nil {
		return 0
	}
	return time.Duration(n.clock.load())
}

// clockFile is an offset: a native-endian int64 of nanoseconds, the whole
// of an 8-byte file that this process and the shim of every process using
// it map MAP_SHARED, so the shim's next load sees Go's store (the same
// page of the page cache). atomic.StoreInt64 on the mapped word is never
// seen torn; pwrite(2) makes no such promise.
type clockFile struct {
	path string
	mu   sync.Mutex // guards mem against Munmap
	mem  []byte     // the mapping; nil once closed
}

// mapClock maps the offset file at path: created at offset 0 with create,
// else as it is (an adopted container's, which its running shim maps too:
// never truncated).
func mapClock(path string, create bool) (*clockFile, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, fileMode)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	if create {
		if _, err := f.Write(make([]byte, 8)); err != nil {
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &clockFile{path: path, mem: mem}, nil
}

// openClock creates and maps the node's offset file, WithClockShim, once
// before the first spawn.
func (n *Node) openClock() error {
	if n.c.shim == "" {
		return nil
	}
	f, err := mapClock(filepath.Join(n.dir, clockFileName), true)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	n.clock = f
	return nil
}

// word points at the mapped offset: page-aligned, so 8-byte aligned.
func (f *clockFile) word() *int64 { return (*int64)(unsafe.Pointer(&f.mem[0])) }

func (f *clockFile) store(ns int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem == nil {
		return false
	}
	atomic.StoreInt64(f.word(), ns)
	return true
}

func (f *clockFile) load() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem == nil {
		return 0
	}
	return atomic.LoadInt64(f.word())
}

// close unmaps the file; nil-safe and idempotent.
func (f *clockFile) close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem == nil {
		return nil
	}
	err := syscall.Munmap(f.mem)
	f.mem = nil
	if err != nil {
		return fmt.Errorf("cluster: unmap %s: %w", f.path, err)
	}
	return nil
}

// withClockEnv is clockEnv naming the node's offset file as this host
// sees it.
func (n *Node) withClockEnv(env []string) []string {
	if n.clock == nil {
		return env
	}
	return n.clockEnv(env, n.clock.path)
}

// clockEnv returns env with the shim preloaded (ahead of any LD_PRELOAD
// there) and the offset file named file (in a container, its bind mount's
// path); env itself without WithClockShim.
func (n *Node) clockEnv(env []string, file string) []string {
	if n.clock == nil {
		return env
	}
	preload := n.c.shim
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok && v != "" {
			preload = n.c.shim + " " + v // the last one wins, as in exec.Cmd
		}
	}
	return append(env, "LD_PRELOAD="+preload, clockFileEnv+"="+file)
}

var clockShimOnce = sync.OnceValues(buildClockShim)

// clockShim returns the path of the compiled shim, built once per process
// (and once per source and flags in the cache directory).
func clockShim() (path string, err error) { return clockShimOnce() }

func buildClockShim() (string, error) {
	if err := lookProgram("gcc", "the clock shim is built with gcc"); err != nil {
		return "", err
	}
	gcc, _ := exec.LookPath("gcc")
	dir, err := shimCacheDir()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(clockShimSource)
	for _, f := range clockShimFlags {
		h.Write([]byte("\x00" + f))
	}
	path := filepath.Join(dir, "clockshim-"+hex.EncodeToString(h.Sum(nil)[:8])+".so")
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, nil // only ever renamed into place whole
	}
	tmp, err := os.MkdirTemp(dir, "build-") // same file system: rename is atomic
	if err != nil {
		return "", fmt.Errorf("cluster: clock shim: %w", err)
	}
	defer os.RemoveAll(tmp)
	src, out := filepath.Join(tmp, "clockshim.c"), filepath.Join(tmp, "clockshim.so")
	if err := os.WriteFile(src, clockShimSource, 0o644); err != nil {
		return "", fmt.Errorf("cluster: clock shim: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shimBuildLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, gcc, append(clockShimFlags, "-o", out, src)...)
	cmd.Dir = tmp
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cluster: build clock shim: %w\n%s", err, msg)
	}
	if err := os.Rename(out, path); err != nil {
		return "", fmt.Errorf("cluster: clock shim: %w", err)
	}
	return path, nil
}

// shimCacheDir returns os.UserCacheDir()/locktorture, or else a directory
// of this user's own in os.TempDir; not one holding ':' or white space,
// which LD_PRELOAD splits on.
func shimCacheDir() (string, error) {
	var errs []error
	if d, err := os.UserCacheDir(); err != nil {
		errs = append(errs, err)
	} else if d = filepath.Join(d, "locktorture"); strings.ContainsAny(d, ": \t\n") {
		errs = append(errs, fmt.Errorf("%q: LD_PRELOAD cannot name it", d))
	} else if err := os.MkdirAll(d, 0o755); err != nil {
		errs = append(errs, err)
	} else {
		return d, nil
	}
	// Refuse a shared one somebody else made: its .so would run in our
	// redis-servers.
	d := filepath.Join(os.TempDir(), fmt.Sprintf("locktorture-%d", os.Getuid()))
	err := os.MkdirAll(d, 0o700)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Lstat(d); err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
				err = fmt.Errorf("%s is not a private directory of this user", d)
			} else if strings.ContainsAny(d, ": \t\n") {
				err = fmt.Errorf("%q: LD_PRELOAD cannot name it", d)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("cluster: clock shim: no cache directory: %w", errors.Join(append(errs, err)...))
	}
	return d, nil
}
