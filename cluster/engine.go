package cluster

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
)

var (
	// ErrNoDockerBackend is returned for the docker backend by a program
	// built without a ContainerEngine.
	ErrNoDockerBackend = errors.New(`cluster: this binary was built without the docker backend; import _ "github.com/locktorture/locktorture/cluster/docker" in its main package adds it`)
	// ErrNoDocker is returned (wrapped, with the reason) when no Docker
	// engine answers.
	ErrNoDocker = errors.New("cluster: no Docker engine answers")
	// ErrNoImage is wrapped by a ContainerEngine lacking an image.
	ErrNoImage = errors.New("not found in the Docker engine (make redis-image builds the default one; another must be built or pulled by whoever named it)")
	// ErrPortTaken is wrapped by ContainerSet.Start when the engine found
	// the host port taken; the node tries another.
	ErrPortTaken = errors.New("port taken")
)

// ContainerEngine runs the docker backend's containers; cluster/docker
// registers one, so a program that never runs containers (a user's gate)
// is built without the Docker client's eighty-odd packages. Its methods
// return ErrNoDocker or ctx's error, wrapped.
type ContainerEngine interface {
	// Host returns the engine's DOCKER_HOST, for docker build.
	Host(ctx context.Context) (string, error)
	// ImageLabels returns image's labels, or an error wrapping ErrNoImage.
	ImageLabels(ctx context.Context, image string) (map[string]string, error)
	// Open returns the containers of a new cluster, from image; with
	// network, on a network of its own. It first removes what dead
	// processes of this host left.
	Open(ctx context.Context, image string, network bool) (ContainerSet, error)
	// Adopt finds the container with each of ips on one of its networks
	// (adopt.go): nil and no error when some address is no container's.
	Adopt(ctx context.Context, ips []netip.Addr) (Adopted, error)
}

// Adopted drives containers someone else runs: it never creates or
// removes one, and Close only lets go of the engine.
type Adopted interface {
	Containers() []AdoptedContainer // in the order of the addresses
	State(ctx context.Context, id string) (running, paused bool, err error)
	Start(ctx context.Context, id string) error // docker start
	Unpause(ctx context.Context, id string) error
	// Watch returns the run of running container id: its Stop only thaws
	// it and stops watching (the container keeps running).
	Watch(id string) ContainerRun
	Close() error
}

// AdoptedContainer is one adopted node's container.
type AdoptedContainer struct {
	ID, Name string
	// ClockFile is the host's path of its LOCKTORTURE_CLOCK_FILE, in a
	// bind mount; "" without the shim or a file this machine can map.
	ClockFile string
}

// ContainerSet is the containers of one cluster. Close removes those
// left, and its network.
type ContainerSet interface {
	// Gateway returns the host's address on the cluster's own network;
	// "" on the default one.
	Gateway() string
	// Start creates and starts a container. It returns its id also when
	// the start failed after it was made (the caller removes it), and
	// ErrPortTaken (wrapped) when spec.HostPort is taken.
	Start(ctx context.Context, spec ContainerSpec) (string, error)
	Restart(ctx context.Context, id string) error // of a stopped one
	Watch(id string) ContainerRun                 // of one just started
	// Remove force-removes container id; one already gone is no error.
	Remove(ctx context.Context, id string) error
	Name(node string) string // of node's container
	Close(ctx context.Context) error
}

// ContainerSpec is one container to start, as this process's user and
// group, its port published on 127.0.0.1 only.
type ContainerSpec struct {
	Name     string   // the node's or sentinel's name: "n1", "s1", ...
	Cmd      []string // the arguments of the image's entry point
	Env      []string // KEY=value
	Dir      string   // bind-mounted at ImageData
	Port     int      // inside the container
	HostPort int      // on 127.0.0.1 of this host
}

// ContainerRun is one run of a container, or of a process on the process
// backend, from its start until it stops.
type ContainerRun interface {
	Done() <-chan struct{}          // closed once it has stopped
	Kill(ctx context.Context) error // SIGKILL, and wait
	// Pause freezes it, Resume thaws it: ErrNotRunning when it is not.
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// Stop ends it for Cluster.Close, gracefully within grace if it can
	// (paused: Pause froze it), and waits.
	Stop(ctx context.Context, grace time.Duration, paused bool) error
	Status() string // how it ended, for errors
}

var engine struct {
	mu sync.Mutex
	e  ContainerEngine
}

// RegisterContainerEngine makes e the docker backend's engine (cluster/docker
// calls it); it panics if one is registered already.
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

// imageShim returns the clock shim's path inside image (LabelClockShim),
// or "" when it carries none.
func imageShim(ctx context.Context, image string) (string, error) {
	e, err := containerEngine()
	if err != nil {
		return "", err
	}
	image = cmp.Or(image, DefaultImage)
	labels, err := e.ImageLabels(ctx, image)
	return labels[LabelClockShim], err
}
