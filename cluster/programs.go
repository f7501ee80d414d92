package cluster

import (
	"errors"
	"fmt"
	"os/exec"
)

// ErrMissingProgram is wrapped when a program the cluster needs is not on
// the PATH; its text says how to install them.
var ErrMissingProgram = errors.New("install it with scripts/deps (Debian/Ubuntu: apt-get install redis-server redis-sentinel redis-tools gcc)")

// lookProgram returns nil if name is on the PATH, else why it is needed.
func lookProgram(name, why string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s is not on the PATH (%s); %w", name, why, ErrMissingProgram)
	}
	return nil
}

// CheckPrograms reports, in one line, the first program a cluster of s
// needs that is missing from the PATH: redis-server (the sentinels too)
// or etcd on the process backend, and gcc with clockShim. The docker
// backend needs ErrNoDockerBackend's engine instead, the external one
// nothing. It takes microseconds: callers run it before anything starts.
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
