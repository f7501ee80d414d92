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

// The client supervisor starts a ProcessLock's clients and ends their
// whole trees, however the clients and this process end. A client may
// start processes that leave its group (setsid, a daemon's double fork),
// and a SIGKILL of the harness runs nothing: Pdeathsig kills the clients,
// not their children. Weighed and left: the harness as a child subreaper
// (the setting is the whole process's: it would adopt the orphans of
// every child, redis-server nodes and docker, racing os/exec's Wait, and
// its SIGKILL hands them to init anyway); a cgroup per lock (cgroup.kill
// needs a delegated subtree, and nothing writes it after a SIGKILL).
//
// So this binary, re-executed (superviseEnv), is a child subreaper that
// starts every client of one ProcessLock, so every descendant of a client
// is its own. The harness hands each client's pipe ends over a Unix
// socket (SCM_RIGHTS); the supervisor starts the client on them (own
// process group, Pdeathsig SIGKILL), answers its pid, reaps it and says
// how it ended. Kills go through it: it alone knows whether a pid was
// reaped (and may be another process's). When the socket ends (Close, or
// the kernel at the harness's death) it kills every child, reaps them,
// kills the children they leave, and exits once it has none.

// superviseEnv makes this binary the client supervisor (init runs it and
// exits); its value is the socket's descriptor number.
const superviseEnv = "LOCKTORTURE_CLIENT_SUPERVISOR"

func init() {
	if fd := os.Getenv(superviseEnv); fd != "" {
		os.Exit(supervise(fd))
	}
}

// superviseMsg is one message between the harness and its supervisor.
type superviseMsg struct {
	// Op is, to the supervisor, "spawn" (Seq, Path, Argv, Env, the
	// descriptors in the rights) or "kill" (Pid, unless reaped); from it,
	// "started" (Seq, Pid), "failed" (Seq, Error) or "exited" (Pid, Status).
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

// supervise is the supervisor's main: it serves the socket at fd until it
// ends (or SIGTERM, SIGINT, SIGHUP), then ends every descendant.
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
	s := &supervisorState{msgConn: msgConn{conn: conn}, clients: map[int]bool{}, kick: make(chan struct{}, 1)}
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

// supervisorState is the supervisor's side: clients is pid → not reaped.
type supervisorState struct {
	msgConn
	mu       sync.Mutex // orders starts, kills and reaps
	clients  map[int]bool
	stopping bool
	kick     chan struct{} // wakes reap when it has no child
}

// msgConn is one end of the supervisor's socket.
type msgConn struct {
	conn *net.UnixConn
	wmu  sync.Mutex // one message written at a time
}

// send writes m, ignoring an error: the other end is gone, and with the
// supervisor every client.
func (c *msgConn) send(m superviseMsg) {
	b, _ := json.Marshal(m)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.Write(b)
}

// serve reads the harness's messages until the socket ends, on a locked
// thread: the clients' Pdeathsig follows the thread that started them.
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
		switch err := json.Unmarshal(buf[:n], &m); {
		case err != nil:
		case m.Op == "spawn":
			if err := s.spawn(m, fds); err != nil {
				s.send(superviseMsg{Op: "failed", Seq: m.Seq, Error: err.Error()})
			}
		case m.Op == "kill":
			s.mu.Lock()
			if s.clients[m.Pid] {
				killTree(m.Pid)
			}
			s.mu.Unlock()
		}
		closeFDs(fds) // a spawned client has its own
	}
}

// spawn starts the client m describes on fds (0, 1, 2, then 3, …) and
// says "started", under mu: before reap can say it exited.
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

// shutdown stops the starts and kills every child (reap kills the rest).
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

// reap reaps every child, reporting the clients'; once shutting down it
// kills every child after each reaping (orphans have re-parented to it
// by then) and returns when none is left.
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

// waitReady returns the pid of an ended child, unreaped (waitid WNOWAIT),
// so that reap reaps it under mu and a kill never signals a reaped pid.
func waitReady() (int, error) {
	const pAll, wNoWait = 0, 0x1000000
	var info [16]uint64 // siginfo_t, 128 bytes
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info)), syscall.WEXITED|wNoWait, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	// si_pid follows si_signo, si_errno, si_code, pointer-aligned.
	off := 3 * 4
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 4 * 4
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), off))), nil
}

// exitStatus says how a process ended, as os.ProcessState does; "" for 0.
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

// killTree kills pid's process group and pid (which may have left it).
func killTree(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}

// killChildren kills every child and each one's process group but ours.
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

// children lists ppid's children from /proc (not every kernel has the
// per-task children files).
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

// setChildSubreaper is prctl PR_SET_CHILD_SUBREAPER.
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
	msgConn
	cmd    *exec.Cmd
	stderr *tail

	mu      sync.Mutex
	seq     int64
	pending map[int64]*proc // spawns awaiting their answer, by Seq
	procs   map[int]*proc   // started and not yet reported ended, by pid
	gone    bool            // the socket ended: nothing more starts
	ended   chan struct{}   // closed once the supervisor is reaped
	waitErr error
}

// errSupervisorGone: the supervisor ended, and every client with it.
var errSupervisorGone = errors.New("the client supervisor ended")

// startSupervisor starts this binary again (/proc/self/exe names it even
// if its file was replaced) as a supervisor, in a process group of its
// own: a terminal's ^C reaches the harness, which ends it in order.
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
		msgConn: msgConn{conn: c.(*net.UnixConn)}, stderr: &tail{max: 2048},
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
// every waiting spawn fails and every client still running is reported
// ended (killed with the supervisor).
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

// spawn has the supervisor start p's client on files (0, 1, 2, 3, …) and
// returns once it answered: p.pid is set, and p.status reports its end.
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

func (s *supervisor) why() string {
	return endedWhy(s.ended, func() string {
		if s.waitErr == nil {
			return ""
		}
		return s.waitErr.Error()
	}, s.stderr)
}

// kill has the supervisor killTree pid, unless it was reaped.
func (s *supervisor) kill(pid int) {
	s.send(superviseMsg{Op: "kill", Pid: pid})
}

// close ends the supervisor, which kills every client's tree, and waits
// until it exited.
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
