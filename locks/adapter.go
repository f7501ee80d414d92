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

// ProtocolVersion is the version of the line protocol
// (locks/clients/PROTOCOL.md) the hello carries. Version 2 adds the
// unprompted "lost" event; a version 1 client is one that sends none.
const ProtocolVersion = 2

// ExecPrefix starts the name of a lock served by a client process of the
// caller's choosing, e.g. `exec:python3 locks/clients/example/example_client.py`;
// Lookup and New accept it without Register ([ExecSpec]).
const ExecPrefix = "exec:"

// UntilRelease is how far ahead a lease that claims no deadline is valid
// (a client's "until_release", redis-py's Lock): a century. The checker
// then ends the hold at the release, so a holder that outlives the key's
// TTL overlaps the next one and is reported.
const UntilRelease = 100 * 365 * 24 * time.Hour

// Errors of ProcessLock.
var (
	// ErrClientGone: the client process exited or was killed; the
	// outcome is unknown.
	ErrClientGone = errors.New("locks: client process gone")
	// ErrProtocol: a reply that is not JSON, has another id, lacks a
	// token or a validity.
	ErrProtocol = errors.New("locks: client broke the protocol")
	ErrClosed   = errors.New("locks: lock closed")
)

// ClientInfo is what a client process says of itself in its hello's reply.
type ClientInfo struct {
	Name     string            `json:"name,omitempty"`     // e.g. "redis-py Lock"
	Language string            `json:"language,omitempty"` // e.g. "Python 3.11.2"
	Versions map[string]string `json:"versions,omitempty"` // e.g. {"redis-py": "4.3.4"}
	Fencing  bool              `json:"fencing,omitempty"`
	// ReportsNodes: the replies carry per-node evidence ("nodes").
	ReportsNodes bool      `json:"reports_nodes,omitempty"`
	Promises     *Promises `json:"promises,omitempty"` // nil: none declared
}

// ProcessLock is a Lock served by client processes that speak the line
// protocol of locks/clients/PROTOCOL.md on their standard input and
// output: how a lock written in any language is tortured.
//
// A client handles one request at a time, so the lock keeps a pool; the
// process of a granted lease keeps it until its release (release and
// extend go to it, which may keep state per lease): one process per
// torture client ([ProcessLock.Warm]). The password reaches a process in
// the hello only (LOCKTORTURE_PASSWORD is removed from its environment).
//
// The client supervisor (supervise.go) starts the processes, each in a
// process group of its own; Close, and the death of this process even by
// SIGKILL, end every process the clients started. A process that does
// not answer within the call's deadline (ctx's, else the default bound)
// or breaks the protocol is killed; its calls' outcomes are unknown, and
// the next call starts a fresh one.
//
// Validity. A client's validity_ms counts on its monotonic clock from
// just before its first request to Redis; the lock counts it from when it
// wrote the request to the pipe, earlier by the pipe's one-way delay
// (BENCHMARKS.md measures the round trip): a reported violation is one
// the client's own claim implies; one shorter than that delay can be
// missed.
//
// Evidence. A client that says "reports_nodes" carries in each reply the
// nodes that granted, refused or did not answer, which the lock reports
// to the call's [Evidence] (unlocked nodes as clean-ups of attempt 0).
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

var _ NodeReporter = (*ProcessLock)(nil)

// ReportsNodes implements [NodeReporter]: the hello's reports_nodes. A
// reply without "nodes" then reports nothing; one that names a node
// outside the run, or one twice, is a protocol error.
func (l *ProcessLock) ReportsNodes() bool { return l.info.ReportsNodes }

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

// startTimeout bounds a client's start until its hello's reply (an
// interpreter importing its libraries on a loaded machine).
const startTimeout = 20 * time.Second

// WithProcessEnv adds NAME=value entries to the clients' environment.
func WithProcessEnv(env ...string) ProcessOption {
	return func(o *processOptions) { o.env = append(o.env, env...) }
}

// WithCallTimeout bounds the wait for a reply when ctx has no deadline.
// Default Tries × (len(Addrs) × Timeout + RetryDelay) + Timeout, at least
// 1s: time for a client that tries every node in turn, every attempt.
func WithCallTimeout(d time.Duration) ProcessOption {
	return func(o *processOptions) { o.callTimeout = d }
}

func withScript(script []byte) ProcessOption {
	return func(o *processOptions) { o.script = script }
}

// NewProcessLock builds the lock called name served by processes running
// argv (argv[0] looked up in PATH). It completes one process's hello
// first, so that a command that cannot start, or a client that refuses
// the configuration, fails here, with the client's stderr in the error.
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

// Versions returns what the client says it runs on, for results.json:
// "client", "client language" and ClientVersionPrefix + each library.
// Every key begins with "client", so a client cannot overwrite the
// harness's own keys (a hello's {"go": "go9.9"} becomes "client:go").
func (l *ProcessLock) Versions() map[string]string {
	v := map[string]string{"client": l.info.Name, "client language": l.info.Language}
	for k, s := range l.info.Versions {
		v[ClientVersionPrefix+k] = s
	}
	return v
}

// ClientVersionPrefix begins the key of each library version a client
// reports (ProcessLock.Versions).
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

// Warm starts client processes in parallel until n are running.
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

// Ping pings an idle client process and returns the pipe's round trip
// plus the client's turn-around.
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
func (l *ProcessLock) Acquire(ctx context.Context, key string) (_ Lease, err error) {
	defer wrap(&err, l.name, "acquire", key)
	p, err := l.get(ctx)
	if err != nil {
		return Lease{}, err
	}
	r, sent, err := p.exchange(ctx, clientRequest{Op: "acquire", Key: key}, l.bound)
	if err != nil {
		return Lease{}, err
	}
	if err := l.report(ctx, r); err != nil {
		l.put(p)
		return Lease{}, err
	}
	if err := r.outcome(resultNotAcquired, ErrNotAcquired); err != nil {
		l.put(p)
		return Lease{}, err
	}
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
		return Lease{}, err
	}
	return lease, nil
}

// Release implements [Lock]. It goes to the process that acquired the
// lease; when that one is gone (or the lease is not this lock's), to any
// process, which answers from the key and the token alone, or says it
// cannot.
func (l *ProcessLock) Release(ctx context.Context, lease Lease) (err error) {
	defer wrap(&err, l.name, "release", lease.Key)
	p, err := l.owner(ctx, lease.Token, true)
	if err != nil {
		return err
	}
	r, _, err := p.exchange(ctx, clientRequest{Op: "release", Key: lease.Key, Token: lease.Token}, l.bound)
	if err != nil {
		return err
	}
	l.put(p)
	if err := l.report(ctx, r); err != nil {
		return err
	}
	return r.outcome(resultNotHeld, ErrNotHeld)
}

// Extend implements [Lock]. It goes where Release would. Whether a lease
// past its validity may still be extended is the client's business.
func (l *ProcessLock) Extend(ctx context.Context, lease Lease) (_ Lease, err error) {
	defer wrap(&err, l.name, "extend", lease.Key)
	p, err := l.owner(ctx, lease.Token, false)
	if err != nil {
		return Lease{}, err
	}
	r, sent, err := p.exchange(ctx, clientRequest{Op: "extend", Key: lease.Key, Token: lease.Token}, l.bound)
	if err != nil {
		return Lease{}, err
	}
	l.mu.Lock()
	owned := l.leases[lease.Token] != nil && l.leases[lease.Token].p == p
	l.mu.Unlock()
	if !owned {
		l.put(p)
	}
	if err := l.report(ctx, r); err != nil {
		return Lease{}, err
	}
	if err := r.outcome(resultNotHeld, ErrNotHeld); err != nil {
		return Lease{}, err
	}
	return l.lease(lease, r, sent, false)
}

// held is a lease a client granted: its process and its Lease.Lost.
type held struct {
	p    *proc
	lost *Notice
}

// event takes a client's event line: "lost" tells the notice of the held
// lease it names with the client's error. Others are ignored (a later
// protocol may add some), as is a token not held.
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

// ErrNoProcess: no live client process serves the lease, or none runs.
var ErrNoProcess = errors.New("locks: no live client process")

// StopLease sends SIGSTOP to the process group serving the lease token
// and returns its pid and the function that sends SIGCONT, once. A call
// to a stopped process gets no answer: its deadline kills it.
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

// StopProcess stops the pick-th live process (modulo their number, in
// start order), as StopLease does, and returns its lease's token or "".
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

// owner returns the live process that acquired token, else an idle or new
// one; release forgets the token. The caller puts the process back unless
// it still owns a lease.
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

// lease builds the lease of an ok reply to a request written at sent (an
// extend keeps the lease's token).
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

// maxValidityMS is the longest validity_ms a client may claim; beyond it
// a validity could pass time.Time's range and lose its monotonic reading.
var maxValidityMS = ms(UntilRelease)

// Close kills every client process and its descendants and waits until
// each is reaped; held leases are left to their TTL.
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

// startCtx starts a process and waits for it until ctx ends; one still
// starting then joins the pool, so a slow start is paid once.
func (l *ProcessLock) startCtx(ctx context.Context) (*proc, error) {
	type started struct {
		p   *proc
		err error
	}
	s, err := awaitOrLeave(ctx, "start a client process", &l.mu, &l.closed, &l.spawns, func() started {
		p, err := l.start()
		return started{p, err}
	}, func(s started) {
		if s.err == nil {
			l.put(s.p)
		}
	})
	if err != nil {
		return nil, err
	}
	return s.p, s.err
}

// awaitOrLeave runs f in a goroutine that wg tracks and waits for its
// result until ctx ends; a result that comes later goes to late instead.
// mu guards closed, once set Close waits on wg: nothing starts after.
func awaitOrLeave[T any](ctx context.Context, what string, mu *sync.Mutex, closed *bool, wg *sync.WaitGroup, f func() T, late func(T)) (t T, err error) {
	mu.Lock()
	if *closed {
		mu.Unlock()
		return t, ErrClosed
	}
	wg.Add(1) // under mu, before Close's Wait
	mu.Unlock()
	ch := make(chan T)
	go func() {
		defer wg.Done()
		r := f()
		select {
		case ch <- r:
		case <-ctx.Done():
			late(r)
		}
	}()
	select {
	case t = <-ch:
		return t, nil
	case <-ctx.Done():
		return t, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

func (l *ProcessLock) start() (*proc, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	n := l.started
	l.started++
	l.mu.Unlock()

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
	// Its stderr (a logged hello too) is quoted into errors and the
	// history: the run's secrets are masked.
	p.stderr.secrets = secretsOf(l.cfg)
	p.stdin, p.stdout = pipes.stdin, pipes.stdout
	if err := l.spawn(p, path, pipes); err != nil {
		return nil, err
	}
	return l.greet(p)
}

// clientPipes are one client's pipes: the ends this process keeps, and
// theirs, the client's descriptors 0, 1, 2 (and 3, the script).
type clientPipes struct {
	stdin, stdout, stderr, script *os.File
	theirs                        []*os.File
}

// newClientPipes makes one client's pipes; on an error none stays open.
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

func (c *clientPipes) closeOurs() { closeFiles(c.stdin, c.stdout, c.stderr, c.script) }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// spawn has the supervisor start p, the program at path, on the pipes,
// writes the script, if any, and reads p's output (proc.read). p is
// registered first, under Close's lock: a process Close does not see is
// never started (its supervisor is gone). On an error no pipe stays open.
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

func (l *ProcessLock) forget(p *proc) {
	l.mu.Lock()
	delete(l.all, p)
	l.mu.Unlock()
}

// greet completes p's hello; a process that fails or refuses it, or
// issues no fencing tokens to a run that asks for them, is killed.
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

// hello is process n's first request: the run's configuration.
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
// ProcessLock running command, split as a shell would (quotes and
// backslashes only: use `sh -c '… exec …'` for more). It may use every
// node (MultiNode) but gets one unless asked (Nodes 1), and may be asked
// for fencing tokens: the client's hello says whether it issues them.
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
