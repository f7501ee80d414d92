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
	"strings"
	"syscall"
	"time"
)

// processRunner runs a node's redis-server as a child process.
type processRunner struct {
	n    *Node
	port int // fixed once Start returns
}

var _ runner = (*processRunner)(nil)

func (p *processRunner) addr() string { return net.JoinHostPort(loopback, strconv.Itoa(p.port)) }

func (p *processRunner) release(context.Context) error { return nil }

// start starts redis-server; a port taken by someone else shows as a
// process that exits before answering PING.
func (p *processRunner) start(_ context.Context, fresh bool) (run, error) {
	n := p.n
	if fresh {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p.port = port
		if f := n.c.opts.clusterNode; f != nil {
			// The bus port too may have been taken since.
			set, err := f(n.index)
			if err != nil {
				return nil, err
			}
			n.mu.Lock()
			n.settings = set
			n.mu.Unlock()
		}
	}
	conf := filepath.Join(n.dir, nodeConf)
	if err := n.writeConf(conf, p.port, loopback, n.dataDir(), n.LogPath()); err != nil {
		return nil, err
	}
	args := append([]string{conf}, n.c.opts.extraArgs...)
	return spawn(n.c.bin, args, n.dir, n.withClockEnv(os.Environ()), n.LogPath(), n.name)
}

// spawn starts bin with args under umask 077 in dir, with env (nil: this
// process's), output appended to logPath, in a process group of its own
// that dies with this process; what names it in the error.
func spawn(bin string, args []string, dir string, env []string, logPath, what string) (run, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, fileMode)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer log.Close() // the child has its own copy
	cmd := privateCommand(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start %s: %w", what, err)
	}
	return newProcess(cmd), nil
}

// nodeConf is a data node's configuration file, in its folder: it holds
// the password, which is never on a command line (nor in a container's,
// which anyone who can inspect it reads).
const nodeConf = "redis.conf"

// writeConf writes to path the configuration of a node listening on
// bind:port, its data in dir and log at logfile (as redis-server sees
// them). It is written anew before every start: a restarted node starts
// from the cluster's settings, not what a sentinel's CONFIG REWRITE made.
func (n *Node) writeConf(path string, port int, bind, dir, logfile string) error {
	o := n.c.opts
	lines := []string{
		fmt.Sprintf("port %d", port),
		"bind " + bind,
		"requirepass " + redisQuote(n.c.password),
		`save ""`,
		"dir " + redisQuote(dir),
		"logfile " + redisQuote(logfile),
		"daemonize no",
		"protected-mode no",
		// For DEBUG SLEEP (nemesis server-stall), refused by Redis 7
		// otherwise; the password guards it.
		"enable-debug-command yes",
	}
	switch {
	case !o.persistence:
		lines = append(lines, "appendonly no")
	case o.fsyncAlways:
		lines = append(lines, "appendonly yes", "appendfsync always")
	default:
		lines = append(lines, "appendonly yes", "appendfsync everysec")
	}
	for _, kv := range n.settings {
		lines = append(lines, kv[0]+" "+redisQuote(kv[1]))
	}
	return writePrivate(path, []byte(strings.Join(lines, "\n")+"\n"))
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", loopback+":0")
	if err != nil {
		return 0, fmt.Errorf("cluster: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// process is one run of a local process.
type process struct {
	cmd  *exec.Cmd
	exit chan struct{} // closed once cmd.Wait returns
}

var _ run = (*process)(nil)

// newProcess returns the run of the started cmd, reaped by a goroutine.
func newProcess(cmd *exec.Cmd) *process {
	p := &process{cmd: cmd, exit: make(chan struct{})}
	go func() {
		cmd.Wait() // its error is the exit status, quoted from ProcessState
		close(p.exit)
	}()
	return p
}

func (p *process) Done() <-chan struct{} { return p.exit }

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) Status() string { return fmt.Sprint(p.cmd.ProcessState) }

func (p *process) Kill(context.Context) error {
	err := ignoreDone(p.cmd.Process.Kill())
	<-p.exit
	return err
}

func (p *process) Pause(context.Context) error  { return p.signal(syscall.SIGSTOP) }
func (p *process) Resume(context.Context) error { return p.signal(syscall.SIGCONT) }

func (p *process) signal(sig syscall.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return ErrNotRunning
	}
	return err
}

// Stop resumes the process if paused, sends SIGTERM, then SIGKILL after
// grace.
func (p *process) Stop(_ context.Context, grace time.Duration, paused bool) error {
	var errs []error
	if paused {
		errs = append(errs, ignoreDone(p.cmd.Process.Signal(syscall.SIGCONT)))
	}
	errs = append(errs, ignoreDone(p.cmd.Process.Signal(syscall.SIGTERM)))
	select {
	case <-p.exit:
	case <-time.After(grace):
		errs = append(errs, p.Kill(context.Background()))
	}
	return errors.Join(errs...)
}

func ignoreDone(err error) error {
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
