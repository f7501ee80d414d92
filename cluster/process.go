package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// processRunner runs a node's redis-server as a child process bound to
// 127.0.0.1.
type processRunner struct {
	n    *Node
	port int // fixed once Start returns
}

var _ runner = (*processRunner)(nil)

func (p *processRunner) addr() string { return net.JoinHostPort(loopback, strconv.Itoa(p.port)) }

func (p *processRunner) release(context.Context) error { return nil }

// start starts redis-server and a goroutine that reaps it. A port taken
// by someone else shows as a process that exits before answering PING.
func (p *processRunner) start(_ context.Context, fresh bool) (run, error) {
	if fresh {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p.port = port
	}
	n := p.n
	args := n.redisArgs(p.port, loopback, n.dir, n.LogPath())
	log, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer log.Close() // the child has its own copy
	cmd := exec.Command(n.c.bin, args...)
	cmd.Dir = n.dir
	cmd.Env = n.withClockEnv(append(os.Environ(), n.c.opts.env...))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start %s: %w", n.name, err)
	}
	return newProcess(cmd), nil
}

// redisArgs returns the command line of a data node's redis-server
// listening on bind:port, with its data in dir and its log at logfile.
func (n *Node) redisArgs(port int, bind, dir, logfile string) []string {
	o := n.c.opts
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", bind,
		"--requirepass", n.c.password,
		"--save", "",
		"--dir", dir,
		"--logfile", logfile,
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
	args = append(args, n.args...)
	return append(args, o.extraArgs...)
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

// process is one run of a redis-server (or sentinel) process.
type process struct {
	cmd  *exec.Cmd
	exit chan struct{} // closed once cmd.Wait returns
}

var _ run = (*process)(nil)

// newProcess returns the run of the started cmd, with a goroutine that
// reaps it.
func newProcess(cmd *exec.Cmd) *process {
	p := &process{cmd: cmd, exit: make(chan struct{})}
	go func() {
		cmd.Wait() // its error is the exit status, quoted from ProcessState
		close(p.exit)
	}()
	return p
}

func (p *process) done() <-chan struct{} { return p.exit }

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) status() string { return fmt.Sprint(p.cmd.ProcessState) }

func (p *process) kill(context.Context) error {
	err := ignoreDone(p.cmd.Process.Kill())
	<-p.exit
	return err
}

func (p *process) pause(context.Context) error  { return p.signal(syscall.SIGSTOP) }
func (p *process) resume(context.Context) error { return p.signal(syscall.SIGCONT) }

func (p *process) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); errors.Is(err, os.ErrProcessDone) {
		return ErrNotRunning
	} else if err != nil {
		return err
	}
	return nil
}

// stop resumes the process if paused, sends SIGTERM, then SIGKILL after
// grace.
func (p *process) stop(_ context.Context, grace time.Duration, paused bool) error {
	var errs []error
	if paused {
		errs = append(errs, ignoreDone(p.cmd.Process.Signal(syscall.SIGCONT)))
	}
	errs = append(errs, ignoreDone(p.cmd.Process.Signal(syscall.SIGTERM)))
	select {
	case <-p.exit:
	case <-time.After(grace):
		errs = append(errs, p.kill(context.Background()))
	}
	return errors.Join(errs...)
}

func ignoreDone(err error) error {
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
