package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
)

// redisPort is where redis-server listens inside a container.
const redisPort = 6379

// StartDocker is Start with containers of image (DefaultImage if ""),
// never pulled, each publishing Redis on a port of 127.0.0.1 kept across
// Restart (so the proxies' upstreams stay valid) and bind-mounting its
// node's folder as /data: the engine must be local. WithClockShim needs an
// image carrying the shim (LabelClockShim).
func StartDocker(ctx context.Context, n int, image string, opts ...Option) (*Cluster, error) {
	return startDocker(ctx, n, image, false, opts)
}

// startDocker is StartDocker; with private, on a Docker network of its
// own (StartDockerFailover).
func startDocker(ctx context.Context, n int, image string, private bool, opts []Option) (*Cluster, error) {
	o, err := newOptions(n, opts)
	if err != nil {
		return nil, err
	}
	if o.redisServer != "redis-server" || o.toxiproxy != "" {
		return nil, errors.New("cluster: docker: WithRedisServer and WithToxiproxy do not apply")
	}
	if o.lazyFS {
		return nil, errors.New("cluster: docker: " + lazyFSWhy(BackendDocker))
	}
	image = cmp.Or(image, DefaultImage)
	shim, err := imageShim(ctx, image)
	if err != nil {
		return nil, err
	}
	if o.clockShim && shim == "" {
		return nil, fmt.Errorf("%w: image %s carries none (no label %s; make redis-image builds one that does)", ErrNoClockShim, image, LabelClockShim)
	}
	e, err := containerEngine()
	if err != nil {
		return nil, err
	}
	b, err := e.Open(ctx, image, private)
	if err != nil {
		return nil, err
	}
	c, err := newCluster(BackendDocker, o, n)
	if err != nil {
		return nil, errors.Join(err, b.Close(context.WithoutCancel(ctx)))
	}
	c.docker = b
	if c.keeper, err = newKeeper(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if o.clockShim {
		c.shim = shim
	}
	for _, nd := range c.nodes {
		nd.rn = &containerRunner{n: nd, b: b}
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// containerRunner runs a node in a container, created by the first start
// and started again by later ones.
type containerRunner struct {
	n    *Node
	b    ContainerSet
	port int    // on 127.0.0.1 of the host; fixed once Start returns
	id   string // of the current container; "" before the first start
}

var _ runner = (*containerRunner)(nil)

func (r *containerRunner) addr() string { return net.JoinHostPort(loopback, strconv.Itoa(r.port)) }

// start creates and starts a container on a new free port (fresh), or
// starts the node's container again.
func (r *containerRunner) start(ctx context.Context, fresh bool) (run, error) {
	n := r.n
	writeConf := func() error {
		return n.writeConf(filepath.Join(n.dir, nodeConf), redisPort, "0.0.0.0", ImageData, ImageData+"/"+redisLog)
	}
	if !fresh {
		if err := writeConf(); err != nil {
			return nil, err
		}
		if err := r.b.Restart(ctx, r.id); err != nil {
			return nil, fmt.Errorf("cluster: docker start %s: %w", r.n.name, err)
		}
		return r.b.Watch(r.id), nil
	}
	if err := r.release(ctx); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r.port = port
	if err := writeConf(); err != nil {
		return nil, err
	}
	id, err := r.b.Start(ctx, ContainerSpec{
		Name:     n.name,
		Cmd:      append([]string{ImageData + "/" + nodeConf}, n.c.opts.extraArgs...),
		Env:      n.clockEnv(nil, ImageData+"/"+clockFileName),
		Dir:      n.dir,
		Port:     redisPort,
		HostPort: port,
	})
	r.id = id
	if err != nil {
		return nil, errors.Join(err, r.release(context.WithoutCancel(ctx)))
	}
	return r.b.Watch(id), nil
}

// release removes the node's container, if any.
func (r *containerRunner) release(ctx context.Context) error {
	if r.id == "" {
		return nil
	}
	if err := r.b.Remove(ctx, r.id); err != nil {
		return fmt.Errorf("cluster: docker rm %s: %w", r.b.Name(r.n.name), err)
	}
	r.id = ""
	return nil
}
