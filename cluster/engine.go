package cluster

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
)

var (
	// ErrNoDockerBackend is returned by Open, StartDocker,
	// StartDockerFailover, BuildImage and Spec.CheckPrograms in a program
	// built without a ContainerEngine.
	ErrNoDockerBackend = errors.New(`cluster: this binary was built without the docker backend; import _ "github.com/locktorture/locktorture/cluster/docker" in its main package adds it`)
	// ErrNoDocker is returned (wrapped, with the reason) when no Docker
	// engine answers.
	ErrNoDocker = errors.New("cluster: no Docker engine answers")
	// ErrNoImage is wrapped by the error of a ContainerEngine asked about
	// an image it does not have.
	ErrNoImage = errors.New("not found in the Docker engine (make redis-image builds the default one; another must be built or pulled by whoever named it)")
	// ErrPortTaken is wrapped by the error of ContainerSet.Start when the
	// engine found the host port taken; the node tries another.
	ErrPortTaken = errors.New("port taken")
)

// ContainerEngine runs the containers of the docker backend, whose nodes,
// image and topologies are this package's (StartDocker,
// StartDockerFailover, BuildImage, Open). Package cluster/docker
// registers the engine of this module (testcontainers-go and the Docker
// client) when it is imported:
//
//	import _ "github.com/locktorture/locktorture/cluster/docker"
//
// so that a program that never runs nodes in containers (a user's gate)
// is built without the Docker client and its eighty-odd packages. Its
// methods return ErrNoDocker (wrapped) when no engine answers, and a
// cancelled context's error (wrapped) when ctx ends first.
type ContainerEngine interface {
	// Host returns the address of the engine the containers run on (a
	// DOCKER_HOST value), once it has answered, so that docker build can
	// be pointed at the same engine.
	Host(ctx context.Context) (string, error)
	// ImageLabels returns the labels of image, or an error wrapping
	// ErrNoImage when the engine does not have it.
	ImageLabels(ctx context.Context, image string) (map[string]string, error)
	// Open returns the containers of a new cluster, to be made from
	// image; with network, on a Docker network of the cluster's own. It
	// first removes the containers and networks left behind by a process
	// of this host that died without closing its cluster.
	Open(ctx context.Context, image string, network bool) (ContainerSet, error)
	// Adopt finds, for each of ips, the container of the engine that has
	// that address on one of its networks: the nodes of a cluster someone
	// else runs on this machine (deploy/compose; adopt.go). It returns nil
	// and no error when some address is no container's.
	Adopt(ctx context.Context, ips []netip.Addr) (Adopted, error)
}

// Adopted drives containers someone else runs: it never creates or
// removes one, and Close only lets go of the engine.
type Adopted interface {
	// Containers are the containers found, in the order of the addresses.
	Containers() []AdoptedContainer
	// State says whether container id runs, and whether it is paused.
	State(ctx context.Context, id string) (running, paused bool, err error)
	// Start starts container id (docker start); Unpause thaws it.
	Start(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
	// Watch returns the run of container id, running now: its Kill,
	// Pause and Resume act on the container, and its Stop only thaws it
	// when paused and stops watching it (the container keeps running).
	Watch(id string) ContainerRun
	Close() error
}

// AdoptedContainer is one adopted node's container.
type AdoptedContainer struct {
	ID, Name string
	// ClockFile is the host's path of the container's clock offset file
	// (its LOCKTORTURE_CLOCK_FILE, in a bind mount of this machine), ""
	// when it runs without the clock shim or the file is not this
	// machine's to map.
	ClockFile string
}

// ContainerSet is the containers of one cluster. Close removes those
// left, and its network.
type ContainerSet interface {
	// Gateway returns the host's address on the cluster's own network,
	// which its containers can reach; "" on the engine's default one.
	Gateway() string
	// Start creates and starts a container as spec says. It returns the
	// container's id also when the start failed after the container was
	// made (the caller removes it), and ErrPortTaken (wrapped) when the
	// engine found spec.HostPort taken.
	Start(ctx context.Context, spec ContainerSpec) (string, error)
	// Restart starts the stopped container id again.
	Restart(ctx context.Context, id string) error
	// Watch returns the run of container id, just started.
	Watch(id string) ContainerRun
	// Remove force-removes container id, running, paused or not; one
	// already gone is no error.
	Remove(ctx context.Context, id string) error
	// Name returns the name of the container of the node called node.
	Name(node string) string
	Close(ctx context.Context) error
}

// ContainerSpec is one container to start: its redis-server (or
// sentinel) reads its configuration in Dir, which is bind-mounted at
// ImageData, and listens on Port inside, published on 127.0.0.1:HostPort
// only. It runs as this process's user and group.
type ContainerSpec struct {
	Name     string   // the node's or sentinel's name: "n1", "s1", ...
	Cmd      []string // the arguments of the image's entry point
	Env      []string // KEY=value
	Dir      string   // bind-mounted at ImageData
	Port     int      // inside the container
	HostPort int      // on 127.0.0.1 of this host
}

// ContainerRun is one start of a container, from its start to the moment
// it stops running; a node's process, on the process backend, is one too.
type ContainerRun interface {
	// Done is closed once the container has stopped running.
	Done() <-chan struct{}
	// Kill sends SIGKILL (docker kill) and returns once the container has
	// stopped.
	Kill(ctx context.Context) error
	// Pause freezes the container (docker pause); Resume thaws it. Both
	// return ErrNotRunning when it is not running.
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// Stop ends the run for Cluster.Close (gracefully within grace, if the
	// engine can; paused says whether Pause froze it) and returns once
	// the container has stopped.
	Stop(ctx context.Context, grace time.Duration, paused bool) error
	// Status says how the run ended, for error messages.
	Status() string
}

var engine struct {
	mu sync.Mutex
	e  ContainerEngine
}

// RegisterContainerEngine makes e the engine of the docker backend.
// Package cluster/docker calls it when it is imported; it panics if an
// engine is registered already.
func RegisterContainerEngine(e ContainerEngine) {
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.e != nil {
		panic("cluster: a container engine is registered already")
	}
	engine.e = e
}

// containerEngine returns the registered engine, or ErrNoDockerBackend.
func containerEngine() (ContainerEngine, error) {
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.e == nil {
		return nil, ErrNoDockerBackend
	}
	return engine.e, nil
}

// imageShim returns the path of the clock shim inside image, from its
// LabelClockShim, or "" when the image carries none. It returns an error
// if no Docker engine answers or the engine has no such image.
func imageShim(ctx context.Context, image string) (string, error) {
	e, err := containerEngine()
	if err != nil {
		return "", err
	}
	if image == "" {
		image = DefaultImage
	}
	labels, err := e.ImageLabels(ctx, image)
	return labels[LabelClockShim], err
}
