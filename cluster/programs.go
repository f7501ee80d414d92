package cluster

import (
	"errors"
	"fmt"
	"os/exec"
)

// ErrMissingProgram is wrapped by the error of CheckPrograms, and of Start,
// when a program the cluster needs is not on the PATH; its text says how
// to install the programs.
var ErrMissingProgram = errors.New("install it with scripts/deps (Debian/Ubuntu: apt-get install redis-server redis-sentinel redis-tools gcc)")

// CheckPrograms reports, in one line, the first program missing from the
// PATH that a cluster of the given backend needs, and how to install it:
// redis-server for the process backend (the failover topology's sentinels
// are redis-server in sentinel mode, the same binary), gcc when the nodes
// run with the clock shim. The docker backend needs them only to build
// DefaultImage when the engine lacks it (see EnsureImage); the external
// backend needs none. It takes a few microseconds: callers run it before
// anything starts.
func CheckPrograms(backend string, clockShim bool) error {
	if backend != BackendProcess && backend != "" {
		return nil
	}
	if err := lookProgram("redis-server", "the process backend runs every node as a redis-server process"); err != nil {
		return err
	}
	if clockShim {
		return lookProgram("gcc", "the clock fault builds its LD_PRELOAD shim with gcc")
	}
	return nil
}

// lookProgram returns nil if name is on the PATH, else a one-line error
// saying why it is needed and how to install it.
func lookProgram(name, why string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s is not on the PATH (%s); %w", name, why, ErrMissingProgram)
	}
	return nil
}
