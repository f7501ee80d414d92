package locks

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The client supervisor: the process that starts a ProcessLock's client
// processes and ends their whole trees, whatever the clients do and
// however this process ends.
//
// Why a process of its own. A client is the user's code and may start
// processes of its own, which may leave its process group (setsid, a
// daemon's double fork). Killing the client's group then misses them,
// and when the harness dies by SIGKILL nothing in it runs: Pdeathsig
// kills the clients, its direct children, but not theirs. Three ways
// were weighed:
//
//   - The harness as a child subreaper (PR_SET_CHILD_SUBREAPER): orphans
//     of a client re-parent to it and can be killed at the end. But the
//     setting is the whole process's: it would adopt the orphans of
//     every child (the redis-server nodes, docker), whose reaping would
//     race with os/exec's Wait, also for Go locks; and it does nothing
//     for a SIGKILL of the harness, whose adopted orphans go to init.
//   - A cgroup per lock (cgroup.kill): not available to an unprivileged
//     user without a delegated subtree, and nothing writes cgroup.kill
//     after a SIGKILL of the harness.
//   - A supervisor (this): a small process, this binary re-executed in
//     a hidden mode (superviseEnv), that is a child subreaper and starts
//     every client of one ProcessLock itself. Every descendant of a
//     client is then its descendant whatever it does: one that leaves
//     the client's group or session, or whose parent exits, re-parents
//     to it. It ends them all when the harness closes the lock, and when
//     the harness dies (even by SIGKILL: the kernel closes the harness's
//     end of the socket between them, and the supervisor reads EOF). It
//     is started only by a ProcessLock, so Go locks run as before.
//
// The harness keeps the pipes: it makes each client's stdin, stdout and
// stderr and hands the client's ends to the supervisor over a Unix
// socket (SCM_RIGHTS) with the command; the supervisor starts the client
// on them (in a process group of its own, Pdeathsig SIGKILL), answers its
// pid, reaps it and reports how it ended. A kill goes through the
// supervisor too, which alone knows whether the pid was reaped (after
// which it may be another process's). When the socket ends the
// supervisor kills every child it has (the clients, their groups, the
// orphans it adopted), reaps them, kills the children they leave, and
// exits once it has no child at all: by then no descendant of any client
// is left.

// superviseEnv, set in its environment, makes this binary the client
// supervisor instead of what it is (init runs it and exits). Its value
// is the socket's descriptor number.
const superviseEnv = "LOCKTORTURE_CLIENT_SUPERVISOR"

func init() {
	if fd := os.Getenv(superviseEnv); fd != "" {
		os.Exit(supervise(fd))
	}
}

// superviseMsg is one message between the harness and its supervisor.
type superviseMsg struct {
	// Op is, to the supervisor, "spawn" (with Seq, Path, Argv, Env and
	// the descriptors stdin, stdout, stderr and any extra ones, in the
	// message's rights) or "kill" (Pid: its group, at once, unless it
	// was reaped); from it, "started" (Seq, Pid), "failed" (Seq, Error)
	// or "exited" (Pid, Status).
	Op     string   `json:"op"`
	Seq    int64    `json:"seq,omitempty"`
	Path   string   `json:"path,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Env    []string `json:"env,omitempty"`
	Pid    int      `json:"pid,omitempty"`
	Error  string   `json:"error,omitempty"`
	Status string   `json:"status,omitempty"` // "" for exit status 0
}

// maxSuperviseMsg bounds one message (the environment dominates).
const maxSuperviseMsg = 1 << 20

// supervise is the supervisor's main: it serves the socket at descriptor
// fd until it ends (or SIGTERM, SIGINT or SIGHUP), then ends every
// descendant; its exit status is 0 once none is left.
func supervise(fd string) int {
	n, err := strconv.Atoi(fd)
	if err != nil {
		fmt.Fprintf(os.Stderr, "client supervisor: bad %s %q\n", superviseEnv, fd)
		return 2
	}
	f := os.NewFile(uintptr(n), "supervisor socket")
	c, err := net.FileConn(f) // a duplicate, close-on-exec
	f.Close()                 // so that no client inherits the socket
	if err != nil {
		fmt.Fprintf(os.Stderr, "client supervisor: %v\n", err)
		return 2
	}
	conn := c.(*net.UnixConn)
	if err := setChildSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "client supervisor: PR_SET_CHILD_SUBREAPER: %v\n", err)
		return 2
	}
	s := &supervisorState{conn: conn, clients: map[int]bool{}, kick: make(chan struct{}, 1)}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		<-sigs
		s.shutdown()
	}()
	go s.serve()
	s.reap() // returns once shut down with no child left
	return 0
}

// supervisorState is the supervisor's: its socket, its clients (pid →
// not yet reaped), whether it is shutting down.
type supervisorState struct {
	conn *net.UnixConn
	wmu  sync.Mutex // one message written at a time

	mu       sync.Mutex // orders starts, kills and reaps
	clients  map[int]bool
	stopping bool
	kick     chan struct{} // wakes reap when it has no child
}

// send writes m, ignoring a closed socket (the harness is gone).
func (s *supervisorState) send(m superviseMsg) {
	b, _ := json.Marshal(m)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.conn.Write(b)
}

// serve reads the harness's messages until the socket ends. It keeps
// its thread: the clients' Pdeathsig follows the thread that started
// them, which then lives as long as serve does (and its end at the
// shutdown kills them, as the shutdown does anyway).
func (s *supervisorState) serve() {
	runtime.LockOSThread()
	buf := make([]byte, maxSuperviseMsg)
	oob := make([]byte, syscall.CmsgSpace(16*4))
	for {
		n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			s.shutdown()
			return
		}
		var fds []int
		if cms, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, cm := range cms {
				if rights, err := syscall.ParseUnixRights(&cm); err == nil {
					fds = append(fds, rights...)
				}
			}
		}
		var m superviseMsg
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			closeFDs(fds)
			continue
		}
		switch m.Op {
		case "spawn":
			err := s.spawn(m, fds)
			closeFDs(fds) // the client has its own
			if err != nil {
				s.send(superviseMsg{Op: "failed", Seq: m.Seq, Error: err.Error()})
			}
		case "kill":
			closeFDs(fds)
			s.mu.Lock()
			if s.clients[m.Pid] {
				killTree(m.Pid)
			}
			s.mu.Unlock()
		default:
			closeFDs(fds)
		}
	}
}

// spawn starts the client m describes on fds (stdin, stdout, stderr,
// then extra descriptors 3, 4, …) and says "started", under mu: before
// reap can say it exited.
func (s *supervisorState) spawn(m superviseMsg, fds []int) error {
	if len(fds) < 3 || len(m.Argv) == 0 {
		return errors.New("client supervisor: a spawn without its command or its three descriptors")
	}
	files := make([]uintptr, len(fds))
	for i, fd := range fds {
		files[i] = uintptr(fd)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return errSupervisorGone
	}
	pid, err := syscall.ForkExec(m.Path, m.Argv, &syscall.ProcAttr{
		Env:   m.Env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fmt.Errorf("fork/exec %s: %w", m.Path, err)
	}
	s.clients[pid] = true
	s.send(superviseMsg{Op: "started", Seq: m.Seq, Pid: pid})
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

// shutdown makes the supervisor end: no more starts, every child killed
// (reap kills the children they leave, and returns once none is left).
func (s *supervisorState) shutdown() {
	s.mu.Lock()
	s.stopping = true
	killChildren()
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// reap reaps every child as it ends, reporting the clients' ends; once
// shutting down, it kills every child after each round of reaping (the
// children an ended one left have re-parented to it by then) and
// returns when it has no child left.
func (s *supervisorState) reap() {
	for {
		pid, err := waitReady()
		if errors.Is(err, syscall.ECHILD) {
			s.mu.Lock()
			stopping := s.stopping
			s.mu.Unlock()
			if stopping {
				return
			}
			<-s.kick // a start, or the shutdown
			continue
		}
		if err != nil {
			continue // EINTR
		}
		s.mu.Lock()
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err == nil && s.clients[pid] {
			delete(s.clients, pid)
			s.send(superviseMsg{Op: "exited", Pid: pid, Status: exitStatus(ws)})
		}
		if s.stopping {
			killChildren()
		}
		s.mu.Unlock()
	}
}

// waitReady blocks until a child has ended and returns its pid, leaving
// it unreaped (waitid with WNOWAIT): reap then reaps it under mu, so that
// a kill under mu never signals a pid that was reaped, which another
// process may have taken since.
func waitReady() (int, error) {
	const pAll, wNoWait = 0, 0x1000000
	var info [16]uint64 // siginfo_t, 128 bytes
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info)), syscall.WEXITED|wNoWait, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	// si_pid follows si_signo, si_errno and si_code, at the start of
	// the union, which is pointer-aligned.
	off := 3 * 4
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 4 * 4
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), off))), nil
}

// exitStatus says how a process ended, as os.ProcessState does: "" for
// exit status 0, "exit status N", "signal: killed".
func exitStatus(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
		return ""
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return "ended (wait status " + strconv.Itoa(int(ws)) + ")"
}

// killTree sends SIGKILL to pid's process group and to pid (which may
// have left its group).
func killTree(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}

// killChildren sends SIGKILL to every child of this process, and to the
// process group of each that leads one other than this process's.
func killChildren() {
	self, own := os.Getpid(), syscall.Getpgrp()
	for _, c := range children(self) {
		syscall.Kill(c.pid, syscall.SIGKILL)
		if c.pgid > 0 && c.pgid != own {
			syscall.Kill(-c.pgid, syscall.SIGKILL)
		}
	}
}

type child struct{ pid, pgid int }

// children lists the processes whose parent is ppid, from /proc (the
// per-task children files are not in every kernel).
func children(ppid int) []child {
	entries, _ := os.ReadDir("/proc")
	var out []child
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		if p, _ := strconv.Atoi(f[1]); p == ppid {
			g, _ := strconv.Atoi(f[2])
			out = append(out, child{pid, g})
		}
	}
	return out
}

// setChildSubreaper makes this process the reaper of its descendants'
// orphans (prctl PR_SET_CHILD_SUBREAPER).
func setChildSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// supervisor is the harness's side of one client supervisor.
type supervisor struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	stderr *tail
	wmu    sync.Mutex // one message written at a time

	mu      sync.Mutex
	seq     int64
	pending map[int64]*proc // spawns awaiting their answer, by Seq
	procs   map[int]*proc   // started and not yet reported ended, by pid
	gone    bool            // the socket ended: nothing more starts
	ended   chan struct{}   // closed once the supervisor is reaped
	waitErr error
}

// errSupervisorGone: the supervisor ended (the lock was closed, or it
// was killed): no client starts any more, and every client it started
// was killed with it.
var errSupervisorGone = errors.New("the client supervisor ended")

// startSupervisor starts a client supervisor: this binary again
// (/proc/self/exe, which names it even if its file was replaced since),
// in a process group of its own so that a terminal's ^C reaches the
// harness, which ends it in order, and not the supervisor.
func startSupervisor() (*supervisor, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("client supervisor: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor socket"), os.NewFile(uintptr(fds[1]), "supervisor socket")
	defer theirs.Close() // the supervisor has its own
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("client supervisor: %w", err)
	}
	s := &supervisor{
		conn: c.(*net.UnixConn), stderr: &tail{max: 2048},
		pending: map[int64]*proc{}, procs: map[int]*proc{}, ended: make(chan struct{}),
	}
	s.cmd = exec.Command("/proc/self/exe")
	s.cmd.Args = []string{"locktorture-client-supervisor"}
	s.cmd.Env = append(clientEnv(nil), superviseEnv+"=3")
	s.cmd.ExtraFiles = []*os.File{theirs}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.Stderr = s.stderr
	s.cmd.WaitDelay = time.Second
	if err := s.cmd.Start(); err != nil {
		s.conn.Close()
		return nil, fmt.Errorf("start the client supervisor: %w", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.ended)
	}()
	go s.read()
	return s, nil
}

// read dispatches the supervisor's messages until the socket ends; then
// every spawn still waiting fails and every client not yet reported
// ended is (the supervisor killed it, or dies with its SIGKILL).
func (s *supervisor) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := s.conn.Read(buf)
		if err != nil || n == 0 {
			break
		}
		var m superviseMsg
		if json.Unmarshal(buf[:n], &m) != nil {
			continue
		}
		s.mu.Lock()
		switch m.Op {
		case "started", "failed":
			if p := s.pending[m.Seq]; p != nil {
				delete(s.pending, m.Seq)
				if m.Op == "started" {
					p.pid.Store(int64(m.Pid))
					s.procs[m.Pid] = p
				}
				p.spawned <- m
			}
		case "exited":
			if p := s.procs[m.Pid]; p != nil {
				delete(s.procs, m.Pid)
				p.status <- m.Status
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.gone = true
	for seq, p := range s.pending {
		delete(s.pending, seq)
		p.spawned <- superviseMsg{Op: "failed", Error: errSupervisorGone.Error()}
	}
	for pid, p := range s.procs {
		delete(s.procs, pid)
		p.status <- "killed with its supervisor"
	}
	s.mu.Unlock()
}

// spawn has the supervisor start p's client, path with argv and env, on
// files (stdin, stdout, stderr, then descriptors 3, …), and returns once
// it answered: p.pid is then set, and p is reported on p.status when it
// ends.
func (s *supervisor) spawn(p *proc, path string, argv, env []string, files []*os.File) error {
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return errSupervisorGone
	}
	s.seq++
	seq := s.seq
	s.pending[seq] = p
	s.mu.Unlock()
	b, err := json.Marshal(superviseMsg{Op: "spawn", Seq: seq, Path: path, Argv: argv, Env: env})
	if err == nil && len(b) > maxSuperviseMsg {
		err = fmt.Errorf("a command and environment of %d bytes, more than %d", len(b), maxSuperviseMsg)
	}
	if err == nil {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		s.wmu.Lock()
		_, _, err = s.conn.WriteMsgUnix(b, syscall.UnixRights(fds...), nil)
		s.wmu.Unlock()
	}
	if err != nil {
		s.mu.Lock()
		_, waiting := s.pending[seq]
		delete(s.pending, seq)
		s.mu.Unlock()
		if waiting {
			return fmt.Errorf("client supervisor: %w", err)
		}
		// read answered it meanwhile (the socket ended): take that.
	}
	m := <-p.spawned
	switch {
	case m.Op == "started":
		return nil
	case m.Error == errSupervisorGone.Error():
		return fmt.Errorf("%w%s", errSupervisorGone, s.why())
	}
	return errors.New(m.Error)
}

// why describes how the supervisor ended, waiting briefly for it to be
// reaped: its exit status and the last of its stderr.
func (s *supervisor) why() string {
	return endedWhy(s.ended, func() string {
		if s.waitErr == nil {
			return ""
		}
		return s.waitErr.Error()
	}, s.stderr)
}

// kill has the supervisor SIGKILL pid's process group (and pid), unless
// it was reaped already.
func (s *supervisor) kill(pid int) {
	b, _ := json.Marshal(superviseMsg{Op: "kill", Pid: pid})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.conn.Write(b) // an error: the supervisor is gone, and the client with it
}

// close ends the supervisor, which kills every client and every
// descendant of one, and waits until it has reaped them all and exited.
func (s *supervisor) close() error {
	s.conn.Close()
	select {
	case <-s.ended:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.ended
		return fmt.Errorf("the client supervisor did not end within 30s of the lock's close; killed (stderr: %s)", s.stderr.String())
	}
	if s.waitErr != nil {
		return fmt.Errorf("the client supervisor ended%s", s.why())
	}
	return nil
}
