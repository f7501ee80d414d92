package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
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
	LabelRun = "io.locktorture.run" // the id of the container's cluster
	// LabelOwner names the process that made it: "host pidns pid start",
	// the start in clock ticks since boot.
	LabelOwner = "io.locktorture.owner"
	LabelNode  = "io.locktorture.node" // "n1", ...
)

// loopbackAddr is where containers publish their port.
var loopbackAddr = netip.MustParseAddr("127.0.0.1")

// dockerSetupOnce disables testcontainers' reaper, whose image cannot be
// pulled everywhere (this package removes its containers itself), and
// silences its logging, once: testcontainers-go reads its configuration
// once per process.
var dockerSetupOnce = sync.OnceFunc(func() {
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	tclog.SetDefault(tclog.NewNoopLogger())
})

func dockerSetup() error {
	dockerSetupOnce()
	if !testcontainers.ReadConfig().RyukDisabled {
		return errors.New("cluster: docker: testcontainers' reaper is enabled (ryuk.disabled=false in ~/.testcontainers.properties?); this package removes its containers itself")
	}
	return nil
}

// newDockerClient returns a client of the environment's engine, once it
// has answered.
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

// Ping returns nil if an engine answers, else cluster.ErrNoDocker
// (wrapped).
func Ping(ctx context.Context) error {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return err
	}
	return cli.Close()
}

// dockerBackend is the Docker engine of one cluster, its cluster.ContainerSet.
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

// createNetwork creates the cluster's own bridge network, labelled as its
// containers, and finds the host's address on it.
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

// Close removes the cluster's containers left, its network, and closes
// the client.
func (b *dockerBackend) Close(ctx context.Context) error {
	_, err := removeContainers(ctx, b.cli, func(s container.Summary) bool { return s.Labels[LabelRun] == b.run })
	if b.network != "" {
		err = errors.Join(err, removeNetwork(ctx, b.cli, b.network, b.network))
	}
	return errors.Join(err, b.cli.Close())
}

// removeNetwork removes network id (called name); one gone is no error.
func removeNetwork(ctx context.Context, cli *testcontainers.DockerClient, id, name string) error {
	if _, err := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("cluster: docker network rm %s: %w", name, err)
	}
	return nil
}

// Gateway returns the host's address on the cluster's own network.
func (b *dockerBackend) Gateway() string { return b.gateway }

// Name returns the full name of the cluster's container name.
func (b *dockerBackend) Name(name string) string {
	return fmt.Sprintf("locktorture-%s-%s", b.run, name)
}

// Start creates and starts a container (cluster.ContainerSet).
func (b *dockerBackend) Start(ctx context.Context, spec cluster.ContainerSpec) (string, error) {
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	env := map[string]string{}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	labels := map[string]string{LabelNode: spec.Name}
	maps.Copy(labels, b.labels)
	cp := network.MustParsePort(fmt.Sprintf("%d/tcp", spec.Port))
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:  b.image,
			Name:   b.Name(spec.Name),
			Cmd:    spec.Cmd,
			Env:    env,
			Labels: labels,
			// Else testcontainers publishes every exposed port on every
			// interface.
			ExposedPorts: []string{cp.String()},
			ConfigModifier: func(c *container.Config) {
				c.User = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{cp: {{HostIP: loopbackAddr, HostPort: strconv.Itoa(spec.HostPort)}}}
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
		return id, fmt.Errorf("cluster: docker: start %s: %w", spec.Name, err)
	}
	return id, nil
}

// Remove force-removes container id; one already gone is no error.
func (b *dockerBackend) Remove(ctx context.Context, id string) error { return rm(ctx, b.cli, id) }

// Restart starts the stopped container id again.
func (b *dockerBackend) Restart(ctx context.Context, id string) error {
	_, err := b.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return err
}

// Watch is watch as a cluster.ContainerRun.
func (b *dockerBackend) Watch(id string) cluster.ContainerRun { return b.watch(id) }

func rm(ctx context.Context, cli *testcontainers.DockerClient, id string) error {
	_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// watch returns the run of container id, just started, watched until it
// stops.
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
	return runningErr(c.b.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{}))
}

func (c *containerRun) Resume(ctx context.Context) error {
	return runningErr(c.b.cli.ContainerUnpause(ctx, c.id, client.ContainerUnpauseOptions{}))
}

// runningErr is an engine call's error, cluster.ErrNotRunning for a
// container that is not running.
func runningErr[T any](_ T, err error) error {
	if notRunning(err) {
		return cluster.ErrNotRunning
	}
	return err
}

// Stop removes the container at once: its data is of no use after Close.
func (c *containerRun) Stop(ctx context.Context, _ time.Duration, _ bool) error {
	defer c.cancel() // ends the watch, also when the container outlives ctx
	if err := c.b.Remove(ctx, c.id); err != nil {
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

// Status returns the exit code and the end of the container's output
// (what redis-server wrote before it opened its log).
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

// notRunning reports whether err refuses to act on a container that is
// not running (or gone).
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
	Mine  bool   // this process made it
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

// RemoveStaleContainers removes the containers, then networks, whose
// LabelOwner names a dead process of this host and PID namespace (ownerDead),
// and returns their names. cluster.StartDocker calls it.
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
	res, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return names, fmt.Errorf("cluster: docker: list networks: %w", err)
	}
	var errs []error
	for _, nw := range res.Items {
		if !ownerDead(nw.Labels[LabelOwner]) {
			continue
		}
		if err := removeNetwork(ctx, cli, nw.ID, nw.Name); err != nil {
			errs = append(errs, err)
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
		if err := rm(ctx, cli, s.ID); err != nil {
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
// it cannot be read.
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

// ownerDead reports whether the process an owner label names surely died:
// this host and PID namespace, and its PID not running or another
// process's (started at another time).
func ownerDead(label string) bool {
	f := strings.Fields(label)
	me := strings.Fields(ownerLabel())
	return len(f) == 4 && len(me) == 4 && f[0] == me[0] && f[1] == me[1] && f[1] != "?" && procstat.Ended(f[2], f[3])
}
