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

// ErrNoClockShim is returned by SetClockOffset when the cluster was not
// started WithClockShim, and by StartDocker (and Open) WithClockShim when
// the image carries no shim.
var ErrNoClockShim = errors.New("cluster: no clock shim")

const (
	clockFileEnv   = "LOCKTORTURE_CLOCK_FILE" // read by clockshim.c
	clockFileName  = "clock.offset"           // in the node's directory
	shimBuildLimit = time.Minute              // for gcc
)

// clockShimSource is the LD_PRELOAD shim that shifts redis-server's wall
// clock; see its header.
//
//go:embed clockshim.c
var clockShimSource []byte

// clockShimFlags are gcc's flags before "-o out.so clockshim.c".
var clockShimFlags = []string{"-shared", "-fPIC", "-O2"}

// WithClockShim preloads a small clock shim (LD_PRELOAD, built from the
// embedded clockshim.c with gcc on first use and cached in the user's cache
// directory) into every node, so Node.SetClockOffset can shift its wall
// clock: clock_gettime of CLOCK_REALTIME and CLOCK_REALTIME_COARSE,
// gettimeofday and time, which drive key expiry and TIME. The monotonic
// clock (event-loop timers) is left alone. Start fails if gcc is missing.
// The default is off: nodes run on the real clock.
func WithClockShim() Option {
	return func(o *options) { o.clockShim = true }
}

// SetClockOffset shifts the node's wall clock to the real time plus d (d < 0
// sets it back), from the process's next clock read on; expiry is checked
// against it on the next access to a key and in the next active-expire cycle.
// The offset holds until set again, across Kill and Restart (a machine's
// clock does not change when Redis restarts); Start sets it to 0. It returns
// ErrNoClockShim unless the cluster was started WithClockShim, and ErrClosed
// after Close.
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

// clockFile is a node's offset: a signed int64 of nanoseconds in native
// byte order, the whole of an 8-byte file that this process and the shim in
// every redis-server run of the node map MAP_SHARED. Both mappings are the
// same page of the page cache, so the shim's next load sees Go's store. A
// mapped word stored with atomic.StoreInt64 (one aligned 8-byte store) is
// never seen torn; pwrite(2) copies bytes with no such promise.
type clockFile struct {
	path string
	mu   sync.Mutex // guards mem against Munmap
	mem  []byte     // the mapping; nil once closed
}

// openClock creates the node's offset file with offset 0 and maps it; it
// does nothing without WithClockShim. Called once, before the first spawn.
func (n *Node) openClock() error {
	if n.c.shim == "" {
		return nil
	}
	path := filepath.Join(n.dir, clockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	if _, err := f.Write(make([]byte, 8)); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("cluster: map %s: %w", path, err)
	}
	n.clock = &clockFile{path: path, mem: mem}
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

// withClockEnv returns env with the shim preloaded (ahead of any LD_PRELOAD
// already there) and its offset file named, or env itself without
// WithClockShim.
func (n *Node) withClockEnv(env []string) []string {
	if n.clock == nil {
		return env
	}
	return n.clockEnvFile(env, n.clock.path)
}

// clockEnv is withClockEnv for a redis-server that sees the node's
// directory as dir (a container's bind mount).
func (n *Node) clockEnv(env []string, dir string) []string {
	if n.clock == nil {
		return env
	}
	return n.clockEnvFile(env, filepath.Join(dir, clockFileName))
}

func (n *Node) clockEnvFile(env []string, file string) []string {
	preload := n.c.shim
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok && v != "" {
			preload = n.c.shim + " " + v // the last one wins, as in exec.Cmd
		}
	}
	return append(env, "LD_PRELOAD="+preload, clockFileEnv+"="+file)
}

var clockShimOnce = sync.OnceValues(buildClockShim)

// clockShim returns the path of the compiled shim, building it once per
// process (and once per source and flags in the cache directory).
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

// shimCacheDir returns os.UserCacheDir()/locktorture, or else a directory of
// this user's own in os.TempDir. Paths holding ':' or white space are
// skipped: LD_PRELOAD splits on them.
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
	// A shared directory: refuse one that somebody else made, whose .so
	// would run inside our redis-servers.
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
