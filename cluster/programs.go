package cluster

import (
	"errors"
	"fmt"
	"os/exec"
)

// ErrMissingProgram is wrapped by the error of Spec.CheckPrograms, and of Start,
// when a program the cluster needs is not on the PATH; its text says how
// to install the programs.
var ErrMissingProgram = errors.New("install it with scripts/deps (Debian/Ubuntu: apt-get install redis-server redis-sentinel redis-tools gcc)")

// lookProgram returns nil if name is on the PATH, else a one-line error
// saying why it is needed and how to install it.
func lookProgram(name, why string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s is not on the PATH (%s); %w", name, why, ErrMissingProgram)
	}
	return nil
}

// CheckPrograms reports, in one line, the first program missing from the
// PATH that opening a cluster of s needs, and how to install it:
// redis-server for the process backend (the failover topology's sentinels
// are redis-server in sentinel mode, the same binary), and gcc when its
// nodes are to run with the clock shim (clockShim). The docker backend
// needs them only to build DefaultImage when the engine lacks it (Open
// does), but needs this program to be built with it: ErrNoDockerBackend
// otherwise. The external backend needs none. It takes a few
// microseconds: callers run it before anything starts.
func (s Spec) CheckPrograms(clockShim bool) error {
	switch s.backend() {
	case BackendDocker:
		_, err := containerEngine()
		return err
	case BackendProcess:
	default:
		return nil
	}
	if s.Server == ServerEtcd {
		return lookProgram(etcdProgram, "the etcd lock's members run as etcd processes (scripts/deps installs Debian's etcd-server)")
	}
	if err := lookProgram("redis-server", "the process backend runs every node as a redis-server process"); err != nil {
		return err
	}
	if clockShim {
		return lookProgram("gcc", "the clock fault builds its LD_PRELOAD shim with gcc")
	}
	return nil
}
