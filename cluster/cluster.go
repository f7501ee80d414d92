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
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/rs/zerolog"
)

var (
	// ErrClosed is returned by Restart once the cluster is closed.
	ErrClosed = errors.New("cluster: closed")
	// ErrNotRunning is returned by Pause and Resume when the node's process
	// is not running.
	ErrNotRunning = errors.New("cluster: node not running")
)

const (
	readyTimeout = 10 * time.Second     // for a node to answer PING
	pollInterval = 5 * time.Millisecond // between two PINGs while waiting
	stopGrace    = 2 * time.Second      // between SIGTERM and SIGKILL on Close
	portAttempts = 5                    // free ports tried per node on Start
	tailLines    = 10                   // log lines quoted in errors
)

// Cluster is a set of redis-server processes on 127.0.0.1, each behind its
// own in-process toxiproxy proxy, sharing one password. Its methods are safe
// for concurrent use.
type Cluster struct {
	opts      options
	bin       string // redis-server, resolved
	shim      string // the clock shim's .so; "" without WithClockShim
	dir       string
	removeDir bool
	password  string
	version   string
	srv       *toxiproxy.ApiServer
	nodes     []*Node

	closing   chan struct{} // closed when Close begins
	closeOnce sync.Once
	closeErr  error
}

// Start starts n redis-server processes bound to 127.0.0.1 on free ports,
// each behind its own toxiproxy proxy, with one random requirepass (32 hex
// characters) shared by the cluster, and waits until every node answers PING
// through its proxy. Nodes start in parallel; each gets 10 s. If ctx is
// cancelled later, every process is stopped, as by Close.
//
// The processes are in their own process group, so a Ctrl-C at the terminal
// does not reach them, and get SIGKILL when this process dies.
func Start(ctx context.Context, n int, opts ...Option) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("cluster: need at least one node, got %d", n)
	}
	o := options{redisServer: "redis-server", proxyGroups: 1}
	for _, opt := range opts {
		opt(&o)
	}
	if o.proxyGroups < 1 {
		return nil, fmt.Errorf("cluster: need at least one proxy group, got %d", o.proxyGroups)
	}
	bin, err := exec.LookPath(o.redisServer)
	if err != nil {
		return nil, fmt.Errorf("cluster: redis-server: %w", err)
	}
	var shim string
	if o.clockShim {
		if shim, err = clockShim(); err != nil {
			return nil, err
		}
	}
	pw := make([]byte, 16)
	rand.Read(pw) // never fails; see its doc
	c := &Cluster{
		opts:     o,
		bin:      bin,
		shim:     shim,
		dir:      o.dir,
		password: hex.EncodeToString(pw),
		srv:      toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		nodes:    make([]*Node, n),
		closing:  make(chan struct{}),
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "locktorture-"); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		c.removeDir = !o.keepLogs
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	for i := range c.nodes {
		name := fmt.Sprintf("n%d", i+1)
		c.nodes[i] = &Node{c: c, index: i, name: name, dir: filepath.Join(c.dir, name)}
	}

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, nd := range c.nodes {
		wg.Go(func() { errs[i] = nd.start(ctx) })
	}
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil {
		c.version, err = c.readVersion(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-c.closing:
		}
	}()
	return c, nil
}

// readVersion asks node 1 for its redis_version.
func (c *Cluster) readVersion(ctx context.Context) (string, error) {
	info, err := c.nodes[0].Client().Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("cluster: info server: %w", err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("cluster: info server: no redis_version")
}

// Nodes returns the nodes in order: n1 first.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodes...) }

// Node returns the node at index i, from 0; it panics if i is out of range.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Addrs returns the proxy addresses, in node order: what clients dial.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// Password returns the requirepass shared by every node.
func (c *Cluster) Password() string { return c.password }

// Dir returns the directory holding one sub-directory per node.
func (c *Cluster) Dir() string { return c.dir }

// Version returns the redis_version that node 1 reported on Start.
func (c *Cluster) Version() string { return c.version }

// Toxiproxy returns the in-process toxiproxy server holding the proxies,
// named "n1", "n2", ... (and "n1-g1", ... with WithProxyGroups). Its HTTP
// API is not listening; call its Listen to serve it.
func (c *Cluster) Toxiproxy() *toxiproxy.ApiServer { return c.srv }

// Close stops the proxies and every process: a paused process is resumed,
// then sent SIGTERM, then SIGKILL if still alive after 2 s. It closes the
// nodes' clients and removes the temporary directory unless WithKeepLogs or
// WithDir. Close is idempotent, safe to call concurrently (every caller
// waits for the first one to finish) and works with nodes already dead.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Cluster) close() error {
	close(c.closing)
	c.srv.Collection.Clear() // always nil
	errs := make([]error, len(c.nodes), len(c.nodes)+1)
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = n.stop() })
	}
	wg.Wait()
	for _, n := range c.nodes {
		errs = append(errs, n.clock.close())
	}
	if c.removeDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: close: %w", err)
	}
	return nil
}

var silenceOnce sync.Once

// newClient returns a go-redis client that sends one command once: no
// retries, one dial attempt, context deadlines obeyed, and a single round
// trip (HELLO 2) on connect. It silences go-redis's logging, which is global.
func newClient(addr, password string) *redis.Client {
	silenceOnce.Do(func() { redis.SetLogger(&logging.VoidLogger{}) })
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		Password:                 password,
		Protocol:                 2,
		DisableIdentity:          true,
		MaxRetries:               -1,
		DialerRetries:            1,
		ContextTimeoutEnabled:    true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// ping sends one PING on a fresh connection. A fresh client each time keeps
// go-redis's dial circuit breaker (which stops dialing for about a second
// after PoolSize failed dials in a client's life) out of health checks.
func ping(ctx context.Context, addr, password string) error {
	c := newClient(addr, password)
	defer c.Close()
	return c.Ping(ctx).Err()
}

// logTail returns the last lines of the file at path, for error messages.
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
