package locks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// The client side of the line protocol (clients/PROTOCOL.md), so that a
// Go lock can run in a client process of its own (AsProcess) and be
// stopped whole.

// ClientCommand returns the command line that serves the registered lock
// name: this program as `PROG client --lock NAME`, which cmd/torture
// answers with Serve. A program with locks of its own answers it the same
// way, or sets ClientCommand.
var ClientCommand = func(name string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locks: the command that serves %s: %w", name, err)
	}
	return []string{exe, "client", "--lock", name}, nil
}

// probed holds, per client command line, what probeClient found.
var probed sync.Map // string → probeResult

type probeResult struct{ err error }

// probeClient runs argv, which serves the lock name, once per process
// with no input: one that serves reads it to the end and exits 0. One
// that does not (a gate program whose main does not hand the command on)
// would start no client in any run: a set-up error, named before any run
// starts. A test binary that is its own client command is not probed (it
// would run its tests again; the tests that start it serve).
func probeClient(name string, argv []string) error {
	if exe, err := os.Executable(); err == nil && argv[0] == exe && testing.Testing() {
		return nil
	}
	key := strings.Join(argv, "\x00")
	if r, ok := probed.Load(key); ok {
		return r.(probeResult).err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if first != "" {
			err = fmt.Errorf("%w: %s", err, first)
		}
		err = fmt.Errorf("locks: %s in client processes: %s does not answer `client --lock %s` (%v): a program that registers its own lock serves it there — gate.Main does, a main of your own calls gate.Client (docs/gate.md)",
			name, argv[0], name, err)
	}
	probed.Store(key, probeResult{err})
	return err
}

// probeTimeout bounds probeClient; a server exits once its input ends.
const probeTimeout = 20 * time.Second

// AsProcess returns the Spec of s served by client processes of their
// own (ClientCommand, through ProcessLock), so that a whole client can be
// stopped (the client-stop fault). s keeps its name, promises and
// language. A process lock already, or one not registered (Serve looks
// it up by name), is refused.
func AsProcess(s Spec) (Spec, error) {
	if s.Process {
		return Spec{}, fmt.Errorf("locks: %s runs in client processes already", s.Name)
	}
	if _, err := Lookup(s.Name); err != nil || strings.HasPrefix(s.Name, ExecPrefix) {
		return Spec{}, fmt.Errorf("locks: %s is not a registered lock a client process can serve", s.Name)
	}
	argv, err := ClientCommand(s.Name)
	if err != nil {
		return Spec{}, err
	}
	p := s
	p.Process = true
	p.Summary = s.Summary + "; in client processes of its own"
	p.Check = func() error {
		if s.Check != nil {
			if err := s.Check(); err != nil {
				return err
			}
		}
		return probeClient(s.Name, argv)
	}
	p.New = func(cfg Config) (Lock, error) {
		return asLock(NewProcessLock(s.Name, argv, cfg))
	}
	return p, nil
}

// Serve speaks the client side of the line protocol on r and w for the
// registered Go lock name, built from the hello (a process lock is
// refused). Each request calls it with the time the harness gave, less a
// margin for the reply, and the hello's client as caller (WithCaller). A
// Lease.Lost notice becomes a "lost" event unless released first;
// evidence is reported when the lock reports it. Serve returns nil when r
// ends, else the first read or write error or a refused hello's reason,
// and closes the lock first (held leases are left to their TTL).
func Serve(ctx context.Context, name string, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{name: name, out: bufio.NewWriter(w), leases: map[string]*served{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var watchers sync.WaitGroup
	defer watchers.Wait()
	defer func() {
		if s.lock != nil {
			s.lock.Close()
		}
	}()
	defer cancel() // before Wait: the watchers return
	for sc.Scan() {
		var req clientRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("serve %s: a request that is not JSON: %w", name, err)
		}
		if s.lock == nil && req.Op != "hello" {
			return fmt.Errorf("serve %s: %s before the hello", name, req.Op)
		}
		rep, err := s.handle(ctx, req, &watchers)
		if werr := s.write(rep); werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("serve %s: %w", name, err)
	}
	return nil
}

// server is Serve's state.
type server struct {
	name   string
	lock   Lock
	cfg    Config
	client int
	nodes  bool // the lock reports per-node evidence

	mu     sync.Mutex // guards out and leases
	out    *bufio.Writer
	leases map[string]*served
}

// served is a lease this process granted.
type served struct {
	lease    Lease
	released bool // under server.mu: its notice is no longer reported
}

// write writes one line and flushes it.
func (s *server) write(r clientReply) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write(b)
	s.out.WriteByte('\n')
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("serve %s: write: %w", s.name, err)
	}
	return nil
}

// handle answers one request; an error ends Serve after the reply.
func (s *server) handle(ctx context.Context, req clientRequest, watchers *sync.WaitGroup) (clientReply, error) {
	rep := clientReply{ID: req.ID}
	if req.Op == "hello" {
		return s.hello(req)
	}
	if req.Op == "ping" {
		rep.Result = resultOK
		return rep, nil
	}
	// A tenth of the harness's wait (at most 50 ms) is kept for the reply.
	wait := time.Duration(req.TimeoutMS * float64(time.Millisecond))
	if wait <= 0 {
		wait = 10 * time.Second // a harness that sent no timeout_ms
	}
	cctx, cancel := context.WithTimeout(ctx, wait-min(wait/10, 50*time.Millisecond))
	defer cancel()
	var ev *Evidence
	if s.nodes {
		ev = &Evidence{}
		cctx = WithEvidence(cctx, ev)
	}
	start := time.Now()
	var err error
	switch req.Op {
	case "acquire":
		var lease Lease
		lease, err = s.lock.Acquire(WithCaller(cctx, s.client), req.Key)
		if err == nil {
			s.granted(ctx, lease, watchers)
			rep.Token, rep.Fence = lease.Token, lease.Fence
			setValidity(&rep, lease, start)
		}
	case "release":
		err = s.lock.Release(cctx, s.lease(req.Key, req.Token, true))
		if err == nil || errors.Is(err, ErrNotHeld) {
			s.mu.Lock()
			delete(s.leases, req.Token)
			s.mu.Unlock()
		}
	case "extend":
		var lease Lease
		lease, err = s.lock.Extend(cctx, s.lease(req.Key, req.Token, false))
		if err == nil {
			s.mu.Lock()
			if sv := s.leases[req.Token]; sv != nil {
				sv.lease = lease
			}
			s.mu.Unlock()
			setValidity(&rep, lease, start)
		}
	default:
		rep.Result, rep.Error = "error", fmt.Sprintf("unknown op %q", req.Op)
		return rep, fmt.Errorf("serve %s: unknown op %q", s.name, req.Op)
	}
	switch {
	case err == nil:
		rep.Result = resultOK
	case errors.Is(err, ErrNotAcquired):
		rep.Result, rep.Error = resultNotAcquired, err.Error()
	case errors.Is(err, ErrNotHeld):
		rep.Result, rep.Error = resultNotHeld, err.Error()
	default:
		rep.Result, rep.Error = "unknown", err.Error()
	}
	if ev != nil {
		if n := ev.Nodes(); n.Reported() {
			rep.Nodes = &clientNodes{Attempt: n.Attempt, Granted: n.Granted, Refused: n.Refused, Silent: n.Silent, Unlocked: n.Unlocked}
		}
	}
	return rep, nil
}

// hello builds the lock from the hello and says what it is.
func (s *server) hello(req clientRequest) (clientReply, error) {
	rep := clientReply{ID: req.ID}
	refuse := func(err error) (clientReply, error) {
		rep.Result, rep.Error = "error", err.Error()
		return rep, err
	}
	if s.lock != nil {
		return refuse(errors.New("a second hello"))
	}
	spec, err := Lookup(s.name)
	switch {
	case err != nil:
		return refuse(err)
	case spec.Process:
		return refuse(fmt.Errorf("%s runs in client processes of its own; only a Go lock is served", s.name))
	}
	dur := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	s.cfg = Config{
		Addrs: req.Addrs, Password: req.Password, TTL: dur(req.TTLMS), Fencing: req.Fencing, Timeout: dur(req.NodeTimeout),
		Tries: req.Tries, RetryDelay: dur(req.RetryDelayMS), Seed: req.Seed + int64(req.Client),
		Sentinels: req.Sentinels, SentinelPassword: req.SentinelPass, MasterName: req.MasterName, AddrMap: req.AddrMap,
	}
	s.client = req.Client
	if s.lock, err = spec.Build(s.cfg); err != nil {
		return refuse(err)
	}
	if r, ok := s.lock.(NodeReporter); ok && r.ReportsNodes() {
		s.nodes = true
	}
	rep.Result = resultOK
	rep.Protocol, rep.Name, rep.Language = ProtocolVersion, s.name, "Go "+strings.TrimPrefix(runtime.Version(), "go")
	rep.Versions = moduleVersions()
	rep.Fencing, rep.ReportsNodes, rep.Promises = req.Fencing && spec.Fencing, s.nodes, spec.Promises
	return rep, nil
}

// moduleVersions lists the Redis clients and lock libraries built in.
func moduleVersions() map[string]string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, m := range bi.Deps {
		if strings.Contains(m.Path, "redis") || strings.Contains(m.Path, "redsync") || strings.Contains(m.Path, "rueidis") {
			out[m.Path] = m.Version
			if m.Replace != nil && m.Replace.Version != "" { // pinned by a replace (bugs/)
				out[m.Path] = m.Replace.Version
			}
		}
	}
	return out
}

// setValidity sets the reply's validity from lease, counted from start
// (before the first request to Redis); until_release for none.
func setValidity(rep *clientReply, lease Lease, start time.Time) {
	v := lease.Validity.Sub(start)
	if v >= UntilRelease/2 {
		rep.UntilRelease = true
		return
	}
	vms := math.Max(float64(v)/float64(time.Millisecond), 0)
	rep.ValidityMS = &vms
}

// lease returns the lease granted with token, else (granted by a process
// now gone) one of key and token alone; release stops its notice.
func (s *server) lease(key, token string, release bool) Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := s.leases[token]
	if sv == nil {
		return Lease{Key: key, Token: token, Validity: time.Now().Add(UntilRelease)}
	}
	if release {
		sv.released = true
	}
	return sv.lease
}

// granted keeps lease and reports its notice, if it comes before the
// release, as a "lost" event.
func (s *server) granted(ctx context.Context, lease Lease, watchers *sync.WaitGroup) {
	sv := &served{lease: lease}
	s.mu.Lock()
	s.leases[lease.Token] = sv
	s.mu.Unlock()
	if lease.Lost == nil {
		return
	}
	watchers.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-lease.Lost.Done():
		}
		s.mu.Lock()
		released := sv.released
		s.mu.Unlock()
		if released {
			return
		}
		why := "lost"
		if err := lease.Lost.Err(); err != nil {
			why = err.Error()
		}
		_ = s.write(clientReply{Event: eventLost, Key: lease.Key, Token: lease.Token, Error: why}) // a broken pipe ends Serve too
	})
}
