package cluster

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// toxiproxy's bandwidth toxic logs through zerolog's global logger, not
// the server's (NewServer's zerolog.Nop()): a line on stderr at every
// heal of a bandwidth fault. Nothing else here logs through zerolog.
func init() { zlog.Logger = zerolog.Nop() }

var (
	// ErrClosed is returned by Restart once the cluster is closed.
	ErrClosed = errors.New("cluster: closed")
	// ErrNotRunning is returned by Pause and Resume of a node not running.
	ErrNotRunning = errors.New("cluster: node not running")
	// ErrNotManaged is returned by Kill, Restart, Pause and Resume of an
	// external node.
	ErrNotManaged = errors.New("cluster: node run by someone else")
)

const (
	readyTimeout = 10 * time.Second     // for a node to answer PING
	pollInterval = 5 * time.Millisecond // between two PINGs while waiting
	stopGrace    = 2 * time.Second      // between SIGTERM and SIGKILL on Close
	closeTimeout = time.Minute          // for Close's Docker and toxiproxy calls
	portAttempts = 5                    // free ports tried per node on Start
	tailLines    = 10                   // log lines quoted in errors
)

// The backends, as Cluster.Backend names them.
const (
	BackendProcess  = "process"
	BackendDocker   = "docker"
	BackendExternal = "external"
)

// Cluster is a set of nodes sharing one password. Its methods are safe
// for concurrent use.
type Cluster struct {
	opts      options
	backend   string
	bin       string // redis-server, resolved; process backend only
	shim      string // the clock shim's .so, as the nodes see it; "" without WithClockShim
	dir       string // "" for the external backend
	removeDir bool
	password  string
	version   string
	srv       *toxiproxy.ApiServer // in-process proxies; nil for the external backend
	docker    ContainerSet         // docker backend only
	keeper    *keeper              // docker backend only: keeps what containers write private
	remote    *remoteToxiproxy     // external backend with WithToxiproxy only
	adopted   *adoption            // external nodes that are containers of this machine; see adopt.go
	nodes     []*Node
	server    string       // ServerEtcd, or "" for redis-server; see etcd.go
	peers     *peerCuts    // the cut pairs of etcd members; nil for Redis nodes
	fronts    []*peerFront // etcd members' peer fronts, in node order

	mu           sync.Mutex    // guards failover and redisCluster
	failover     *Failover     // the failover topology of these nodes, once started; see Failover
	redisCluster *RedisCluster // the cluster topology of these nodes, once started

	closing   chan struct{} // closed when Close begins
	closeOnce sync.Once
	closeErr  error
}

// Start starts n redis-server processes on free ports of 127.0.0.1 and
// waits at most 10 s for each to answer PING through its proxy. A
// cancelled ctx later closes the cluster. Their own process group keeps a
// terminal's Ctrl-C from them.
func Start(ctx context.Context, n int, opts ...Option) (*Cluster, error) {
	o, err := newOptions(n, opts)
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(o.redisServer)
	if err != nil {
		return nil, fmt.Errorf("cluster: redis-server %q: %v; %w", o.redisServer, err, ErrMissingProgram)
	}
	var shim string
	if o.clockShim {
		if shim, err = clockShim(); err != nil {
			return nil, err
		}
	}
	c, err := newCluster(BackendProcess, o, n)
	if err != nil {
		return nil, err
	}
	c.bin, c.shim = bin, shim
	for _, nd := range c.nodes {
		nd.rn = &processRunner{n: nd}
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newOptions applies opts to the defaults.
func newOptions(n int, opts []Option) (options, error) {
	o := options{redisServer: "redis-server", proxyGroups: 1}
	for _, opt := range opts {
		opt(&o)
	}
	if n < 1 {
		return o, fmt.Errorf("cluster: need at least one node, got %d", n)
	}
	if o.proxyGroups < 1 {
		return o, fmt.Errorf("cluster: need at least one proxy group, got %d", o.proxyGroups)
	}
	return o, nil
}

// newCluster returns a cluster of n nodes, not started, with its directory
// and toxiproxy server (none for the external backend).
func newCluster(backend string, o options, n int) (*Cluster, error) {
	c := &Cluster{
		opts:     o,
		backend:  backend,
		dir:      o.dir,
		password: o.password,
		nodes:    make([]*Node, n),
		closing:  make(chan struct{}),
	}
	if !o.passwordSet {
		c.password = randomPassword()
	}
	for i := range c.nodes {
		c.nodes[i] = &Node{c: c, index: i, name: fmt.Sprintf("n%d", i+1)}
	}
	if backend == BackendExternal {
		c.dir = "" // no files of nodes someone else runs
		return c, nil
	}
	c.srv = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	var err error
	if c.dir != "" {
		// Every path handed to another process derives from this one,
		// and redis-server resolves a relative dir against its working
		// directory, the node's: make it absolute once, here.
		if c.dir, err = filepath.Abs(c.dir); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "locktorture-"); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		c.removeDir = !o.keepLogs
	} else if err := os.MkdirAll(c.dir, dirMode); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	for _, nd := range c.nodes {
		nd.dir = filepath.Join(c.dir, nd.name)
	}
	return c, nil
}

// start starts the nodes in parallel; on error, and on a cancelled ctx
// later, it closes the cluster.
func (c *Cluster) start(ctx context.Context) error {
	err := inParallel(c.nodes, func(nd *Node) error { return nd.start(ctx) })
	if err == nil {
		err = c.readVersions(ctx)
	}
	if err != nil {
		return errors.Join(err, c.Close())
	}
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-c.closing:
		}
	}()
	return nil
}

func (c *Cluster) readVersions(ctx context.Context) error {
	for _, n := range c.nodes {
		if c.server == ServerEtcd {
			v, err := etcdVersion(ctx, n.DirectAddr())
			if err != nil {
				return fmt.Errorf("cluster: %s: %w", n.name, err)
			}
			n.version = v
			continue
		}
		info, err := n.Client().Info(ctx, "server").Result()
		if err != nil {
			return fmt.Errorf("cluster: %s: info server: %w", n.name, err)
		}
		if n.version = fields(info, "\n", ":")["redis_version"]; n.version == "" {
			return fmt.Errorf("cluster: %s: info server: no redis_version", n.name)
		}
	}
	c.version = c.nodes[0].version
	return nil
}

// Nodes returns the nodes in order: n1 first.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodes...) }

// Node returns the node at index i, from 0; it panics if i is out of range.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Addrs returns the proxy addresses, in node order: what clients dial.
func (c *Cluster) Addrs() []string { return c.GroupAddrs(0) }

// Backend returns "process", "docker" or "external".
func (c *Cluster) Backend() string { return c.backend }

// Password returns the requirepass shared by every node.
func (c *Cluster) Password() string { return c.password }

// Dir returns the directory of the nodes' folders; "" for the external
// backend.
func (c *Cluster) Dir() string { return c.dir }

// Version returns the server version node 1 reported on Start.
func (c *Cluster) Version() string { return c.version }

// Versions returns each node's server version, in node order.
func (c *Cluster) Versions() []string {
	v := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		v[i] = n.version
	}
	return v
}

// Toxiproxy returns the in-process toxiproxy server, whose API listens
// once Listen is called; nil for the external backend.
func (c *Cluster) Toxiproxy() *toxiproxy.ApiServer { return c.srv }

// Close stops the topology's sentinels and fronts, the proxies and every
// node the cluster runs (SIGTERM, SIGKILL after 2 s; containers removed),
// deletes remote proxies and the temporary directory (but WithKeepLogs).
// It is idempotent; concurrent callers wait for the first.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

// attach calls set under c's lock, unless c closed meanwhile (ErrClosed).
func (c *Cluster) attach(what string, set func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closing:
		return fmt.Errorf("%w: start the %s", ErrClosed, what)
	default:
		set()
		return nil
	}
}

func (c *Cluster) close() error {
	close(c.closing)
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	c.mu.Lock()
	f, rc := c.failover, c.redisCluster
	c.mu.Unlock()
	if f != nil {
		errs = append(errs, f.stopSentinels(ctx))
	}
	if rc != nil {
		errs = append(errs, rc.cuts.closeFronts())
	}
	if c.srv != nil {
		c.srv.Collection.Clear() // always nil
	}
	for _, f := range c.fronts {
		errs = append(errs, f.close())
	}
	if c.remote != nil {
		errs = append(errs, c.remote.deleteAll(ctx))
	}
	errs = append(errs, inParallel(c.nodes, func(n *Node) error {
		if n.rn == nil {
			return nil
		}
		return n.stop(ctx)
	}))
	for _, n := range c.nodes {
		errs = append(errs, n.clock.close(), n.unmountDisk())
	}
	if c.docker != nil {
		errs = append(errs, c.docker.Close(ctx))
	}
	if c.keeper != nil {
		errs = append(errs, c.keeper.close())
	}
	if c.adopted != nil {
		errs = append(errs, c.adopted.b.Close())
	}
	if c.removeDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: close: %w", err)
	}
	return nil
}

// inParallel calls f on every item at once and joins their errors.
func inParallel[T any](items []T, f func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Go(func() { errs[i] = f(it) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// randomPassword returns 32 random hex characters.
func randomPassword() string { return randomHex(16) }

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails; see its doc
	return hex.EncodeToString(b)
}

// newClient returns a client with internal/redisopt's options.
func newClient(addr, password string) *redis.Client {
	return redis.NewClient(redisopt.Options(addr, password))
}

// ping sends one PING on a fresh client, which keeps go-redis's dial
// circuit breaker (see Node.Client) out of health checks.
func ping(ctx context.Context, addr, password string) error {
	c := newClient(addr, password)
	defer c.Close()
	return c.Ping(ctx).Err()
}

// makeDir makes dir private (privateDir, keeper); nothing for "".
func (c *Cluster) makeDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := privateDir(dir); err != nil {
		return err
	}
	if c.keeper != nil {
		return c.keeper.watch(dir)
	}
	return nil
}

// logTail returns the file's last lines, for errors.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	var lines []string
	for s := bufio.NewScanner(f); s.Scan(); {
		lines = append(lines, s.Text())
		if len(lines) > tailLines {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
