package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
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

// sentinelTimings (SENTINEL DEBUG, Redis ≥ 7.0) make a failover and an old
// primary's rejoining take seconds: INFO every 1 s (not 10), hellos every
// 0.5 s (not 2: a returning primary is reconfigured after 4 of them), peers
// asked about a node every 0.5 s (not 1).
var sentinelTimings = []any{"info-period", 1000, "publish-period", 500, "ask-period", 500}

// Failover is the failover topology: a primary and its asynchronous
// replica (a Cluster's two data nodes, masterauth their requirepass) and
// three sentinels with a password of their own, quorum 2, down after 1 s,
// failover-timeout 3 s. Each data node has a client path (Node.Addr) and an
// internal one (InternalAddr) that the replica and the sentinels dial and
// every address Redis hands out names (AddrMap maps them back). Cutting a
// node's internal proxy isolates it while clients still write to it (kind
// "failover"): those writes are never replicated. The sentinels have no
// proxy, no WithExtraArgs and no clock shim (a clock jump sends a sentinel
// into TILT mode, inert for 30 s). A killed data node comes back a primary,
// which the sentinels make a replica again seconds later. Its methods are
// safe for concurrent use.
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

// StartFailover starts the failover topology on the process backend (n1
// the primary, n2 its replica, sentinels "s1".."s3" in the cluster's
// directory) and waits at most 30 s until it is healthy.
func StartFailover(ctx context.Context, opts ...Option) (*Failover, error) {
	c, err := Start(ctx, 2, opts...)
	if err != nil {
		return nil, err
	}
	return startFailover(ctx, c)
}

// StartDockerFailover is StartFailover in containers on a private Docker
// network, on whose host address the internal proxies listen: the engine
// must run on this (Linux) host.
func StartDockerFailover(ctx context.Context, image string, opts ...Option) (*Failover, error) {
	c, err := startDocker(ctx, 2, image, true, opts)
	if err != nil {
		return nil, err
	}
	return startFailover(ctx, c)
}

// startFailover makes c's two nodes a failover topology, closed by c's Close.
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

// host returns where the internal proxies listen.
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
			// So its front tells it from the sentinels (replink.go).
			set = append(set, [2]string{"bind-source-addr", replSource})
		} else {
			// Else the primary lists its replica by its source address.
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

// startSentinel starts s, monitoring primaryHost:primaryPort, on a free
// port and waits until it answers PING.
func (f *Failover) startSentinel(ctx context.Context, s *sentinel, primaryHost, primaryPort string) error {
	if err := f.c.makeDir(s.dir); err != nil {
		return err
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

// sentinelConf returns the configuration of a sentinel on bind:port, its
// files in dir.
func (f *Failover) sentinelConf(bind string, port int, dir, primaryHost, primaryPort string) string {
	m := masterName
	return strings.Join([]string{
		fmt.Sprintf("port %d", port),
		"bind " + bind,
		"protected-mode no",
		"daemonize no",
		"dir " + redisQuote(dir),
		"logfile " + redisQuote(dir+"/"+sentinelLog),
		// Else any local user could reconfigure them (SENTINEL SET).
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

// startSentinelContainer writes s's configuration into its directory (the
// container's /data) and starts the container.
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

// newSentinelClient is newClient for a sentinel.
func newSentinelClient(addr, password string) *redis.SentinelClient {
	return redis.NewSentinelClient(redisopt.Options(addr, password))
}

// stop ends the sentinel, as Node.stop a node.
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

// Cluster returns the data nodes, n1 and n2, as a Cluster.
func (f *Failover) Cluster() *Cluster { return f.c }

// Nodes returns the data nodes in order: n1 (the first primary), n2.
func (f *Failover) Nodes() []*Node { return f.c.Nodes() }

// Password returns the requirepass (and masterauth) of the data nodes.
func (f *Failover) Password() string { return f.c.password }

// SentinelPassword returns the sentinels' own requirepass.
func (f *Failover) SentinelPassword() string { return f.password }

// MasterName returns the name the sentinels monitor the primary under.
func (f *Failover) MasterName() string { return masterName }

// SentinelAddrs returns the sentinels' addresses (no proxy).
func (f *Failover) SentinelAddrs() []string {
	addrs := make([]string, len(f.sentinels))
	for i, s := range f.sentinels {
		addrs[i] = s.addr()
	}
	return addrs
}

// InternalProxy returns the proxy of n's internal path.
func (f *Failover) InternalProxy(n *Node) *toxiproxy.Proxy {
	return f.internal[f.c.indexOf(n, "failover")]
}

// InternalAddr returns the address the sentinels know n by.
func (f *Failover) InternalAddr(n *Node) string { return f.intAddrs[f.c.indexOf(n, "failover")] }

// AddrMap maps each node's internal address to its client address.
func (f *Failover) AddrMap() map[string]string {
	m := make(map[string]string, len(f.intAddrs))
	for i, a := range f.intAddrs {
		m[a] = f.c.nodes[i].addr
	}
	return m
}

// indexOf returns n's index; it panics if n is not c's.
func (c *Cluster) indexOf(n *Node, what string) int {
	if n == nil || n.c != c {
		panic("cluster: not a node of this " + what + " topology")
	}
	return n.index
}

// node returns the node whose internal address is host:port, or nil.
func (f *Failover) node(host, port string) *Node {
	if i := slices.Index(f.intAddrs, net.JoinHostPort(host, port)); i >= 0 {
		return f.c.nodes[i]
	}
	return nil
}

// Primary returns the node a majority of the sentinels names primary.
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

// ForceFailover asks the sentinels in turn to fail over now (SENTINEL
// FAILOVER), as an operator's manual failover.
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

// primaries returns each sentinel's primary (or nil) and error.
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
		if errs[i] != nil {
			parts[i] = fmt.Sprintf("s%d: %v", i+1, errs[i])
		} else {
			parts[i] = fmt.Sprintf("s%d: %s", i+1, n.name)
		}
	}
	return strings.Join(parts, "; ")
}

// WaitPrimary waits until every sentinel names the same primary and it
// reports role master, and returns it.
func (f *Failover) WaitPrimary(ctx context.Context) (*Node, error) {
	return poll(ctx, f.c, "a primary", func(ctx context.Context) (*Node, error) {
		p, _, err := f.agreedPrimary(ctx)
		return p, err
	})
}

// WaitHealthy is WaitPrimary, also until the other node is an online
// replica of it, link up, and every sentinel sees both up and knows the
// two others.
func (f *Failover) WaitHealthy(ctx context.Context) (*Node, error) {
	return poll(ctx, f.c, "a healthy topology", f.healthy)
}

// poll calls check every 50 ms, each call bounded by 2 s, until it
// succeeds, ctx is done or c closes; the error quotes check's last one.
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

// agreedPrimary is WaitPrimary's check, returning INFO replication too.
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

// healthy is WaitHealthy's check.
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

// seesReplica checks that s lists the replica on port up, link ok.
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
	return fields(s, "\n", ":"), nil
}

// fields returns the name-sep-value items of s split at split: INFO's
// lines ("\n", ":") or a replica entry's (",", "=").
func fields(s, split, sep string) map[string]string {
	m := make(map[string]string)
	for item := range strings.SplitSeq(s, split) {
		if k, v, ok := strings.Cut(strings.TrimSpace(item), sep); ok {
			m[k] = v
		}
	}
	return m
}

// hasOnlineReplica reports whether a primary's INFO lists an online
// replica announcing port.
func hasOnlineReplica(info map[string]string, port string) bool {
	for k, v := range info {
		if !strings.HasPrefix(k, "slave") || strings.HasPrefix(k, "slave_") {
			continue
		}
		if r := fields(v, ",", "="); r["port"] == port && r["state"] == "online" {
			return true
		}
	}
	return false
}

// Close is f.Cluster().Close.
func (f *Failover) Close() error { return f.c.Close() }

// stopSentinels stops the sentinels and the fronts; it can be called again.
func (f *Failover) stopSentinels(ctx context.Context) error {
	if err := errors.Join(inParallel(f.sentinels, func(s *sentinel) error { return s.stop(ctx) }), f.closeFronts()); err != nil {
		return fmt.Errorf("cluster: close: %w", err)
	}
	return nil
}
