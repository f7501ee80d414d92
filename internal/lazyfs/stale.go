package lazyfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/locktorture/locktorture/internal/procstat"
)

// owner names process pid for a mount's source: PID namespace, PID and start
// time (procstat.Start), so a later process can tell whether the mount's
// maker still runs, a reused PID notwithstanding. "" when unreadable.
func owner(pid int) string {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		ns = "?"
	}
	ns = strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
	start, err := procstat.Start(pid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s.%d.%s", ns, pid, start)
}

// dead reports whether the process o names has surely ended: in this PID
// namespace, its PID runs no more or belongs to a later process.
func dead(o string) bool {
	f := strings.Split(o, ".")
	me := strings.Split(owner(os.Getpid()), ".")
	return len(f) == 3 && len(me) == 3 && f[0] == me[0] && f[0] != "?" && procstat.Ended(f[1], f[2])
}

// Mounted lists the mount points of the lazyfs mounts of this machine's
// mount namespace, whoever made them, with the owner each names.
func Mounted() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	out := make(map[string]string)
	for s := bufio.NewScanner(bytes.NewReader(b)); s.Scan(); {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(s.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 2 || qf[0] != "fuse."+Name {
			continue
		}
		if o, ok := strings.CutPrefix(qf[1], sourcePrefix); ok {
			out[unescape(pf[4])] = o
		}
	}
	return out, nil
}

// RemoveStale detaches the lazyfs mounts whose process died (a run killed
// before it unmounted: the kernel keeps such a mount, every access failing
// with "transport endpoint is not connected") and returns their mount points;
// those of live processes or other PID namespaces are left alone.
func RemoveStale() ([]string, error) {
	mounts, err := Mounted()
	if err != nil {
		return nil, err
	}
	var (
		gone []string
		errs []error
	)
	for mp, o := range mounts {
		if !dead(o) {
			continue
		}
		if err := detach(mp); err != nil {
			errs = append(errs, fmt.Errorf("lazyfs: detach the stale mount %s: %w", mp, err))
			continue
		}
		gone = append(gone, mp)
	}
	return gone, errors.Join(errs...)
}

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fusermount runs fusermount3 or fusermount with args.
func fusermount(args ...string) error {
	var errs []error
	for _, bin := range []string{"fusermount3", "fusermount"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out, err := exec.Command(path, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	return errors.Join(errs...)
}
