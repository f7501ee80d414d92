package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/internal/procstat"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/locktorture/locktorture/cluster"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Labels on every container of the docker backend, by which Close and
// RemoveStaleContainers find them.
const (
	// LabelRun is the id of the cluster the container belongs to.
	LabelRun = "io.locktorture.run"
	// LabelOwner names the process that made the container: "host pidns
	// pid start", its host name, PID namespace, PID and start time in
	// clock ticks since boot.
	LabelOwner = "io.locktorture.owner"
	// LabelNode is the node's name: "n1", ...
	LabelNode = "io.locktorture.node"
)

// loopbackAddr is where containers publish their port.
var loopbackAddr = netip.MustParseAddr("127.0.0.1")

var dockerSetupOnce sync.Once

// dockerSetup disables testcontainers' reaper, whose image cannot be
// pulled everywhere (this package removes its containers itself), and
// silences its logging. Both are global to testcontainers-go, which reads
// its configuration once per process.
func dockerSetup() error {
	dockerSetupOnce.Do(func() {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		tclog.SetDefault(tclog.NewNoopLogger())
	})
	if !testcontainers.ReadConfig().RyukDisabled {
		return errors.New("cluster: docker: testcontainers' reaper is enabled (ryuk.disabled=false in ~/.testcontainers.properties?); this package removes its containers itself")
	}
	return nil
}

// newDockerClient returns a client to the Docker engine of the
// environment (DOCKER_HOST, the default socket, ...), once it has answered.
func newDockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	if err := dockerSetup(); err != nil {
		return nil, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err == nil {
		if _, err = cli.Ping(ctx, client.PingOptions{}); err != nil {
			cli.Close()
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: docker: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w: %v", cluster.ErrNoDocker, err)
	}
	return cli, nil
}

// Ping returns nil if a Docker engine answers, else cluster.ErrNoDocker
// (wrapped, with the reason).
func Ping(ctx context.Context) error {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return err
	}
	return cli.Close()
}

// dockerBackend is the Docker engine of one cluster.
type dockerBackend struct {
	cli    *testcontainers.DockerClient
	image  string
	run    string            // LabelRun of this cluster's containers
	labels map[string]string // on every container (LabelNode aside) and network

	network string // of the cluster's own network; "" on the default one
	gateway string // the host's address on that network
}

func newDockerBackend(ctx context.Context, image string) (*dockerBackend, error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 6)
	rand.Read(id) // never fails; see its doc
	run := hex.EncodeToString(id)
	return &dockerBackend{
		cli:    cli,
		image:  image,
		run:    run,
		labels: map[string]string{LabelRun: run, LabelOwner: ownerLabel()},
	}, nil
}

// createNetwork creates the cluster's own bridge network, named after
// the run and labelled as its containers are, and finds the host's
// address on it.
func (b *dockerBackend) createNetwork(ctx context.Context) error {
	name := "locktorture-" + b.run
	res, err := b.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: b.labels})
	if err != nil {
		return fmt.Errorf("cluster: docker network create %s: %w", name, err)
	}
	b.network = name
	nw, err := b.cli.NetworkInspect(ctx, res.ID, client.NetworkInspectOptions{})
	if err != nil {
		return fmt.Errorf("cluster: docker network inspect %s: %w", name, err)
	}
	for _, c := range nw.Network.IPAM.Config {
		if c.Gateway.Is4() {
			b.gateway = c.Gateway.String()
			return nil
		}
	}
	return fmt.Errorf("cluster: docker network %s has no IPv4 gateway", name)
}

// close removes every container of the cluster that is left (none, once
// every node has been released), then its network, and closes the client.
func (b *dockerBackend) close(ctx context.Context) error {
	_, err := removeContainers(ctx, b.cli, func(s container.Summary) bool { return s.Labels[LabelRun] == b.run })
	if b.network != "" {
		if _, nerr := b.cli.NetworkRemove(ctx, b.network, client.NetworkRemoveOptions{}); nerr != nil && !cerrdefs.IsNotFound(nerr) {
			err = errors.Join(err, fmt.Errorf("cluster: docker network rm %s: %w", b.network, nerr))
		}
	}
	return errors.Join(err, b.cli.Close())
}

// containerSpec is one container to start.
type containerSpec struct {
	name     string // LabelNode, and the end of the container's name
	cmd      []string
	env      []string // KEY=value
	dir      string   // bind-mounted as /data
	port     int      // inside, published on 127.0.0.1:hostPort
	hostPort int
}

// containerName returns the name of the cluster's container called name.
func (b *dockerBackend) containerName(name string) string {
	return fmt.Sprintf("locktorture-%s-%s", b.run, name)
}

// startContainer creates and starts a container with testcontainers-go,
// running as this process's user and group. It returns the container's
// id, also when the start failed after the container was made (then
// the caller removes it), and errPortTaken (wrapped) when the engine
// found the host port taken.
func (b *dockerBackend) startContainer(ctx context.Context, spec containerSpec) (string, error) {
	dir, err := filepath.Abs(spec.dir)
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	env := map[string]string{}
	for _, kv := range spec.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	labels := map[string]string{LabelNode: spec.name}
	for k, v := range b.labels {
		labels[k] = v
	}
	cp := network.MustParsePort(fmt.Sprintf("%d/tcp", spec.port))
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:  b.image,
			Name:   b.containerName(spec.name),
			Cmd:    spec.cmd,
			Env:    env,
			Labels: labels,
			// Only this port, bound below; testcontainers would otherwise
			// publish every port the image exposes, on every interface.
			ExposedPorts: []string{cp.String()},
			ConfigModifier: func(c *container.Config) {
				c.User = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{cp: {{HostIP: loopbackAddr, HostPort: strconv.Itoa(spec.hostPort)}}}
				hc.Binds = []string{dir + ":" + imageData}
				if b.network != "" {
					hc.NetworkMode = container.NetworkMode(b.network)
				}
			},
		},
		Started: true,
		Logger:  tclog.NewNoopLogger(),
	}
	if b.network != "" {
		req.Networks = []string{b.network}
	}
	var id string
	ctr, err := testcontainers.GenericContainer(ctx, req)
	if dc, ok := ctr.(*testcontainers.DockerContainer); ok && dc != nil {
		id = dc.GetContainerID()
	}
	if err != nil {
		if s := err.Error(); strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use") {
			return id, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return id, fmt.Errorf("cluster: docker: start %s: %w", spec.name, err)
	}
	return id, nil
}

// remove force-removes the container id (running, paused or not); a
// container already gone is no error.
func (b *dockerBackend) remove(ctx context.Context, id string) error {
	_, err := b.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// watch returns the run of the container id, just started, with a
// goroutine that closes its done channel once the container stops
// running.
func (b *dockerBackend) watch(id string) *containerRun {
	cr := &containerRun{b: b, id: id, exit: make(chan struct{})}
	wctx, cancel := context.WithCancel(context.Background())
	cr.cancel = cancel
	go func() {
		defer close(cr.exit)
		defer cancel()
		res := b.cli.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		select {
		case w := <-res.Result:
			cr.code = w.StatusCode
		case err := <-res.Error:
			cr.waitErr = err
		}
	}()
	return cr
}

// containerRun is one start of a node's container, a cluster.ContainerRun.
type containerRun struct {
	b      *dockerBackend
	id     string
	exit   chan struct{}      // closed once the container has stopped running
	cancel context.CancelFunc // ends the watch

	code    int64 // the exit code; read once exit is closed
	waitErr error // set instead when the wait failed
}

func (c *containerRun) Done() <-chan struct{} { return c.exit }

func (c *containerRun) Kill(ctx context.Context) error {
	_, err := c.b.cli.ContainerKill(ctx, c.id, client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !notRunning(err) {
		return err
	}
	return c.wait(ctx)
}

func (c *containerRun) Pause(ctx context.Context) error {
	_, err := c.b.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{})
	if notRunning(err) {
		return cluster.ErrNotRunning
	}
	return err
}

func (c *containerRun) Resume(ctx context.Context) error {
	_, err := c.b.cli.ContainerUnpause(ctx, c.id, client.ContainerUnpauseOptions{})
	if notRunning(err) {
		return cluster.ErrNotRunning
	}
	return err
}

// Stop removes the container at once (forced, paused or not): its data
// is of no use after Close.
func (c *containerRun) Stop(ctx context.Context, _ time.Duration, _ bool) error {
	defer c.cancel() // ends the watch, also when the container outlives ctx
	if err := c.b.remove(ctx, c.id); err != nil {
		return err
	}
	return c.wait(ctx)
}

// wait waits until the container has stopped running, or ctx is done.
func (c *containerRun) wait(ctx context.Context) error {
	select {
	case <-c.exit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status returns the exit code and the end of the container's output (what
// redis-server wrote before it opened its log file).
func (c *containerRun) Status() string {
	if c.waitErr != nil {
		return fmt.Sprintf("wait: %v", c.waitErr)
	}
	s := fmt.Sprintf("exit code %d", c.code)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logs, err := c.b.cli.ContainerLogs(ctx, c.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(tailLines)})
	if err != nil {
		return s
	}
	defer logs.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, logs) // what it got is better than nothing
	if t := strings.TrimSpace(out.String()); t != "" {
		s += "; container output:\n" + t
	}
	return s
}

// notRunning reports whether err is the engine's refusal to act on a
// container that is not running (or gone).
func notRunning(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return cerrdefs.IsNotFound(err) || strings.Contains(s, "is not running") || strings.Contains(s, "not paused")
}

// Container is a container of the docker backend, as Containers lists it.
type Container struct {
	ID    string
	Name  string
	Run   string // its LabelRun
	Owner string // its LabelOwner
	State string // "running", "paused", "exited", ...
	// Mine is set when this process made it.
	Mine bool
}

// Containers lists every container that carries LabelRun, whoever made it.
func Containers(ctx context.Context) ([]Container, error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	items, err := listContainers(ctx, cli)
	if err != nil {
		return nil, err
	}
	me := ownerLabel()
	var cs []Container
	for _, s := range items {
		name := ""
		if len(s.Names) > 0 {
			name = strings.TrimPrefix(s.Names[0], "/")
		}
		cs = append(cs, Container{ID: s.ID, Name: name, Run: s.Labels[LabelRun], Owner: s.Labels[LabelOwner],
			State: string(s.State), Mine: s.Labels[LabelOwner] == me})
	}
	return cs, nil
}

// RemoveStaleContainers removes the containers (and then the networks) of
// the docker backend left behind by a process that died without closing
// its cluster, and returns their names. A container is stale when its LabelOwner names this host
// and PID namespace and a PID that is not running, or that a process
// started at another time now has. Containers of live processes, of other
// hosts or PID namespaces, or without the label are left alone.
// Opening a cluster (cluster.StartDocker) calls it.
func RemoveStaleContainers(ctx context.Context) ([]string, error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	names, err := removeContainers(ctx, cli, func(s container.Summary) bool { return ownerDead(s.Labels[LabelOwner]) })
	if err != nil {
		return names, err
	}
	// Then the networks of those runs, which nothing uses any more.
	res, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return names, fmt.Errorf("cluster: docker: list networks: %w", err)
	}
	var errs []error
	for _, nw := range res.Items {
		if !ownerDead(nw.Labels[LabelOwner]) {
			continue
		}
		if _, err := cli.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cluster: docker network rm %s: %w", nw.Name, err))
			continue
		}
		names = append(names, nw.Name)
	}
	return names, errors.Join(errs...)
}

func listContainers(ctx context.Context, cli *testcontainers.DockerClient) ([]container.Summary, error) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return nil, fmt.Errorf("cluster: docker: list containers: %w", err)
	}
	return res.Items, nil
}

// removeContainers force-removes the containers carrying LabelRun for
// which match holds, and returns their names.
func removeContainers(ctx context.Context, cli *testcontainers.DockerClient, match func(container.Summary) bool) ([]string, error) {
	items, err := listContainers(ctx, cli)
	if err != nil {
		return nil, err
	}
	var (
		names []string
		errs  []error
	)
	for _, s := range items {
		if !match(s) {
			continue
		}
		_, err := cli.ContainerRemove(ctx, s.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cluster: docker rm %s: %w", s.Names, err))
			continue
		}
		names = append(names, strings.TrimPrefix(strings.Join(s.Names, ","), "/"))
	}
	return names, errors.Join(errs...)
}

// ownerLabel returns the LabelOwner of this process.
func ownerLabel() string { return processOwner(os.Getpid()) }

// processOwner returns "host pidns pid start" for process pid, or "" if
// it does not run (or cannot be read).
func processOwner(pid int) string {
	host, _ := os.Hostname()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		ns = "?"
	}
	start, err := procstat.Start(pid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %s %d %s", host, ns, pid, start)
}

// ownerDead reports whether the process an owner label names has surely
// died: same host and PID namespace as this process, and its PID is not
// running or belongs to a process started at another time.
func ownerDead(label string) bool {
	f := strings.Fields(label)
	me := strings.Fields(ownerLabel())
	return len(f) == 4 && len(me) == 4 && f[0] == me[0] && f[1] == me[1] && f[1] != "?" && procstat.Ended(f[2], f[3])
}
