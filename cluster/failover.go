package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
)

// The sentinels of the failover topology and their settings.
const (
	masterName      = "locktorture"
	numSentinels    = 3
	sentinelQuorum  = 2
	downAfter       = 1000 // ms without a valid PING reply before a sentinel calls a node down
	failoverTimeout = 3000 // ms; also the wait before a failed election is retried (twice this)

	healthyTimeout = 30 * time.Second      // StartFailover's wait for a healthy topology
	checkTimeout   = 2 * time.Second       // one look at the topology while waiting
	failoverPoll   = 50 * time.Millisecond // between two looks
	sentinelReady  = 10 * time.Second      // for a sentinel to answer PING
	internalSuffix = "-internal"           // proxy names: "n1-internal", ...
	sentinelLog    = "sentinel.log"        // in each sentinel's directory
	sentinelConf   = "sentinel.conf"       // idem, rewritten by the sentinel
	loopback       = "127.0.0.1"           // where everything listens
)

// sentinelTimings compresses Redis Sentinel's fixed periods (Redis ≥ 7.0,
// SENTINEL DEBUG) so that a failover and the rejoining of an old primary
// take seconds rather than tens of seconds: INFO every 1 s instead of 10 s
// (role changes are seen within a second), hello messages every 0.5 s
// instead of 2 s (a returning old primary is reconfigured as a replica
// after 4 × 0.5 s instead of 8 s), and peers asked whether a node is down
// every 0.5 s instead of 1 s.
var sentinelTimings = []any{"info-period", 1000, "publish-period", 500, "ask-period", 500}

// Failover is the topology of the failover scenario: a primary and one
// asynchronous replica, the two redis-server nodes of a Cluster, and three
// Redis Sentinel processes that monitor the primary under MasterName with
// a quorum of 2, call a node down after 1 s without a PING reply
// (down-after-milliseconds 1000) and have a failover-timeout of 3 s. Every
// data node has the cluster's requirepass and uses it as masterauth; the
// sentinels know it (sentinel auth-pass) and have a password of their own
// (SentinelPassword), which they also use with each other.
//
// Passwords are never on a command line: each data node reads its own
// from its redis.conf, each sentinel from its sentinel.conf, both mode
// 0600 in a folder of mode 0700. A sentinel rewrites its sentinel.conf
// (at start-up and after every change) with mode 0644 & ~umask, and a
// CONFIG REWRITE does the same to a node's redis.conf: the processes run
// with umask 077, and in Docker (umask 022) a watcher takes group's and
// others' access away again (see keeper).
//
// # Two paths to every data node
//
// Every data node is reached through two in-process toxiproxy proxies:
//
//   - the client path, Node.Proxy at Node.Addr, as in a Cluster: what lock
//     clients dial;
//   - the internal path, InternalProxy at InternalAddr: what the replica
//     dials to replicate from its primary and what the sentinels dial to
//     monitor, promote and reconfigure the nodes.
//
// Every address that Redis itself hands out is an internal one. The
// sentinels are told to monitor the primary at its internal address; each
// node announces its internal port to its primary (replica-announce-port,
// also in its configuration file, so it survives Restart), so the primary lists
// its replica at the replica's internal address and the sentinels find it
// there; and the sentinels report the current primary by internal address
// (SENTINEL GET-MASTER-ADDR-BY-NAME, the +switch-master event). A client
// that asks the sentinels where the primary is must therefore dial the
// client path instead: AddrMap maps each internal address to the node's
// client address (locks.Config.AddrMap turns it into a go-redis Dialer).
//
// Cutting a node's internal proxy both ways isolates it from the replica
// and from the sentinels while clients still reach it: the sentinels
// promote the replica, and clients keep writing to the old primary until
// they learn of the switch; those writes are never replicated. That is the
// failover scenario of the literature, driven by nemesis kind "failover".
// The sentinels listen on 127.0.0.1 directly (published there, in
// Docker), with no proxy: faults do not cut them, and clients always
// reach them.
//
// # Timings and restarts
//
// The sentinels' fixed periods are compressed with SENTINEL DEBUG (see
// sentinelTimings; skipped on a Redis without it). The sentinels get this
// process's environment but not WithExtraArgs' or the clock
// shim: those are for the data nodes, and a clock jump would send a
// sentinel into TILT mode, where it acts on nothing for 30 s.
//
// A data node that is killed and restarted comes back as a primary, empty
// without persistence; if the sentinels consider another node the
// primary, they reconfigure the restarted one as its replica a few seconds
// later. The sentinels' CONFIG REWRITE after a reconfiguration rewrites
// the node's redis.conf; the cluster writes that file anew before every
// start, so a restarted node starts from the cluster's settings.
//
// Its methods are safe for concurrent use.
type Failover struct {
	c         *Cluster
	password  string             // the sentinels' requirepass
	internal  []*toxiproxy.Proxy // by node index
	intAddrs  []string           // internal addresses, by node index
	sentinels []*sentinel

	// The replication links, on the process backend (replink.go).
	repl    []*Link // by node index
	linksMu sync.Mutex
	fronts  []*front
}

// sentinel is one Redis Sentinel, a process or a container.
type sentinel struct {
	name   string // "s1", ...
	dir    string
	port   int // on 127.0.0.1; fixed once StartFailover returns
	client *redis.SentinelClient

	mu      sync.Mutex
	cur     run  // nil once stopped
	stopped bool // by stop, which does it once
}

func (s *sentinel) addr() string { return net.JoinHostPort(loopback, strconv.Itoa(s.port)) }

// StartFailover starts the failover topology: node n1 as the primary, n2 as
// its replica (nodes as by Start with two nodes and opts), their internal
// proxies and three sentinels on free ports on 127.0.0.1, and waits until
// it is healthy (see WaitHealthy), at most 30 s. Sentinels live in the
// cluster's directory, "s1", "s2", "s3", each with its sentinel.conf and
// sentinel.log. If ctx is cancelled later, every process is stopped, as by
// Close.
func StartFailover(ctx context.Context, opts ...Option) (*Failover, error) {
	c, err := Start(ctx, 2, opts...)
	if err != nil {
		return nil, err
	}
	return startFailover(ctx, c)
}

// StartDockerFailover is StartFailover on the docker backend, on a private
// Docker network of the cluster's own: the data nodes are containers as by
// StartDocker(ctx, 2, image, opts...), and so are the three sentinels,
// each publishing its port on 127.0.0.1. The internal proxies, in this
// process, listen on the host's address on that network, which the
// replica and the sentinels dial (and which every node announces as
// replica-announce-ip); the sentinels reach each other directly on the
// network. Close removes the containers and the network. The Docker
// engine must run on this host (Linux), so that its containers can reach
// the host's address on the network.
func StartDockerFailover(ctx context.Context, image string, opts ...Option) (*Failover, error) {
	c, err := startDocker(ctx, 2, image, true, opts)
	if err != nil {
		return nil, err
	}
	return startFailover(ctx, c)
}

// startFailover makes the two nodes of c a failover topology, and c's
// Close (which a cancelled ctx calls) its Close.
func startFailover(ctx context.Context, c *Cluster) (*Failover, error) {
	f := &Failover{c: c, password: randomPassword()}
	err := f.start(ctx)
	if err == nil {
		err = c.attach("failover topology", func() { c.failover = f })
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		return nil, errors.Join(err, f.stopSentinels(cctx), c.Close())
	}
	return f, nil
}

// host returns where the internal proxies listen: 127.0.0.1, or the
// host's address on the private Docker network.
func (f *Failover) host() string {
	if f.c.docker != nil {
		return f.c.docker.Gateway()
	}
	return loopback
}

func (f *Failover) start(ctx context.Context) error {
	for _, n := range f.c.nodes {
		name := n.name + internalSuffix
		px := toxiproxy.NewProxy(f.c.srv, name, net.JoinHostPort(f.host(), "0"), n.DirectAddr())
		if err := f.c.srv.Collection.Add(px, true); err != nil {
			return fmt.Errorf("cluster: proxy %s: %w", name, err)
		}
		f.internal = append(f.internal, px)
		f.intAddrs = append(f.intAddrs, px.Listen) // the bound port, set by Add
	}
	if err := f.startLinks(); err != nil {
		return err
	}
	for i, n := range f.c.nodes {
		_, port, _ := net.SplitHostPort(f.intAddrs[i])
		set := [][2]string{
			{"masterauth", f.c.password},
			{"replica-announce-port", port},
			{"repl-diskless-sync-delay", "0"}, // the default waits 5 s for more replicas before a full sync
		}
		if f.c.docker == nil {
			// The replica dials from here, so its front tells its
			// connection from the sentinels' (replink.go).
			set = append(set, [2]string{"bind-source-addr", replSource})
		} else {
			// The primary would list its replica by the address its
			// connection came from, not the internal proxy's.
			set = append(set, [2]string{"replica-announce-ip", f.host()})
		}
		if err := n.configure(ctx, set...); err != nil {
			return err
		}
	}
	host, port, _ := net.SplitHostPort(f.intAddrs[0])
	if err := f.c.nodes[1].Client().ReplicaOf(ctx, host, port).Err(); err != nil {
		return fmt.Errorf("cluster: %s: replicaof %s: %w", f.c.nodes[1].name, f.intAddrs[0], err)
	}

	for i := range numSentinels {
		name := fmt.Sprintf("s%d", i+1)
		f.sentinels = append(f.sentinels, &sentinel{name: name, dir: filepath.Join(f.c.dir, name)})
	}
	if err := inParallel(f.sentinels, func(s *sentinel) error { return f.startSentinel(ctx, s, host, port) }); err != nil {
		return err
	}
	for _, s := range f.sentinels {
		err := s.client.Process(ctx, redis.NewCmd(ctx, append([]any{"SENTINEL", "DEBUG"}, sentinelTimings...)...))
		if err != nil && !strings.Contains(strings.ToLower(err.Error()), "unknown") {
			return fmt.Errorf("cluster: sentinel %s: sentinel debug: %w", s.name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, healthyTimeout)
	defer cancel()
	if _, err := f.WaitHealthy(wctx); err != nil {
		return fmt.Errorf("%w; sentinel s1 log tail:\n%s", err, logTail(filepath.Join(f.sentinels[0].dir, sentinelLog)))
	}
	return nil
}

// startSentinel starts s monitoring the primary at primaryHost:primaryPort
// (of its internal proxy) on a free port (see onFreePort), and waits until
// it answers PING.
func (f *Failover) startSentinel(ctx context.Context, s *sentinel, primaryHost, primaryPort string) error {
	if err := privateDir(s.dir); err != nil {
		return err
	}
	if f.c.keeper != nil {
		if err := f.c.keeper.watch(s.dir); err != nil {
			return err
		}
	}
	err := onFreePort(func() (run, error) {
		var (
			r   run
			err error
		)
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		if f.c.docker != nil {
			r, err = f.startSentinelContainer(ctx, s, primaryHost, primaryPort)
		} else {
			r, err = f.spawnSentinel(s, primaryHost, primaryPort)
		}
		if err == nil {
			s.mu.Lock()
			s.cur = r
			s.mu.Unlock()
		}
		return r, err
	}, func(r run) error {
		return waitAnswer(ctx, r, s.addr(), f.password, sentinelReady, "sentinel "+s.name, filepath.Join(s.dir, sentinelLog))
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.client = newSentinelClient(s.addr(), f.password)
	s.mu.Unlock()
	return nil
}

// sentinelConf returns the configuration of a sentinel listening on
// bind:port, with its files in dir, monitoring the primary at
// primaryHost:primaryPort.
func (f *Failover) sentinelConf(bind string, port int, dir, primaryHost, primaryPort string) string {
	m := masterName
	return strings.Join([]string{
		fmt.Sprintf("port %d", port),
		"bind " + bind,
		"protected-mode no",
		"daemonize no",
		"dir " + redisQuote(dir),
		"logfile " + redisQuote(dir+"/"+sentinelLog),
		// The sentinels' own password: without it any local user could
		// reconfigure them (SENTINEL SET, SENTINEL FAILOVER, ...). A
		// sentinel with requirepass authenticates to the other sentinels
		// with the same password.
		"requirepass " + redisQuote(f.password),
		fmt.Sprintf("sentinel monitor %s %s %s %d", m, primaryHost, primaryPort, sentinelQuorum),
		fmt.Sprintf("sentinel auth-pass %s %s", m, redisQuote(f.c.password)),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", m, downAfter),
		fmt.Sprintf("sentinel failover-timeout %s %d", m, failoverTimeout),
		fmt.Sprintf("sentinel parallel-syncs %s 1", m),
	}, "\n") + "\n"
}

// spawnSentinel writes s's configuration and starts the sentinel process.
func (f *Failover) spawnSentinel(s *sentinel, primaryHost, primaryPort string) (run, error) {
	confPath := filepath.Join(s.dir, sentinelConf)
	if err := writePrivate(confPath, []byte(f.sentinelConf(loopback, s.port, s.dir, primaryHost, primaryPort))); err != nil {
		return nil, err
	}
	return spawn(f.c.bin, []string{confPath, "--sentinel"}, s.dir, nil, filepath.Join(s.dir, sentinelLog), "sentinel "+s.name)
}

// startSentinelContainer writes s's configuration into its directory,
// the container's /data, and starts the sentinel container, its port
// published on 127.0.0.1:s.port.
func (f *Failover) startSentinelContainer(ctx context.Context, s *sentinel, primaryHost, primaryPort string) (run, error) {
	const port = 26379
	conf := f.sentinelConf("0.0.0.0", port, ImageData, primaryHost, primaryPort)
	if err := writePrivate(filepath.Join(s.dir, sentinelConf), []byte(conf)); err != nil {
		return nil, err
	}
	b := f.c.docker
	id, err := b.Start(ctx, ContainerSpec{
		Name:     s.name,
		Cmd:      []string{ImageData + "/" + sentinelConf, "--sentinel"},
		Dir:      s.dir,
		Port:     port,
		HostPort: s.port,
	})
	if err != nil {
		if id != "" {
			err = errors.Join(err, b.Remove(context.WithoutCancel(ctx), id))
		}
		return nil, err
	}
	return b.Watch(id), nil
}

// stop ends the sentinel (SIGTERM, then SIGKILL after 2 s; a container is
// removed) and closes the client.
func (s *sentinel) stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.client != nil {
		errs = append(errs, s.client.Close())
	}
	if s.cur != nil && !exited(s.cur) {
		errs = append(errs, s.cur.Stop(ctx, stopGrace, false))
	}
	s.cur = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop sentinel %s: %w", s.name, err)
	}
	return nil
}

// newSentinelClient returns a client to the sentinel at addr with the
// options of newClient (internal/redisopt) and the sentinels' password.
func newSentinelClient(addr, password string) *redis.SentinelClient {
	return redis.NewSentinelClient(redisopt.Options(addr, password))
}

// Cluster returns the data nodes as a Cluster, n1 and n2, for the faults
// that act on nodes and their client proxies (kill, pause, ...).
func (f *Failover) Cluster() *Cluster { return f.c }

// Nodes returns the data nodes in order: n1 (the first primary), n2.
func (f *Failover) Nodes() []*Node { return f.c.Nodes() }

// Password returns the requirepass (and masterauth) of the data nodes.
func (f *Failover) Password() string { return f.c.password }

// SentinelPassword returns the sentinels' own requirepass: random, 32 hex
// characters, another than the data nodes'. A client of the sentinels
// (locks.Config.SentinelPassword) needs it; without it a sentinel answers
// NOAUTH to everything, so no other local user can reconfigure them.
func (f *Failover) SentinelPassword() string { return f.password }

// MasterName returns the name under which the sentinels monitor the
// primary: "locktorture".
func (f *Failover) MasterName() string { return masterName }

// SentinelAddrs returns the sentinels' addresses (no proxy; they require
// SentinelPassword).
func (f *Failover) SentinelAddrs() []string {
	addrs := make([]string, len(f.sentinels))
	for i, s := range f.sentinels {
		addrs[i] = s.addr()
	}
	return addrs
}

// InternalProxy returns the proxy of n's internal path: the one the replica
// and the sentinels dial. It panics if n is not a node of f.
func (f *Failover) InternalProxy(n *Node) *toxiproxy.Proxy { return f.internal[f.index(n)] }

// InternalAddr returns the address of n's internal proxy, the address by
// which the sentinels know n. It panics if n is not a node of f.
func (f *Failover) InternalAddr(n *Node) string { return f.intAddrs[f.index(n)] }

// AddrMap maps each node's internal address, as the sentinels report it,
// to the node's client address (Node.Addr), which clients dial instead. It
// returns a new map each time.
func (f *Failover) AddrMap() map[string]string {
	m := make(map[string]string, len(f.intAddrs))
	for i, a := range f.intAddrs {
		m[a] = f.c.nodes[i].addr
	}
	return m
}

func (f *Failover) index(n *Node) int {
	if n == nil || n.c != f.c {
		panic("cluster: not a node of this failover topology")
	}
	return n.index
}

// node returns the node whose internal address is host:port, or nil.
func (f *Failover) node(host, port string) *Node {
	addr := net.JoinHostPort(host, port)
	for i, a := range f.intAddrs {
		if a == addr {
			return f.c.nodes[i]
		}
	}
	return nil
}

// Primary asks every sentinel which node is the primary and returns the
// one a majority of them names. It fails if no majority names the same
// node, e.g. while a failover is being announced.
func (f *Failover) Primary(ctx context.Context) (*Node, error) {
	views, errs := f.primaries(ctx)
	votes := make(map[*Node]int)
	for _, n := range views {
		if n != nil {
			votes[n]++
		}
	}
	for n, v := range votes {
		if 2*v > len(f.sentinels) {
			return n, nil
		}
	}
	return nil, fmt.Errorf("cluster: no majority of the sentinels names the same primary: %s", describeViews(views, errs))
}

// ForceFailover asks the sentinels, one after the other until one
// accepts, to fail over at once (SENTINEL FAILOVER): the replica is
// promoted without waiting for the primary to be called down by a
// quorum, as an operator's manual failover does.
func (f *Failover) ForceFailover(ctx context.Context) error {
	var errs []error
	for _, s := range f.sentinels {
		err := s.client.Failover(ctx, masterName).Err()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", s.addr(), err))
	}
	return fmt.Errorf("cluster: SENTINEL FAILOVER: %w", errors.Join(errs...))
}

// primaries returns each sentinel's primary (nil where it failed or named
// an address that is no node) and its error.
func (f *Failover) primaries(ctx context.Context) ([]*Node, []error) {
	views := make([]*Node, len(f.sentinels))
	errs := make([]error, len(f.sentinels))
	var wg sync.WaitGroup
	for i, s := range f.sentinels {
		wg.Go(func() {
			a, err := s.client.GetMasterAddrByName(ctx, masterName).Result()
			switch {
			case err != nil:
				errs[i] = err
			case len(a) != 2:
				errs[i] = fmt.Errorf("get-master-addr-by-name: %q", a)
			default:
				if views[i] = f.node(a[0], a[1]); views[i] == nil {
					errs[i] = fmt.Errorf("primary %s is no node", net.JoinHostPort(a[0], a[1]))
				}
			}
		})
	}
	wg.Wait()
	return views, errs
}

func describeViews(views []*Node, errs []error) string {
	parts := make([]string, len(views))
	for i, n := range views {
		switch {
		case errs[i] != nil:
			parts[i] = fmt.Sprintf("s%d: %v", i+1, errs[i])
		default:
			parts[i] = fmt.Sprintf("s%d: %s", i+1, n.name)
		}
	}
	return strings.Join(parts, "; ")
}

// WaitPrimary waits until every sentinel names the same node as the
// primary and that node reports role master, and returns it. It polls
// every 50 ms until ctx is done; it does not wait for the other node to
// replicate (see WaitHealthy).
func (f *Failover) WaitPrimary(ctx context.Context) (*Node, error) {
	return poll(ctx, f.c, "a primary", func(ctx context.Context) (*Node, error) {
		p, _, err := f.agreedPrimary(ctx)
		return p, err
	})
}

// WaitHealthy waits until the topology is healthy and returns the primary:
// every sentinel names the same node as the primary, knows the two other
// sentinels and sees the primary up; the primary reports role master with
// the other node connected as an online replica; the other node reports
// role slave of the primary's internal address with its link up; and every
// sentinel lists it as a replica that is up with its link ok. It polls
// every 50 ms until ctx is done.
func (f *Failover) WaitHealthy(ctx context.Context) (*Node, error) {
	return poll(ctx, f.c, "a healthy topology", f.healthy)
}

// poll calls check every 50 ms, each call bounded by 2 s, until it
// succeeds, ctx is done or c closes; the error then quotes check's last
// one.
func poll[T any](ctx context.Context, c *Cluster, what string, check func(context.Context) (T, error)) (T, error) {
	t := time.NewTicker(failoverPoll)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		v, err := check(cctx)
		cancel()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("cluster: wait for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-c.closing:
			return v, fmt.Errorf("%w: wait for %s", ErrClosed, what)
		case <-t.C:
		}
	}
}

// agreedPrimary returns the primary and its INFO replication if every
// sentinel names it and it reports role master.
func (f *Failover) agreedPrimary(ctx context.Context) (*Node, map[string]string, error) {
	views, errs := f.primaries(ctx)
	for i := range views {
		if views[i] == nil || views[i] != views[0] {
			return nil, nil, fmt.Errorf("sentinels disagree: %s", describeViews(views, errs))
		}
	}
	p := views[0]
	info, err := nodeInfo(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if info["role"] != "master" {
		return nil, nil, fmt.Errorf("the sentinels' primary %s reports role %q", p.name, info["role"])
	}
	return p, info, nil
}

// healthy returns the primary if the topology is healthy (see WaitHealthy).
func (f *Failover) healthy(ctx context.Context) (*Node, error) {
	p, pInfo, err := f.agreedPrimary(ctx)
	if err != nil {
		return nil, err
	}
	pHost, pPort, _ := net.SplitHostPort(f.InternalAddr(p))
	for _, r := range f.c.nodes {
		if r == p {
			continue
		}
		_, rPort, _ := net.SplitHostPort(f.InternalAddr(r))
		if !hasOnlineReplica(pInfo, rPort) {
			return nil, fmt.Errorf("primary %s lists no online replica on port %s", p.name, rPort)
		}
		rInfo, err := nodeInfo(ctx, r)
		if err != nil {
			return nil, err
		}
		if rInfo["role"] != "slave" || rInfo["master_host"] != pHost || rInfo["master_port"] != pPort || rInfo["master_link_status"] != "up" {
			return nil, fmt.Errorf("%s is not an up replica of %s: role %q, master %s:%s, link %q",
				r.name, p.name, rInfo["role"], rInfo["master_host"], rInfo["master_port"], rInfo["master_link_status"])
		}
		for _, s := range f.sentinels {
			if err := s.seesReplica(ctx, rPort); err != nil {
				return nil, fmt.Errorf("sentinel %s, replica %s: %w", s.name, r.name, err)
			}
		}
	}
	for _, s := range f.sentinels {
		m, err := s.client.Master(ctx, masterName).Result()
		if err != nil {
			return nil, fmt.Errorf("sentinel %s: %w", s.name, err)
		}
		if m["flags"] != "master" || m["num-other-sentinels"] != strconv.Itoa(numSentinels-1) {
			return nil, fmt.Errorf("sentinel %s: primary flags %q, %s other sentinels", s.name, m["flags"], m["num-other-sentinels"])
		}
	}
	return p, nil
}

// seesReplica checks that the sentinel lists the replica on port as up
// with its link to the primary ok.
func (s *sentinel) seesReplica(ctx context.Context, port string) error {
	rs, err := s.client.Replicas(ctx, masterName).Result()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r["port"] == port {
			if r["flags"] != "slave" || r["master-link-status"] != "ok" {
				return fmt.Errorf("flags %q, link %q", r["flags"], r["master-link-status"])
			}
			return nil
		}
	}
	return errors.New("not listed")
}

// nodeInfo returns the fields of n's INFO replication, read directly.
func nodeInfo(ctx context.Context, n *Node) (map[string]string, error) {
	s, err := n.Client().Info(ctx, "replication").Result()
	if err != nil {
		return nil, fmt.Errorf("%s: info replication: %w", n.name, err)
	}
	return fields(s), nil
}

// fields returns the name:value lines of an INFO section.
func fields(s string) map[string]string {
	m := make(map[string]string)
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// hasOnlineReplica reports whether a primary's INFO replication lists a
// replica announcing port that is online.
func hasOnlineReplica(info map[string]string, port string) bool {
	for k, v := range info {
		if !strings.HasPrefix(k, "slave") || strings.HasPrefix(k, "slave_") {
			continue
		}
		fields := make(map[string]string)
		for kv := range strings.SplitSeq(v, ",") {
			if a, b, ok := strings.Cut(kv, "="); ok {
				fields[a] = b
			}
		}
		if fields["port"] == port && fields["state"] == "online" {
			return true
		}
	}
	return false
}

// Close stops the sentinels, then the data nodes and proxies: it is
// Cluster.Close of f.Cluster(). It is idempotent and safe to call
// concurrently.
func (f *Failover) Close() error { return f.c.Close() }

// stopSentinels stops every sentinel still running and closes the fronts
// of the replication links; it can be called again.
func (f *Failover) stopSentinels(ctx context.Context) error {
	if err := errors.Join(inParallel(f.sentinels, func(s *sentinel) error { return s.stop(ctx) }), f.closeFronts()); err != nil {
		return fmt.Errorf("cluster: close: %w", err)
	}
	return nil
}
