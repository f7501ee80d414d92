package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/redis/go-redis/v9"
)

// errExited marks a process that died before answering PING.
var errExited = errors.New("exited before answering PING")

// Node is one redis-server process and its proxy. Its methods are safe for
// concurrent use.
type Node struct {
	c     *Cluster
	index int
	name  string
	dir   string
	port  int    // of redis-server; fixed once Start returns
	addr  string // of the proxy
	proxy *toxiproxy.Proxy

	groups []groupProxy // of client groups 1, 2, ...; see groups.go
	clock  *clockFile   // nil without WithClockShim; see clock.go
	args   []string     // this node's own arguments, before the extra ones; see failover.go

	mu     sync.Mutex
	proc   *process // nil when killed or stopped
	paused bool
	closed bool // by Cluster.Close
	client *redis.Client
}

// process is one run of redis-server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait returns
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Index returns the node's position in Cluster.Nodes, from 0.
func (n *Node) Index() int { return n.index }

// Name returns "n1", "n2", ...: 1-based, and the name of its proxy.
func (n *Node) Name() string { return n.name }

// Addr returns the address of the node's proxy, which clients dial.
func (n *Node) Addr() string { return n.addr }

// DirectAddr returns the address of redis-server itself, bypassing the
// proxy. It stays the same across restarts.
func (n *Node) DirectAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// Proxy returns the node's toxiproxy proxy, to add toxics to or to disable.
func (n *Node) Proxy() *toxiproxy.Proxy { return n.proxy }

// LogPath returns the node's redis.log, which also gets the process's
// stdout and stderr and is appended to across restarts.
func (n *Node) LogPath() string { return filepath.Join(n.dir, "redis.log") }

// Pid returns the process id of redis-server, or 0 when it is not running.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running() {
		return 0
	}
	return n.proc.cmd.Process.Pid
}

// Running reports whether the node's process is alive (paused or not).
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

func (n *Node) running() bool { return n.proc != nil && !n.proc.exited() }

// Kill sends SIGKILL to the node's process and waits for it to exit. It does
// nothing if the process is not running.
func (n *Node) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kill()
}

func (n *Node) kill() error {
	if n.proc == nil {
		return nil
	}
	err := n.proc.cmd.Process.Kill()
	<-n.proc.done
	n.proc, n.paused = nil, false
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cluster: kill %s: %w", n.name, err)
	}
	return nil
}

// Restart starts the node's redis-server again on the same port, killing it
// first if it is running, and waits until it answers PING (at most 10 s).
// Without persistence the node comes back empty. If it does not answer, the
// new process is killed and the error quotes the end of its log.
func (n *Node) Restart(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("%w: restart %s", ErrClosed, n.name)
	}
	err := n.kill()
	var p *process
	if err == nil {
		p, err = n.spawn()
		n.proc = p
	}
	n.mu.Unlock()
	if err != nil {
		return err
	}
	if err := n.waitReady(ctx, p, n.DirectAddr()); err != nil {
		n.mu.Lock()
		if n.proc == p {
			n.kill()
		}
		n.mu.Unlock()
		return err
	}
	return nil
}

// Pause stops the node's process with SIGSTOP: connections stay open and
// commands queue up, to run after Resume.
func (n *Node) Pause() error { return n.signal("pause", syscall.SIGSTOP, true) }

// Resume continues a paused node's process with SIGCONT.
func (n *Node) Resume() error { return n.signal("resume", syscall.SIGCONT, false) }

func (n *Node) signal(op string, sig syscall.Signal, paused bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running() {
		return fmt.Errorf("%w: %s %s", ErrNotRunning, op, n.name)
	}
	if err := n.proc.cmd.Process.Signal(sig); errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w: %s %s", ErrNotRunning, op, n.name)
	} else if err != nil {
		return fmt.Errorf("cluster: %s %s: %w", op, n.name, err)
	}
	n.paused = paused
	return nil
}

// Ping sends PING on a fresh connection to the node's direct address, so
// proxy faults do not hide the node's health.
func (n *Node) Ping(ctx context.Context) error {
	if err := ping(ctx, n.DirectAddr(), n.c.password); err != nil {
		return fmt.Errorf("cluster: ping %s: %w", n.name, err)
	}
	return nil
}

// Client returns a go-redis client to the node's direct address, with the
// password, for administration and tests. It is created on first use and
// closed by Cluster.Close. It never retries a command, dials once, and obeys
// context deadlines. Beware that go-redis stops dialing for about a second
// once a client has seen PoolSize (10 × GOMAXPROCS) failed dials in its life;
// use Ping to check health.
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

// start starts the node's first process, trying a few free ports in case one
// is taken between finding and binding it, then its proxy.
func (n *Node) start(ctx context.Context) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := n.openClock(); err != nil {
		return err
	}
	var (
		p   *process
		err error
	)
	for range portAttempts {
		if n.port, err = freePort(); err != nil {
			return err
		}
		if p, err = n.spawn(); err != nil {
			return err
		}
		n.mu.Lock()
		n.proc = p
		n.mu.Unlock()
		if err = n.waitReady(ctx, p, n.DirectAddr()); !errors.Is(err, errExited) {
			break
		}
	}
	if err != nil {
		return err
	}
	n.proxy = toxiproxy.NewProxy(n.c.srv, n.name, "127.0.0.1:0", n.DirectAddr())
	if err := n.c.srv.Collection.Add(n.proxy, true); err != nil {
		return fmt.Errorf("cluster: proxy %s: %w", n.name, err)
	}
	n.addr = n.proxy.Listen // the bound port, set by Add; read before anyone can Stop the proxy
	if err := n.waitReady(ctx, p, n.addr); err != nil {
		return err
	}
	return n.startGroups(ctx, p)
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cluster: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawn starts redis-server on n.port and a goroutine that reaps it.
func (n *Node) spawn() (*process, error) {
	o := n.c.opts
	args := []string{
		"--port", strconv.Itoa(n.port),
		"--bind", "127.0.0.1",
		"--requirepass", n.c.password,
		"--save", "",
		"--dir", n.dir,
		"--logfile", n.LogPath(),
		"--daemonize", "no",
		"--protected-mode", "no",
	}
	switch {
	case !o.persistence:
		args = append(args, "--appendonly", "no")
	case o.fsyncAlways:
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	default:
		args = append(args, "--appendonly", "yes", "--appendfsync", "everysec")
	}
	log, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer log.Close() // the child has its own copy
	args = append(args, n.args...)
	cmd := exec.Command(n.c.bin, append(args, o.extraArgs...)...)
	cmd.Dir = n.dir
	cmd.Env = n.withClockEnv(append(os.Environ(), o.env...))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start %s: %w", n.name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait() // its error is the exit status, quoted from ProcessState
		close(p.done)
	}()
	return p, nil
}

// waitReady polls PING on addr until it answers, p exits (errExited), ctx is
// done, or 10 s pass.
func (n *Node) waitReady(ctx context.Context, p *process, addr string) error {
	wctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := ping(wctx, addr, n.c.password)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("cluster: %s on port %d: %w (%v); log tail:\n%s",
				n.name, n.port, errExited, p.cmd.ProcessState, logTail(n.LogPath()))
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("cluster: wait for %s: %w", n.name, ctx.Err())
			}
			return fmt.Errorf("cluster: %s at %s gave no PONG within %v (last error: %v); log tail:\n%s",
				n.name, addr, readyTimeout, err, logTail(n.LogPath()))
		case <-t.C:
		}
	}
}

// stop ends the node for Cluster.Close: it resumes the process if paused,
// sends SIGTERM, then SIGKILL after 2 s, and closes the client.
func (n *Node) stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	var errs []error
	if n.client != nil {
		errs = append(errs, n.client.Close())
	}
	if !n.running() {
		n.proc = nil
		return errors.Join(errs...)
	}
	p := n.proc.cmd.Process
	if n.paused {
		errs = append(errs, ignoreDone(p.Signal(syscall.SIGCONT)))
	}
	errs = append(errs, ignoreDone(p.Signal(syscall.SIGTERM)))
	select {
	case <-n.proc.done:
		n.proc, n.paused = nil, false
	case <-time.After(stopGrace):
		errs = append(errs, n.kill())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop %s: %w", n.name, err)
	}
	return nil
}

func ignoreDone(err error) error {
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
