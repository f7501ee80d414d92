package locks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The wire side of ProcessLock: the lines exchanged with one client
// process, and the process itself.

// clientEnv is this process's environment without LOCKTORTURE_PASSWORD,
// plus extra, each name once (the last wins, as in os/exec).
func clientEnv(extra []string) []string {
	all := append(os.Environ(), extra...)
	last := map[string]int{}
	for i, kv := range all {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	var env []string
	for i, kv := range all {
		name, _, _ := strings.Cut(kv, "=")
		if last[name] == i && name != "LOCKTORTURE_PASSWORD" {
			env = append(env, kv)
		}
	}
	return env
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Results of a reply.
const (
	resultOK          = "ok"
	resultNotAcquired = "not_acquired"
	resultNotHeld     = "not_held"
)

type clientRequest struct {
	ID int64  `json:"id"`
	Op string `json:"op"`
	// acquire, release, extend, ping
	Key       string  `json:"key,omitempty"`
	Token     string  `json:"token,omitempty"`
	TimeoutMS float64 `json:"timeout_ms,omitempty"`
	// hello
	Protocol     int               `json:"protocol,omitempty"`
	Client       int               `json:"client,omitempty"`
	Addrs        []string          `json:"addrs,omitempty"`
	Password     string            `json:"password,omitempty"`
	TTLMS        float64           `json:"ttl_ms,omitempty"`
	NodeTimeout  float64           `json:"node_timeout_ms,omitempty"`
	Tries        int               `json:"tries,omitempty"`
	RetryDelayMS float64           `json:"retry_delay_ms,omitempty"`
	Fencing      bool              `json:"fencing,omitempty"`
	Seed         int64             `json:"seed,omitempty"`
	Sentinels    []string          `json:"sentinels,omitempty"`
	SentinelPass string            `json:"sentinel_password,omitempty"`
	MasterName   string            `json:"master_name,omitempty"`
	AddrMap      map[string]string `json:"addr_map,omitempty"`
}

// clientReply is one line from a client (and from Serve): a reply, or an
// event.
type clientReply struct {
	ID           int64        `json:"id,omitempty"`
	Event        string       `json:"event,omitempty"` // an event: "lost"
	Result       string       `json:"result,omitempty"`
	Error        string       `json:"error,omitempty"`
	Key          string       `json:"key,omitempty"` // an event's
	Token        string       `json:"token,omitempty"`
	Fence        int64        `json:"fence,omitempty"`
	ValidityMS   *float64     `json:"validity_ms,omitempty"`
	UntilRelease bool         `json:"until_release,omitempty"`
	Nodes        *clientNodes `json:"nodes,omitempty"` // with reports_nodes
	Protocol     int          `json:"protocol,omitempty"`
	ClientInfo                // the hello's reply
}

// eventLost is the unprompted event (protocol 2) of a lost lease: key,
// token, error.
const eventLost = "lost"

// parsed is one line a client wrote: its reply, or why it is not JSON.
type parsed struct {
	r   clientReply
	raw []byte
	err error
}

// clientNodes is a reply's per-node evidence, in the shape of Nodes.
type clientNodes struct {
	Attempt  int   `json:"attempt"`
	Granted  []int `json:"granted"`
	Refused  []int `json:"refused"`
	Silent   []int `json:"silent"`
	Unlocked []int `json:"unlocked"`
}

// answers checks the evidence against the run's n nodes and returns it as
// node answers; an unlocked node is a clean-up of attempt 0 (not told).
func (c *clientNodes) answers(n int) ([]NodeAnswer, error) {
	var out []NodeAnswer
	seen := map[int]bool{}
	for _, l := range []struct {
		nodes  []int
		answer Answer
	}{{c.Granted, Granted}, {c.Refused, Refused}, {c.Silent, Silent}} {
		for _, node := range l.nodes {
			if node < 0 || node >= n || seen[node] {
				return nil, fmt.Errorf("%w: nodes: node %d is not one of the %d nodes, or is listed twice", ErrProtocol, node, n)
			}
			seen[node] = true
			out = append(out, NodeAnswer{Node: node, Attempt: c.Attempt, Answer: l.answer})
		}
	}
	if len(out) > 0 && c.Attempt < 1 {
		return nil, fmt.Errorf("%w: nodes: attempt %d, want 1 or more", ErrProtocol, c.Attempt)
	}
	for _, node := range c.Unlocked {
		if node < 0 || node >= n {
			return nil, fmt.Errorf("%w: nodes: unlocked node %d is not one of the %d nodes", ErrProtocol, node, n)
		}
		out = append(out, NodeAnswer{Node: node, Cleanup: true, Answer: Granted})
	}
	return out, nil
}

// because is ": " and the client's error text, or "".
func (r clientReply) because() string {
	if r.Error == "" {
		return ""
	}
	return ": " + r.Error
}

// outcome is the error of r: nil for ok, no (with the client's error)
// for the result refused, else unknown.
func (r clientReply) outcome(refused string, no error) error {
	switch r.Result {
	case resultOK:
		return nil
	case refused:
		return fmt.Errorf("%w%s", no, r.because())
	}
	return r.unknown()
}

// unknown is the error of a reply whose outcome is unknown: the
// client's "unknown", or a result the request cannot have.
func (r clientReply) unknown() error {
	if r.Result == "unknown" {
		return fmt.Errorf("outcome unknown: %s", r.Error)
	}
	return fmt.Errorf("%w: result %q%s", ErrProtocol, r.Result, r.because())
}

// maxLine bounds a reply line; a longer one breaks the protocol.
const maxLine = 1 << 20

type proc struct {
	n      int          // its number in the lock: the hello's client
	pid    atomic.Int64 // set by the supervisor's answer to the spawn
	sup    *supervisor
	stdin  *os.File          // the write end of its standard input
	stdout *os.File          // the read end of its standard output
	lines  chan parsed       // reply lines; closed when its stdout ends
	event  func(clientReply) // takes an event line (Event set)
	killed chan struct{}     // closed by kill
	exited chan struct{}     // closed once reaped (or never started)
	stderr *tail
	info   ClientInfo

	spawned chan superviseMsg // the supervisor's answer to the spawn
	status  chan string       // how it ended, once the supervisor reaped it

	mu     sync.Mutex // one exchange at a time
	nextID int64

	gone     atomic.Bool // killed, or its stdout ended: never used again
	readErr  error       // why its stdout's lines ended; set before lines is closed
	killOnce sync.Once
	ended    string // how it ended ("" for exit status 0); set before exited is closed
}

func newProc(sup *supervisor) *proc {
	return &proc{
		sup:     sup,
		lines:   make(chan parsed, 1),
		killed:  make(chan struct{}),
		exited:  make(chan struct{}),
		stderr:  &tail{max: 2048},
		spawned: make(chan superviseMsg, 1),
		status:  make(chan string, 1),
	}
}

// read forwards p's reply lines until its stdout ends, then kills its
// process group, waits until it is reaped, closes its pipes (after its
// last stderr, waited for at most a second: a descendant that left the
// group may hold stderr open until Close) and calls done.
func (p *proc) read(stderr *os.File, done func()) {
	stderrDone := make(chan struct{})
	go func() {
		io.Copy(p.stderr, stderr)
		close(stderrDone)
	}()
	sc := bufio.NewScanner(p.stdout)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		var l parsed
		if l.err = json.Unmarshal(sc.Bytes(), &l.r); l.err != nil {
			l.raw = append([]byte(nil), sc.Bytes()...)
		} else if l.r.Event != "" {
			if p.event != nil {
				p.event(l.r)
			}
			continue
		}
		select {
		case p.lines <- l:
		case <-p.killed:
		}
	}
	p.readErr = sc.Err()
	p.gone.Store(true)
	close(p.lines)
	p.kill()
	status := <-p.status
	select {
	case <-stderrDone:
	case <-time.After(time.Second):
	}
	stderr.Close()
	p.stdin.Close()
	p.stdout.Close()
	p.ended = status
	close(p.exited)
	done()
}

// kill has the supervisor kill p's process group, once, unless reaped.
func (p *proc) kill() {
	p.gone.Store(true)
	first := false
	p.killOnce.Do(func() { close(p.killed); first = true })
	if first {
		select {
		case <-p.exited:
		default:
			p.sup.kill(int(p.pid.Load()))
		}
	}
	// A child that left the group may hold the pipe open: ours ends read.
	p.stdout.Close()
}

// stop sends SIGSTOP to p's process group and returns the function that
// sends SIGCONT, once.
func (p *proc) stop() (cont func() error, err error) {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stop client process %d: %w", p.pid.Load(), err)
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			if e := p.signal(syscall.SIGCONT); e != nil {
				err = fmt.Errorf("continue client process %d: %w", p.pid.Load(), e)
			}
		})
		return err
	}, nil
}

// signal sends sig to p's process group, unless it has been reaped (the
// pid could be another process's).
func (p *proc) signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	pid := int(p.pid.Load())
	if pid <= 0 {
		return errors.New("not started")
	}
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// exchange writes req with the next id and the time left as timeout_ms,
// and waits for its reply until ctx's deadline, else bound. It returns
// the reply and when req was written. An error kills the process (its
// state is unknown).
func (p *proc) exchange(ctx context.Context, req clientRequest, bound time.Duration) (clientReply, time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone.Load() {
		return clientReply{}, time.Now(), fmt.Errorf("%w%s", ErrClientGone, p.why())
	}
	wait := bound
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	if err := ctx.Err(); err != nil {
		return clientReply{}, time.Now(), err
	}
	if wait <= 0 {
		return clientReply{}, time.Now(), fmt.Errorf("no time left: %w", context.DeadlineExceeded)
	}
	p.nextID++
	req.ID = p.nextID
	if req.Op != "hello" {
		req.TimeoutMS = ms(wait)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return clientReply{}, time.Now(), err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	sent := time.Now()
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.kill()
		return clientReply{}, sent, fmt.Errorf("%w: write: %v%s", ErrClientGone, err, p.why())
	}
	select {
	case line, ok := <-p.lines:
		if !ok {
			if errors.Is(p.readErr, bufio.ErrTooLong) {
				return clientReply{}, sent, fmt.Errorf("%w: a reply longer than %d bytes (1 MiB), the most a line may hold (client killed)", ErrProtocol, maxLine)
			}
			return clientReply{}, sent, fmt.Errorf("%w%s", ErrClientGone, p.why())
		}
		if line.err != nil {
			p.kill()
			return clientReply{}, sent, fmt.Errorf("%w: %v in %q (client killed)", ErrProtocol, line.err, truncate(line.raw))
		}
		r := line.r
		if r.ID != req.ID {
			p.kill()
			return clientReply{}, sent, fmt.Errorf("%w: reply id %d to request %d (client killed)", ErrProtocol, r.ID, req.ID)
		}
		return r, sent, nil
	case <-ctx.Done():
		p.kill()
		return clientReply{}, sent, fmt.Errorf("client killed while it worked: %w", ctx.Err())
	case <-timer.C:
		p.kill()
		return clientReply{}, sent, fmt.Errorf("no reply within %v, client killed: %w", wait.Round(time.Millisecond), context.DeadlineExceeded)
	}
}

func (p *proc) why() string {
	return endedWhy(p.exited, func() string { return p.ended }, p.stderr)
}

// endedWhy describes how a process ended, waiting briefly for ended: its
// status ("" for a plain exit) and the last of its stderr.
func endedWhy(ended <-chan struct{}, status func() string, stderr *tail) string {
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		return " (still running)"
	}
	st := status()
	if st == "" {
		st = "exited"
	}
	if s := stderr.String(); s != "" {
		return fmt.Sprintf(" (%s; stderr: %s)", st, s)
	}
	return fmt.Sprintf(" (%s)", st)
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// tail keeps the last max bytes written to it, for errors to quote.
type tail struct {
	mu      sync.Mutex
	max     int
	b       []byte
	secrets []string // masked in String
}

// secretsOf are cfg's passwords, which a client may print (its hello has
// them) and nothing quoted may carry.
func secretsOf(cfg Config) []string {
	var s []string
	for _, p := range []string{cfg.Password, cfg.SentinelPassword} {
		if p != "" {
			s = append(s, p)
		}
	}
	return s
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

// String returns the kept bytes on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.b)
	for _, secret := range t.secrets {
		s = strings.ReplaceAll(s, secret, "****")
	}
	return strings.Join(strings.Fields(s), " ")
}
