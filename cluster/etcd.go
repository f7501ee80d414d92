package cluster

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The servers a cluster's nodes run, as Spec.Server names them.
const (
	ServerRedis = "redis" // the default
	ServerEtcd  = "etcd"  // see StartEtcd
)

// etcdProgram is the members' server, from PATH (Debian's etcd-server),
// never linked in: it would multiply the build time of every race-enabled
// test binary linking this package (docs/consensus.md).
const etcdProgram = "etcd"

// Raft timing: 50 ms heartbeats and 500 ms elections (etcd's defaults are
// 100 ms and 1 s) suit loopback and bring the shortest lease down to
// 750 ms (3/2 × election ticks × heartbeat), under the harness's 1 s TTLs.
const (
	etcdHeartbeatMS = 50
	etcdElectionMS  = 500
)

// StartEtcd starts n etcd members on free ports of 127.0.0.1, one Raft
// group, client ports behind proxies, peer ports behind peerFronts (for
// CutPeers), and waits until a leader is elected. A restarted member keeps
// its data and log. See etcdAbilities for what it cannot do.
func StartEtcd(ctx context.Context, n int, opts ...Option) (*Cluster, error) {
	o, err := newOptions(n, opts)
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(etcdProgram)
	if err != nil {
		return nil, fmt.Errorf("cluster: etcd %q: %v (scripts/deps installs Debian's etcd-server); %w", etcdProgram, err, ErrMissingProgram)
	}
	o.clockShim, o.lazyFS = false, false
	c, err := newCluster(BackendProcess, o, n)
	if err != nil {
		return nil, err
	}
	c.bin, c.server = bin, ServerEtcd
	c.peers = &peerCuts{}
	// The fronts first, so every peer URL is known before any member
	// starts, which sets its front's upstream.
	runners := make([]*etcdRunner, n)
	for i, nd := range c.nodes {
		f, err := newPeerFront(i, true, "", c.peers, n)
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		f.identify = c.etcdPeer
		c.fronts = append(c.fronts, f)
		runners[i] = &etcdRunner{n: nd, front: f}
		nd.rn = runners[i]
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	if err := c.etcdHealthy(ctx, readyTimeout); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// etcdRunner runs one etcd member as a child process.
type etcdRunner struct {
	n          *Node
	front      *peerFront
	port, peer int // client and peer ports, fixed once Start returns
}

var _ runner = (*etcdRunner)(nil)

func (r *etcdRunner) addr() string { return net.JoinHostPort(loopback, strconv.Itoa(r.port)) }

func (r *etcdRunner) release(context.Context) error { return nil }

// peerURL is the member's advertised peer URL: its front's.
func (r *etcdRunner) peerURL() string { return "http://" + r.front.addr() }

func (r *etcdRunner) start(_ context.Context, fresh bool) (run, error) {
	n := r.n
	if fresh {
		var err error
		if r.port, err = freePort(); err != nil {
			return nil, err
		}
		if r.peer, err = freePort(); err != nil {
			return nil, err
		}
		r.front.setTo(net.JoinHostPort(loopback, strconv.Itoa(r.peer)))
	}
	var initial []string
	for _, m := range n.c.nodes {
		initial = append(initial, m.name+"="+m.rn.(*etcdRunner).peerURL())
	}
	client := "http://" + r.addr()
	args := []string{
		"--name", n.name,
		"--data-dir", filepath.Join(n.dir, "data"),
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", "http://" + net.JoinHostPort(loopback, strconv.Itoa(r.peer)),
		"--initial-advertise-peer-urls", r.peerURL(),
		"--initial-cluster", strings.Join(initial, ","),
		"--initial-cluster-state", "new",
		// One token per cluster (its first front's port is unique while
		// it runs): members of two clusters never mix.
		"--initial-cluster-token", "locktorture-" + n.c.fronts[0].port(),
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS),
		"--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap",
	}
	// The caller's ETCD_* variables would configure the members too.
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "ETCD_") {
			env = append(env, e)
		}
	}
	return spawn(n.c.bin, args, n.dir, env, n.LogPath(), n.name)
}

// ready is waitAnswer with /version, which a member without a leader
// answers too.
func (r *etcdRunner) ready(ctx context.Context, rn run, addr string) error {
	return waitUp(ctx, rn, addr, readyTimeout, r.n.name, r.n.LogPath(), "version", func(ctx context.Context) (bool, error) {
		_, err := etcdVersion(ctx, addr)
		if err == nil && addr == r.addr() {
			// As in ownAnswer (another run's member answers /version on
			// its peer port too).
			err = ownsPort(rn, r.port)
		}
		return err == nil, err
	})
}

// etcdHTTP is the client of the members' /version and /health: no
// keep-alive, so a poll never reuses a connection a fault left hanging.
var etcdHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// etcdField GETs path on the member at addr and returns the non-empty
// string field of its JSON answer.
func etcdField(ctx context.Context, addr, path, field string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := etcdHTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "", err
	}
	v, _ := m[field].(string)
	if v == "" {
		return "", fmt.Errorf("GET %s: no %s", path, field)
	}
	return v, nil
}

// etcdVersion returns the server version of the member at addr.
func etcdVersion(ctx context.Context, addr string) (string, error) {
	return etcdField(ctx, addr, "/version", "etcdserver")
}

// etcdHealth returns nil when the member at addr has a leader and its
// group answers a read (/health).
func etcdHealth(ctx context.Context, addr string) error {
	h, err := etcdField(ctx, addr, "/health", "health")
	if err == nil && h != "true" {
		err = fmt.Errorf("GET /health: health %q", h)
	}
	return err
}

// etcdHealthy waits until every member reports itself healthy.
func (c *Cluster) etcdHealthy(ctx context.Context, limit time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return inParallel(c.nodes, func(n *Node) error {
		t := time.NewTicker(10 * pollInterval)
		defer t.Stop()
		for {
			err := etcdHealth(wctx, n.DirectAddr())
			if err == nil {
				return nil
			}
			select {
			case <-wctx.Done():
				return fmt.Errorf("cluster: etcd member %s not healthy within %v (last error: %v); log tail:\n%s", n.name, limit, err, logTail(n.LogPath()))
			case <-t.C:
			}
		}
	})
}

// etcdPeer reads the head of a peer connection's first HTTP request and
// returns the index of the member that sent it, from the X-PeerURLs header
// etcd's Raft transport sets (-1 for anything else), and the connection
// to forward, what it read included.
func (c *Cluster) etcdPeer(conn net.Conn) (int, net.Conn) {
	br := bufio.NewReaderSize(conn, 4096)
	conn.SetReadDeadline(time.Now().Add(readyTimeout))
	defer conn.SetReadDeadline(time.Time{})
	var head string
	for {
		buf, _ := br.Peek(br.Buffered())
		if i := strings.Index(string(buf), "\r\n\r\n"); i >= 0 {
			head = string(buf[:i])
			break
		}
		if br.Buffered() == br.Size() {
			break
		}
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			break
		}
	}
	for line := range strings.Lines(head) {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "X-PeerURLs") {
			continue
		}
		for _, u := range strings.Split(value, ",") {
			for i, f := range c.fronts {
				if strings.TrimSpace(u) == "http://"+f.addr() {
					return i, &bufConn{Conn: conn, r: br}
				}
			}
		}
	}
	return -1, &bufConn{Conn: conn, r: br}
}

// bufConn is a connection whose first bytes were read into r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// CutPeers cuts each pair of etcd members apart, both ways, until
// HealPeers; nothing for Redis nodes, whose links kinds of their own cut.
func (c *Cluster) CutPeers(pairs [][2]int) {
	if c.peers != nil {
		c.peers.set(pairs, true, true)
	}
}

// HealPeers heals every cut of CutPeers.
func (c *Cluster) HealPeers() {
	if c.peers != nil {
		c.peers.healAll()
	}
}

// Server returns the server the nodes run: ServerRedis or ServerEtcd.
func (c *Cluster) Server() string { return cmp.Or(c.server, ServerRedis) }

// ownsPort returns nil when rn's process listens on 127.0.0.1:port (the
// socket's inode of /proc/net/tcp in /proc/PID/fd) or is no process.
func ownsPort(rn run, port int) error {
	p, ok := rn.(*process)
	if !ok || p.cmd.Process == nil {
		return nil
	}
	tcp, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil // not Linux's /proc: nothing to check by
	}
	want := fmt.Sprintf("0100007F:%04X", port) // 127.0.0.1 in /proc's byte order
	var inode string
	for line := range strings.Lines(string(tcp)) {
		f := strings.Fields(line)
		// local_address rem_address st ... inode (the 10th field); 0A is LISTEN.
		if len(f) > 9 && f[1] == want && f[3] == "0A" {
			inode = f[9]
		}
	}
	if inode == "" {
		return fmt.Errorf("nothing listens on port %d yet", port)
	}
	dir := fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == "socket:["+inode+"]" {
			return nil
		}
	}
	return fmt.Errorf("another process listens on port %d", port)
}
