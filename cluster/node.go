package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/internal/lazyfs"
	"github.com/redis/go-redis/v9"
)

// errExited marks a run that ended before answering PING.
var errExited = errors.New("exited before answering PING")

// Node is one node and its proxies. Its methods are safe for concurrent use.
type Node struct {
	c     *Cluster
	index int
	name  string
	dir   string // "" for an external node
	rn    runner
	addr  string           // of the proxy (or the node itself, external without toxiproxy)
	proxy *toxiproxy.Proxy // in-process; nil for an external node
	link  *Link            // the proxy, in-process or remote; nil without one

	groups   []groupProxy // of client groups 1, 2, ...; see groups.go
	clock    *clockFile   // nil without WithClockShim; see clock.go
	disk     *lazyfs.FS   // the data folder's lazyfs; nil without WithLazyFS (disk.go)
	settings [][2]string  // its own directives (name, value), after the cluster's (configure)

	mu      sync.Mutex
	cur     run // the current run; nil when killed or stopped
	paused  bool
	closed  bool // by Cluster.Close
	client  *redis.Client
	version string // its server's version (redis_version, etcd's), read on Start
}

// runner runs one node's server; Node serialises the calls to it.
type runner interface {
	// start starts a new run: with fresh, on a new free port (and
	// container), else on the last one's. ErrPortTaken: it is taken.
	start(ctx context.Context, fresh bool) (run, error)
	// addr returns where this process reaches the server.
	addr() string
	// release frees what outlives the runs, once, on Close.
	release(ctx context.Context) error
}

// run is one life of a node's server, from its start to its exit.
type run = ContainerRun

// opTimeout bounds the Docker calls behind Kill, Pause and Resume, which
// take no context.
const opTimeout = 30 * time.Second

// Index returns the node's position in Cluster.Nodes, from 0.
func (n *Node) Index() int { return n.index }

// Name returns "n1", "n2", ...: also its proxy's name.
func (n *Node) Name() string { return n.name }

// Addr returns the address clients dial: the node's proxy's, if any.
func (n *Node) Addr() string { return n.addr }

// DirectAddr returns the server's own address, the same across restarts.
func (n *Node) DirectAddr() string { return n.rn.addr() }

// Proxy returns the node's in-process proxy; nil for an external node.
func (n *Node) Proxy() *toxiproxy.Proxy { return n.proxy }

// Link returns the node's proxy as a Link, in-process or remote, or nil.
func (n *Node) Link() *Link { return n.link }

// The node's log in its folder, named for the server that writes it.
const (
	redisLog = "redis.log"
	etcdLog  = "etcd.log" // an etcd member's (ServerEtcd)
)

// LogPath returns the node's log; "" for an external node.
func (n *Node) LogPath() string {
	if n.dir == "" {
		return ""
	}
	if n.c != nil && n.c.server == ServerEtcd {
		return filepath.Join(n.dir, etcdLog)
	}
	return filepath.Join(n.dir, redisLog)
}

// Version returns the server version the node reported on Start.
func (n *Node) Version() string { return n.version }

// Pid returns the server's process id, or 0 unless it runs as a process
// the cluster started.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.cur.(interface{ pid() int }); ok && n.running() {
		return p.pid()
	}
	return 0
}

// Running reports whether the node is alive, paused or not.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running()
}

// Paused reports whether the node's process is alive and paused by Pause.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused && n.running()
}

func (n *Node) running() bool {
	if _, ok := n.rn.(externalRunner); ok {
		return !n.closed
	}
	return n.cur != nil && !exited(n.cur)
}

func exited(r run) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL (docker kill) and waits for the exit.
func (n *Node) Kill() error { return n.locked("kill", n.kill) }

// locked runs op's f under n's lock, within opTimeout; ErrNotManaged for
// an external node.
func (n *Node) locked(op string, f func(context.Context) error) error {
	if err := n.managed(op); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	n.mu.Lock()
	defer n.mu.Unlock()
	return f(ctx)
}

func (n *Node) kill(ctx context.Context) error {
	if n.cur == nil {
		return nil
	}
	if err := n.cur.Kill(ctx); err != nil {
		return fmt.Errorf("cluster: kill %s: %w", n.name, err)
	}
	n.cur, n.paused = nil, false
	return nil
}

// Restart kills the node if it runs and starts it again on the same port,
// empty without persistence, and waits at most 10 s for PING (else kills
// it, quoting its log).
func (n *Node) Restart(ctx context.Context) error {
	if err := n.managed("restart"); err != nil {
		return err
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("%w: restart %s", ErrClosed, n.name)
	}
	err := n.kill(ctx)
	var r run
	if err == nil {
		r, err = n.rn.start(ctx, false)
		n.cur = r
	}
	n.mu.Unlock()
	if err != nil {
		return err
	}
	if err := n.waitReady(ctx, r, n.DirectAddr()); err != nil {
		n.mu.Lock()
		if n.cur == r {
			n.kill(context.WithoutCancel(ctx))
		}
		n.mu.Unlock()
		return err
	}
	return nil
}

// Pause stops the node with SIGSTOP (docker pause): connections stay open
// and commands queue up until Resume.
func (n *Node) Pause() error { return n.freeze("pause", true) }

// Resume continues a paused node (SIGCONT, docker unpause).
func (n *Node) Resume() error { return n.freeze("resume", false) }

func (n *Node) freeze(op string, pause bool) error {
	return n.locked(op, func(ctx context.Context) error {
		if !n.running() {
			return fmt.Errorf("%w: %s %s", ErrNotRunning, op, n.name)
		}
		act := n.cur.Resume
		if pause {
			act = n.cur.Pause
		}
		if err := act(ctx); errors.Is(err, ErrNotRunning) {
			return fmt.Errorf("%w: %s %s", ErrNotRunning, op, n.name)
		} else if err != nil {
			return fmt.Errorf("cluster: %s %s: %w", op, n.name, err)
		}
		n.paused = pause
		return nil
	})
}

// managed returns ErrNotManaged, naming op, for an external node.
func (n *Node) managed(op string) error {
	if _, ok := n.rn.(externalRunner); ok {
		return fmt.Errorf("%w: %s %s", ErrNotManaged, op, n.name)
	}
	return nil
}

// Ping sends PING on a fresh connection to the node's direct address, so
// proxy faults do not hide its health.
func (n *Node) Ping(ctx context.Context) error {
	if n.c.server == ServerEtcd {
		// A member answers /version when it serves, leader or not.
		if _, err := etcdVersion(ctx, n.DirectAddr()); err != nil {
			return fmt.Errorf("cluster: ping %s: %w", n.name, err)
		}
		return nil
	}
	if err := ping(ctx, n.DirectAddr(), n.c.password); err != nil {
		return fmt.Errorf("cluster: ping %s: %w", n.name, err)
	}
	return nil
}

// Client returns a client of the node's direct address, closed by Close.
// go-redis stops dialing for a second once a client has seen PoolSize
// (10 × GOMAXPROCS) failed dials in its life: use Ping to check health.
func (n *Node) Client() *redis.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client == nil {
		n.client = newClient(n.DirectAddr(), n.c.password)
		if n.closed {
			n.client.Close()
		}
	}
	return n.client
}

// configure sets each directive (name, value) on the running node and
// keeps it for its later starts.
func (n *Node) configure(ctx context.Context, set ...[2]string) error {
	for _, kv := range set {
		if err := n.Client().ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return fmt.Errorf("cluster: %s: config set %s: %w", n.name, kv[0], err)
		}
	}
	n.mu.Lock()
	n.settings = append(n.settings, set...)
	n.mu.Unlock()
	return nil
}

// start starts the node's first run on a free port, then its proxies.
func (n *Node) start(ctx context.Context) error {
	if err := n.c.makeDir(n.dir); err != nil {
		return err
	}
	if err := n.mountDisk(); err != nil {
		return err
	}
	if err := n.openClock(); err != nil {
		return err
	}
	var r run // nil for an external node
	if _, ext := n.rn.(externalRunner); !ext {
		err := onFreePort(func() (run, error) {
			var err error
			if r, err = n.rn.start(ctx, true); err == nil {
				n.mu.Lock()
				n.cur = r
				n.mu.Unlock()
			}
			return r, err
		}, func(r run) error { return n.waitReady(ctx, r, n.DirectAddr()) })
		if err != nil {
			return err
		}
	}
	if err := n.startProxies(ctx); err != nil {
		return err
	}
	for g := range n.c.opts.proxyGroups {
		if err := n.waitReady(ctx, r, n.GroupAddr(g)); err != nil {
			return err
		}
	}
	return nil
}

// onFreePort calls start (a run on a new free port) and ready (wait until
// it answers), up to portAttempts times: a port can be taken between
// finding and binding it. ErrPortTaken (a container's) or a process that
// exits before it answers (errExited) tries another port.
func onFreePort(start func() (run, error), ready func(run) error) error {
	var err error
	for range portAttempts {
		var r run
		if r, err = start(); errors.Is(err, ErrPortTaken) {
			continue
		} else if err != nil {
			return err
		}
		err = ready(r)
		if _, proc := r.(*process); !proc || !errors.Is(err, errExited) {
			return err
		}
	}
	return err
}

// waitReady waits up to 10 s for the node to answer on addr; an external
// node (r nil) gets one PING.
func (n *Node) waitReady(ctx context.Context, r run, addr string) error {
	if r == nil {
		wctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		if err := ping(wctx, addr, n.c.password); err != nil {
			return fmt.Errorf("cluster: %s at %s: %w", n.name, addr, err)
		}
		return nil
	}
	if e, ok := n.rn.(*etcdRunner); ok {
		return e.ready(ctx, r, addr)
	}
	return waitAnswer(ctx, r, addr, n.c.password, readyTimeout, n.name, n.LogPath())
}

// waitAnswer is waitUp for a PING answered by r's process (ownAnswer).
func waitAnswer(ctx context.Context, r run, addr, password string, limit time.Duration, what, logPath string) error {
	return waitUp(ctx, r, addr, limit, what, logPath, "PONG", func(ctx context.Context) (bool, error) {
		if err := ping(ctx, addr, password); err != nil {
			return false, err
		}
		return true, ownAnswer(ctx, r, addr, password, what)
	})
}

// waitUp calls probe every pollInterval until it is done (then returns its
// error), r exits (errExited), ctx ends or limit passes; what, the answer
// awaited and logPath's tail go into the errors.
func waitUp(ctx context.Context, r run, addr string, limit time.Duration, what, logPath, answer string, probe func(context.Context) (bool, error)) error {
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		done, err := probe(wctx)
		if done {
			return err
		}
		select {
		case <-r.Done():
			return fmt.Errorf("cluster: %s at %s: %w (%s); log tail:\n%s", what, addr, errExited, r.Status(), logTail(logPath))
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("cluster: wait for %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("cluster: %s at %s gave no %s within %v (last error: %v); log tail:\n%s", what, addr, answer, limit, err, logTail(logPath))
		case <-t.C:
		}
	}
}

// ownAnswer checks that the server that answered on addr is r's process:
// between freePort and the bind, another listener (a proxy of the same
// run, forwarding to another node with the same password) can take the
// port and answer for it. Seen once in a gate run: a quorum of five with
// four servers. Such a start is an exit (errExited), tried again. A
// container's process id is its namespace's: not compared.
func ownAnswer(ctx context.Context, r run, addr, password, what string) error {
	p, ok := r.(*process)
	if !ok || p.cmd.Process == nil {
		return nil
	}
	c := newClient(addr, password)
	defer c.Close()
	info := c.InfoMap(ctx, "server")
	if err := info.Err(); err != nil {
		return fmt.Errorf("cluster: %s at %s: INFO server: %w", what, addr, err)
	}
	id, err := strconv.Atoi(info.Item("Server", "process_id"))
	if err != nil {
		id = -1
	}
	if id == p.cmd.Process.Pid {
		return nil
	}
	select {
	case <-r.Done():
		return fmt.Errorf("cluster: %s at %s: %w: another server (process %d) answers on its port", what, addr, errExited, id)
	case <-ctx.Done():
		return fmt.Errorf("cluster: %s at %s: another server (process %d, not %d) answers on its port", what, addr, id, p.cmd.Process.Pid)
	}
}

// stop ends the current run for Cluster.Close, closes the client and
// releases what the runner holds.
func (n *Node) stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	var errs []error
	if n.client != nil {
		errs = append(errs, n.client.Close())
	}
	if n.cur != nil && !exited(n.cur) {
		errs = append(errs, n.cur.Stop(ctx, stopGrace, n.paused))
	}
	n.cur, n.paused = nil, false
	errs = append(errs, n.rn.release(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop %s: %w", n.name, err)
	}
	return nil
}
