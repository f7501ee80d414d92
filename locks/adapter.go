package locks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/shlex"
)

// ProtocolVersion is the version of the line protocol that ProcessLock
// speaks (locks/clients/PROTOCOL.md); the hello carries it. Version 2
// adds the "lost" event, which a client may send unprompted; a client of
// version 1 is a client of version 2 that sends none.
const ProtocolVersion = 2

// ExecPrefix starts the name of a lock served by a client process of the
// caller's choosing: "exec:" followed by its command line, e.g.
// `exec:python3 locks/clients/example/example_client.py`. Lookup and New
// accept such a name without Register; see [ExecSpec].
const ExecPrefix = "exec:"

// UntilRelease is the validity that ProcessLock gives a lease whose
// client claims no deadline (`"until_release": true`: redis-py's Lock,
// whose users hold until they release): a century after the request
// was sent. The checker then ends the hold at the release call, so a
// holder that outlives the key's TTL overlaps the next holder and is
// reported.
const UntilRelease = 100 * 365 * 24 * time.Hour

// Errors of ProcessLock.
var (
	// ErrClientGone: the client process that served this lease exited
	// or was killed (after a timeout, a protocol error or Close); the
	// outcome of the call is unknown.
	ErrClientGone = errors.New("locks: client process gone")
	// ErrProtocol: a client process broke the line protocol (a reply
	// that is not JSON, has another id, lacks a token or a validity).
	ErrProtocol = errors.New("locks: client broke the protocol")
	// ErrClosed: the lock was closed.
	ErrClosed = errors.New("locks: lock closed")
)

// ClientInfo is what a client process says of itself in its reply to
// the hello.
type ClientInfo struct {
	// Name is the client's name, e.g. "redis-py Lock".
	Name string `json:"name"`
	// Language is the language and version it runs on, e.g.
	// "Python 3.11.2".
	Language string `json:"language"`
	// Versions are the versions of the libraries it uses, e.g.
	// {"redis-py": "4.3.4"}.
	Versions map[string]string `json:"versions,omitempty"`
	// Fencing is true when the client issues fencing tokens.
	Fencing bool `json:"fencing"`
	// ReportsNodes is true when the client's replies carry per-node
	// evidence ("nodes"; see [NodeReporter]).
	ReportsNodes bool `json:"reports_nodes,omitempty"`
	// Promises is what the client declares of its lock (see Promises),
	// from which the release gate derives its cells; nil when it
	// declares nothing.
	Promises *Promises `json:"promises,omitempty"`
}

// ProcessLock is a Lock served by client processes that speak the line
// protocol of locks/clients/PROTOCOL.md over their standard input and
// output: one JSON request a line in, one JSON reply a line out. It is
// how a lock written in any language is tortured.
//
// Processes. A client process handles one request at a time, so the lock
// keeps a pool: a call takes an idle process or starts a new one, and a
// process whose acquire succeeded stays with its lease until the lease is
// released (release and extend go to the process that acquired, which may
// keep state per lease). With the harness's clients each holding at most
// one lease, that is one process per torture client ([ProcessLock.Warm]
// starts them before the run). The password and the rest of the
// configuration reach a process in the hello, on its standard input:
// never on its command line or in its environment (LOCKTORTURE_PASSWORD
// is removed from the environment it inherits).
//
// The processes are started by the lock's client supervisor
// (supervise.go), a small process of this binary that is their parent
// and a child subreaper, each in a process group of its own with
// Pdeathsig SIGKILL. A process killed during the run (below) is killed
// with its process group; Close, and the death of this process even by
// SIGKILL, end every process the clients started too, in their groups or
// not (setsid, daemons): none is left when Close returns, nor soon after
// this process dies. A process that does not answer within the call's deadline
// (ctx's, else the default bound) or breaks the protocol is killed, and
// the call's outcome is unknown; a process that exits gives unknown
// outcomes for its calls and leases, never a crash. The next call starts
// a fresh process.
//
// Validity. A client reports validity_ms counted on its own monotonic
// clock from just before its first request to Redis for the call. The
// lock counts it from the moment it wrote the request to the pipe, which
// is earlier: the recorded lease ends no later than the client believes,
// by the pipe's one-way delay (BENCHMARKS.md measures the round trip). The
// error is on the side of the lock under test: a violation the harness
// reports is one the client's own claim implies; one shorter than the
// pipe's delay can be missed. A client that claims no deadline
// (until_release) gets [UntilRelease].
//
// Evidence. A client that says "reports_nodes" in its hello carries in
// each reply which nodes granted, refused or did not answer ("nodes",
// already summed up as [Nodes]); the lock reports them to the call's
// [Evidence], the unlocked nodes as clean-ups of an attempt it cannot
// tell (0). redlock-py does; redis-py-lock does not.
type ProcessLock struct {
	name  string
	argv  []string
	cfg   Config
	opts  processOptions
	bound time.Duration // a call's deadline when ctx has none
	info  ClientInfo

	sup *supervisor // starts the clients, and ends their trees

	mu      sync.Mutex
	idle    []*proc
	leases  map[string]*held // token → the lease's process and notice
	all     map[*proc]struct{}
	started int // processes started so far: the next one's number
	closed  bool
	spawns  sync.WaitGroup
}

var (
	_ Lock         = (*ProcessLock)(nil)
	_ NodeReporter = (*ProcessLock)(nil)
)

// ReportsNodes implements [NodeReporter]: true when the client said in
// its hello that its replies carry per-node evidence (reports_nodes). A
// reply without "nodes" then reports nothing for its call; evidence that
// names a node outside the run, or one node twice, is a protocol error.
func (l *ProcessLock) ReportsNodes() bool { return l.info.ReportsNodes }

// report reports the evidence of r, if the client reports any, to the
// Evidence in ctx.
func (l *ProcessLock) report(ctx context.Context, r clientReply) error {
	ev := ContextEvidence(ctx)
	if ev == nil || r.Nodes == nil || !l.info.ReportsNodes {
		return nil
	}
	answers, err := r.Nodes.answers(max(len(l.cfg.Addrs), 1))
	if err != nil {
		return err
	}
	for _, a := range answers {
		ev.add(a)
	}
	return nil
}

// ProcessOption configures NewProcessLock.
type ProcessOption func(*processOptions)

type processOptions struct {
	env         []string
	script      []byte
	callTimeout time.Duration
}

// startTimeout bounds the start of one client process: from its start
// to its reply to the hello (an interpreter importing its libraries on a
// loaded machine).
const startTimeout = 20 * time.Second

// WithProcessEnv adds NAME=value entries to the environment the client
// processes inherit. Default none.
func WithProcessEnv(env ...string) ProcessOption {
	return func(o *processOptions) { o.env = append(o.env, env...) }
}

// WithCallTimeout bounds the wait for a reply when the call's ctx has no
// deadline. The default is Tries × (len(Addrs) × Timeout + RetryDelay) +
// Timeout, at least one second: a client that tries every node in turn,
// every attempt, has the time for it.
func WithCallTimeout(d time.Duration) ProcessOption {
	return func(o *processOptions) { o.callTimeout = d }
}

// withScript hands script to each process as a file at /dev/fd/3 (a
// pipe), for the built-in clients embedded in this package.
func withScript(script []byte) ProcessOption {
	return func(o *processOptions) { o.script = script }
}

// NewProcessLock builds the lock called name (for error messages) served
// by processes running argv (argv[0] is looked up in PATH). It starts one
// process and completes its hello before it returns, so that a command
// that cannot start, or a client that refuses the configuration (e.g.
// cfg.Fencing when it issues no fencing tokens), fails here, with the
// client's last words on stderr in the error.
func NewProcessLock(name string, argv []string, cfg Config, opts ...ProcessOption) (*ProcessLock, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%w: %s: no command", ErrBadSpec, name)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l := &ProcessLock{
		name:   name,
		argv:   append([]string(nil), argv...),
		cfg:    cfg,
		leases: map[string]*held{},
		all:    map[*proc]struct{}{},
	}
	for _, o := range opts {
		o(&l.opts)
	}
	l.opts.env = append(l.opts.env, cfg.ClientEnv...)
	nodes := max(len(cfg.Addrs), 1)
	l.bound = max(time.Second, time.Duration(cfg.Tries)*(time.Duration(nodes)*cfg.Timeout+cfg.RetryDelay)+cfg.Timeout)
	if l.opts.callTimeout > 0 {
		l.bound = l.opts.callTimeout
	}
	if l.sup, err = startSupervisor(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := l.start()
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l.info = p.info
	l.put(p)
	return l, nil
}

// Info returns what the client said of itself in its hello.
func (l *ProcessLock) Info() ClientInfo { return l.info }

// Versions returns what the client says it runs on, for results.json,
// under the client's own names: "client" (its name), "client language"
// and, for each library of its hello's versions, "client:" + the
// library's name. Every key begins with "client", so a client cannot
// put a version under the harness's own keys ("go", the module paths of
// report.Versions): one whose hello claims {"go": "go9.9"} gets
// "client:go", and whatever merges the two maps keeps the harness's.
func (l *ProcessLock) Versions() map[string]string {
	v := map[string]string{"client": l.info.Name, "client language": l.info.Language}
	for k, s := range l.info.Versions {
		v[ClientVersionPrefix+k] = s
	}
	return v
}

// ClientVersionPrefix begins the key of each library version a client
// process reports (ProcessLock.Versions): "client:redis-py".
const ClientVersionPrefix = "client:"

// Pids returns the process ids of the client processes running now.
func (l *ProcessLock) Pids() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	pids := make([]int, 0, len(l.all))
	for p := range l.all {
		if pid := p.pid.Load(); pid != 0 {
			pids = append(pids, int(pid))
		}
	}
	return pids
}

// Warm starts client processes until n are running, in parallel, so that
// n concurrent callers find one each without waiting for a start.
func (l *ProcessLock) Warm(ctx context.Context, n int) error {
	l.mu.Lock()
	missing := n - len(l.all)
	l.mu.Unlock()
	errs := make([]error, max(missing, 0))
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			p, err := l.startCtx(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			l.put(p)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: warm %d clients: %w", l.name, n, err)
	}
	return nil
}

// Ping sends a ping to an idle client process (started if none is) and
// returns the time from writing the request to reading the reply: the
// pipe's round trip plus the client's turn-around.
func (l *ProcessLock) Ping(ctx context.Context) (time.Duration, error) {
	p, err := l.get(ctx)
	if err != nil {
		return 0, err
	}
	r, sent, err := p.exchange(ctx, clientRequest{Op: "ping"}, l.bound)
	rtt := time.Since(sent)
	if err != nil {
		return 0, fmt.Errorf("%s: ping: %w", l.name, err)
	}
	l.put(p)
	if r.Result != "ok" {
		return 0, fmt.Errorf("%s: ping: %w: result %q", l.name, ErrProtocol, r.Result)
	}
	return rtt, nil
}

// Acquire implements [Lock].
func (l *ProcessLock) Acquire(ctx context.Context, key string) (Lease, error) {
	p, err := l.get(ctx)
	if err != nil {
		return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
	}
	r, sent, err := p.exchange(ctx, clientRequest{Op: "acquire", Key: key}, l.bound)
	if err == nil {
		err = l.report(ctx, r)
		if err != nil {
			l.put(p)
		}
	}
	if err != nil {
		return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
	}
	switch r.Result {
	case resultOK:
		lease, err := l.lease(Lease{Key: key}, r, sent, true)
		if err == nil {
			l.mu.Lock()
			if _, taken := l.leases[lease.Token]; taken {
				err = fmt.Errorf("%w: token %q issued twice", ErrProtocol, lease.Token)
			} else {
				h := &held{p: p, lost: NewNotice()}
				l.leases[lease.Token] = h
				lease.Lost = h.lost
			}
			l.mu.Unlock()
		}
		if err != nil {
			l.put(p)
			return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
		}
		return lease, nil
	case resultNotAcquired:
		l.put(p)
		return Lease{}, fmt.Errorf("%s: acquire %q: %w%s", l.name, key, ErrNotAcquired, r.because())
	default:
		l.put(p)
		return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, r.unknown())
	}
}

// Release implements [Lock]. It goes to the process that acquired the
// lease; when that process is gone (or the lease was released already,
// or is not this lock's), to any process, which answers from the key and
// the token alone, or says it cannot.
func (l *ProcessLock) Release(ctx context.Context, lease Lease) error {
	p, err := l.owner(ctx, lease.Token, true)
	if err != nil {
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, err)
	}
	r, _, err := p.exchange(ctx, clientRequest{Op: "release", Key: lease.Key, Token: lease.Token}, l.bound)
	if err != nil {
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, err)
	}
	l.put(p)
	if err := l.report(ctx, r); err != nil {
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, err)
	}
	switch r.Result {
	case resultOK:
		return nil
	case resultNotHeld:
		return fmt.Errorf("%s: release %q: %w%s", l.name, lease.Key, ErrNotHeld, r.because())
	default:
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, r.unknown())
	}
}

// Extend implements [Lock]. It goes where Release would. Whether a lease
// past its validity may still be extended is the client's business, as
// it is its library's.
func (l *ProcessLock) Extend(ctx context.Context, lease Lease) (Lease, error) {
	p, err := l.owner(ctx, lease.Token, false)
	if err != nil {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
	}
	r, sent, err := p.exchange(ctx, clientRequest{Op: "extend", Key: lease.Key, Token: lease.Token}, l.bound)
	if err != nil {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
	}
	l.mu.Lock()
	owned := l.leases[lease.Token] != nil && l.leases[lease.Token].p == p
	l.mu.Unlock()
	if !owned {
		l.put(p)
	}
	if err := l.report(ctx, r); err != nil {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
	}
	switch r.Result {
	case resultOK:
		ext, err := l.lease(lease, r, sent, false)
		if err != nil {
			return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
		}
		return ext, nil
	case resultNotHeld:
		return Lease{}, fmt.Errorf("%s: extend %q: %w%s", l.name, lease.Key, ErrNotHeld, r.because())
	default:
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, r.unknown())
	}
}

// held is a lease a client process granted: the process that acquired
// it, and its loss notice (Lease.Lost), given at the client's "lost"
// event.
type held struct {
	p    *proc
	lost *Notice
}

// event takes an event line of a client process: "lost" gives the notice
// of the lease it names, with the client's error, while it is held (after its
// release, or for a token never granted, it is ignored). An event of
// another name is ignored: a later version of the protocol may add some.
func (l *ProcessLock) event(r clientReply) {
	if r.Event != eventLost {
		return
	}
	l.mu.Lock()
	h := l.leases[r.Token]
	l.mu.Unlock()
	if h != nil {
		why := r.Error
		if why == "" {
			why = "the client said it lost the lease"
		}
		h.lost.Tell(errors.New(why))
	}
}

// ErrNoProcess: no live client process serves the lease (it was
// released, or its process is gone), or none runs at all.
var ErrNoProcess = errors.New("locks: no live client process")

// StopLease stops the client process that serves the lease token
// (SIGSTOP to its process group: the process and any child of it) and
// returns its pid and the function that continues it (SIGCONT), once; a
// process killed meanwhile is not signalled. A call to a stopped process
// gets no answer: its deadline kills it, and the outcome is unknown.
// ErrNoProcess when no live process serves the lease.
func (l *ProcessLock) StopLease(token string) (pid int, cont func() error, err error) {
	l.mu.Lock()
	h := l.leases[token]
	l.mu.Unlock()
	if h == nil || h.p.gone.Load() {
		return 0, nil, fmt.Errorf("%s: stop the process of lease %q: %w", l.name, token, ErrNoProcess)
	}
	cont, err = h.p.stop()
	return int(h.p.pid.Load()), cont, err
}

// StopProcess stops the pick-th (modulo their number, in the order they
// started) of the client processes running now, as StopLease does, and
// returns the token of the lease it serves, "" for none.
func (l *ProcessLock) StopProcess(pick int) (pid int, token string, cont func() error, err error) {
	l.mu.Lock()
	var live []*proc
	for p := range l.all {
		if !p.gone.Load() {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		l.mu.Unlock()
		return 0, "", nil, fmt.Errorf("%s: %w", l.name, ErrNoProcess)
	}
	slices.SortFunc(live, func(a, b *proc) int { return a.n - b.n })
	p := live[((pick%len(live))+len(live))%len(live)]
	for t, h := range l.leases {
		if h.p == p {
			token = t
		}
	}
	l.mu.Unlock()
	cont, err = p.stop()
	return int(p.pid.Load()), token, cont, err
}

// owner returns the live process that acquired token, or else an idle
// (or new) one; release also forgets the token. The caller puts the
// process back unless it still owns a lease.
func (l *ProcessLock) owner(ctx context.Context, token string, release bool) (*proc, error) {
	l.mu.Lock()
	var p *proc
	if h := l.leases[token]; h != nil {
		p = h.p
	}
	if release {
		delete(l.leases, token)
	}
	l.mu.Unlock()
	if p != nil && !p.gone.Load() {
		return p, nil
	}
	if p != nil && !release {
		l.mu.Lock()
		delete(l.leases, token) // its process is gone
		l.mu.Unlock()
	}
	return l.get(ctx)
}

// lease builds the lease of an ok reply to a request written at sent:
// the token (a new one for an acquire; an extend keeps the lease's),
// the fencing token and the validity.
func (l *ProcessLock) lease(lease Lease, r clientReply, sent time.Time, acquire bool) (Lease, error) {
	if acquire {
		if r.Token == "" {
			return Lease{}, fmt.Errorf("%w: ok without a token", ErrProtocol)
		}
		lease.Token = r.Token
		if l.cfg.Fencing {
			if r.Fence <= 0 {
				return Lease{}, fmt.Errorf("%w: ok without a fencing token (fence %d)", ErrProtocol, r.Fence)
			}
			lease.Fence = r.Fence
		}
	}
	switch {
	case r.UntilRelease:
		lease.Validity = sent.Add(UntilRelease)
	case r.ValidityMS == nil:
		return Lease{}, fmt.Errorf("%w: ok without validity_ms or until_release", ErrProtocol)
	case !(*r.ValidityMS >= 0 && *r.ValidityMS <= maxValidityMS):
		return Lease{}, fmt.Errorf("%w: validity_ms %g is out of range: a validity is 0 to %.0f ms (a century; until_release for none)", ErrProtocol, *r.ValidityMS, maxValidityMS)
	default:
		v := *r.ValidityMS * float64(time.Millisecond)
		lease.Validity = sent.Add(time.Duration(math.Round(v)))
	}
	return lease, nil
}

// maxValidityMS is the longest validity_ms a client may claim:
// UntilRelease, a century. Beyond it, or below 0, the claim is a protocol
// error, the outcome unknown, rather than a time the lease cannot end at
// (a validity past the range of time.Time loses its monotonic reading).
var maxValidityMS = ms(UntilRelease)

// Close kills every client process and every process one started, and
// waits until each is reaped. The leases still held are left to their
// TTL.
func (l *ProcessLock) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	procs := make([]*proc, 0, len(l.all))
	for p := range l.all {
		procs = append(procs, p)
	}
	l.idle, l.leases = nil, map[string]*held{}
	l.mu.Unlock()
	// The supervisor kills every client and every descendant of one, and
	// exits once it has reaped them all.
	err := l.sup.close()
	for _, p := range procs {
		<-p.exited
	}
	l.spawns.Wait()
	if err != nil {
		return fmt.Errorf("%s: close: %w", l.name, err)
	}
	return nil
}

// get returns an idle process, or starts one (see startCtx).
func (l *ProcessLock) get(ctx context.Context) (*proc, error) {
	l.mu.Lock()
	for len(l.idle) > 0 {
		p := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		if !p.gone.Load() {
			l.mu.Unlock()
			return p, nil
		}
	}
	l.mu.Unlock()
	return l.startCtx(ctx)
}

// put returns p to the pool, unless it is gone; after Close it kills it.
func (l *ProcessLock) put(p *proc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		p.kill()
	case !p.gone.Load():
		l.idle = append(l.idle, p)
	}
}

// startCtx starts a process (see start) and waits for it until ctx
// ends; a process still starting then joins the pool once it is up, so
// that a slow start is paid once, not by every call.
func (l *ProcessLock) startCtx(ctx context.Context) (*proc, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	l.spawns.Add(1) // under mu, before Close's Wait
	l.mu.Unlock()
	type started struct {
		p   *proc
		err error
	}
	ch := make(chan started, 1)
	go func() {
		defer l.spawns.Done()
		p, err := l.start()
		ch <- started{p, err}
	}()
	select {
	case s := <-ch:
		return s.p, s.err
	case <-ctx.Done():
		go func() {
			if s := <-ch; s.err == nil {
				l.put(s.p)
			}
		}()
		return nil, fmt.Errorf("start a client process: %w", ctx.Err())
	}
}

// start starts one client process and completes its hello, bounded by
// the start timeout.
func (l *ProcessLock) start() (*proc, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	n := l.started
	l.started++
	l.mu.Unlock()

	// The pipes are made here and the client's ends handed to the
	// supervisor, which starts it (supervise.go).
	path, err := exec.LookPath(l.argv[0])
	if err != nil {
		return nil, fmt.Errorf("start client %q: %w", strings.Join(l.argv, " "), err)
	}
	pipes, err := newClientPipes(l.opts.script != nil)
	if err != nil {
		return nil, err
	}
	p := newProc(l.sup)
	p.n, p.event = n, l.event
	// What the client writes on stderr (a logged hello included) is
	// quoted into errors, the history and torture's stderr: the run's
	// secrets are masked there.
	p.stderr.secrets = secretsOf(l.cfg)
	p.stdin, p.stdout = pipes.stdin, pipes.stdout
	if err := l.spawn(p, path, pipes); err != nil {
		return nil, err
	}
	return l.greet(p)
}

// clientPipes are the pipes of one client process: the ends this
// process keeps (the client's stdin to write, its stdout and stderr to
// read, and the script's write end when the lock has a script) and
// theirs, the ends the client gets as its descriptors 0, 1, 2 (and 3,
// the script).
type clientPipes struct {
	stdin, stdout, stderr, script *os.File
	theirs                        []*os.File
}

// newClientPipes makes the pipes of one client, the script's when script
// is set; on an error it leaves none open.
func newClientPipes(script bool) (*clientPipes, error) {
	var ends []*os.File // the read and write end of stdin, stdout, stderr, script
	n := 3
	if script {
		n++
	}
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(ends...)
			return nil, fmt.Errorf("start client: %w", err)
		}
		ends = append(ends, r, w)
	}
	c := &clientPipes{stdin: ends[1], stdout: ends[2], stderr: ends[4], theirs: []*os.File{ends[0], ends[3], ends[5]}}
	if script {
		c.script, c.theirs = ends[7], append(c.theirs, ends[6])
	}
	return c, nil
}

// closeOurs closes the ends this process keeps.
func (c *clientPipes) closeOurs() { closeFiles(c.stdin, c.stdout, c.stderr, c.script) }

// closeFiles closes every file of fs that is not nil.
func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// spawn has the supervisor start p, the program at path, on the pipes;
// then it writes the lock's script, if any, and reads p's output until it
// ends (proc.read). p is registered before it starts, under the lock
// that Close takes: a process Close does not see is never started (Close
// ends the supervisor, which then starts nothing). On an error no pipe
// is left open.
func (l *ProcessLock) spawn(p *proc, path string, pipes *clientPipes) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		pipes.closeOurs()
		closeFiles(pipes.theirs...)
		return ErrClosed
	}
	l.all[p] = struct{}{}
	l.mu.Unlock()
	err := l.sup.spawn(p, path, l.argv, clientEnv(l.opts.env), pipes.theirs)
	closeFiles(pipes.theirs...) // the client has its own
	if err != nil {
		l.forget(p)
		pipes.closeOurs()
		close(p.exited)
		return fmt.Errorf("start client %q: %w", strings.Join(l.argv, " "), err)
	}
	if script := pipes.script; script != nil {
		go func() {
			script.Write(l.opts.script) // a client that never reads it fails its hello
			script.Close()
		}()
	}
	go p.read(pipes.stderr, func() { l.forget(p) })
	return nil
}

// forget drops p from the processes Close kills.
func (l *ProcessLock) forget(p *proc) {
	l.mu.Lock()
	delete(l.all, p)
	l.mu.Unlock()
}

// greet completes p's hello within the start timeout; a process that
// fails it, refuses it, or issues no fencing tokens to a run that asks
// for them is killed.
func (l *ProcessLock) greet(p *proc) (*proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	r, _, err := p.exchange(ctx, l.hello(p.n), startTimeout)
	switch {
	case err != nil:
		p.kill()
		return nil, fmt.Errorf("hello: %w", err)
	case r.Result != resultOK:
		p.kill()
		return nil, fmt.Errorf("the client refused the hello: %s%s", r.Error, p.why())
	case l.cfg.Fencing && !r.Fencing:
		p.kill()
		return nil, fmt.Errorf("client %q issues no fencing tokens", r.Name)
	}
	p.info = r.ClientInfo
	return p, nil
}

// hello is the first request of process n: the run's configuration.
func (l *ProcessLock) hello(n int) clientRequest {
	c := l.cfg
	return clientRequest{
		Op:           "hello",
		Protocol:     ProtocolVersion,
		Client:       n,
		Addrs:        c.Addrs,
		Password:     c.Password,
		TTLMS:        ms(c.TTL),
		NodeTimeout:  ms(c.Timeout),
		Tries:        c.Tries,
		RetryDelayMS: ms(c.RetryDelay),
		Fencing:      c.Fencing,
		Seed:         c.Seed,
		Sentinels:    c.Sentinels,
		SentinelPass: c.SentinelPassword,
		MasterName:   c.MasterName,
		AddrMap:      c.AddrMap,
	}
}

// ExecSpec returns the Spec of the lock named ExecPrefix + command: a
// ProcessLock running command, split into words as a shell would (quotes
// and backslashes; no variables, pipes or redirections: wrap the command
// in `sh -c '… exec …'` for those). Such a lock may use every node of the
// run (MultiNode) but is given one unless asked for more (Nodes 1), and
// may be asked for fencing tokens: whether it issues them is the client's
// answer to the hello.
func ExecSpec(name string) (Spec, error) {
	command, ok := strings.CutPrefix(name, ExecPrefix)
	if !ok {
		return Spec{}, fmt.Errorf("%w: %q does not start with %q", ErrBadSpec, name, ExecPrefix)
	}
	argv, err := shlex.Split(command)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %v", ErrBadSpec, name, err)
	}
	if len(argv) == 0 {
		return Spec{}, fmt.Errorf("%w: %q: no command after %q", ErrBadSpec, name, ExecPrefix)
	}
	return Spec{
		Name:      name,
		Summary:   "client process speaking locks/clients/PROTOCOL.md: " + command,
		MultiNode: true,
		Nodes:     1,
		Fencing:   true,
		Language:  "any (exec)",
		Process:   true,
		New: func(cfg Config) (Lock, error) {
			return asLock(NewProcessLock(name, argv, cfg))
		},
	}, nil
}
