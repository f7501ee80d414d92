// Package procstat reads what /proc says of a process: its state, its
// parent, and its start time, which tells a process from a later one
// that reuses its PID (the owner labels of the docker backend's
// containers and of lazyfs's mounts; the tests' process helpers).
//
// It imports the standard library only.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Stat returns the fields of /proc/pid/stat from the third (the state)
// on: the command name, the second, is in parentheses and may hold spaces.
func Stat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("bad stat")
	}
	return strings.Fields(string(b[i+1:])), nil
}

// Start returns field 22 of /proc/pid/stat: the process's start time in
// clock ticks since boot.
func Start(pid int) (string, error) {
	f, err := Stat(pid)
	if err != nil {
		return "", err
	}
	if len(f) < 20 {
		return "", errors.New("bad stat")
	}
	return f[19], nil
}

// Ended reports whether the process pid, started at start (as Start says),
// has surely ended: its PID runs no more, or belongs to a process started
// at another time. A pid that is no PID has not surely ended.
func Ended(pid, start string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return false
	}
	if err := syscall.Kill(n, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	now, err := Start(n)
	return err == nil && now != start
}
