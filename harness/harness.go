package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// Progress is a snapshot of a running test, handed to WithProgress's fn.
type Progress struct {
	Elapsed  time.Duration
	Duration time.Duration
	Acquired int64 // successful acquires so far
	Attempts int64 // acquire calls completed so far
	Events   int   // history events written so far
}

// Summary is what Run reports besides the history file.
type Summary struct {
	Config      Config        `json:"config"`
	HistoryPath string        `json:"history"`
	Events      int           `json:"events"`
	Elapsed     time.Duration `json:"elapsed"`
	// Server is what the nodes ran, as report.Server joins them ("redis
	// 7.0.15", "etcd 3.4.23").
	Server string `json:"server"`
	// NodeVersions is the version each node reported, in node order.
	NodeVersions []string `json:"node_versions"`
	// Faults is how many steps the run's schedule holds (nemesis.Schedule).
	Faults      int  `json:"faults"`
	Interrupted bool `json:"interrupted"`
	// Stopped is set when a WithStop watcher ended the run early.
	Stopped bool `json:"stopped,omitempty"`
	// Health is how late the harness's timers fired (health.Report;
	// HealthThreshold).
	Health health.Report `json:"health"`
	// LockVersions is what a lock served by client processes says it runs on
	// (nil for a Go lock), every key under "client" (lockVersions).
	LockVersions map[string]string `json:"lock_versions,omitempty"`
}

// warmer is a lock that starts a client process per concurrent caller, and
// can start them ahead.
type warmer interface {
	Warm(ctx context.Context, callers int) error
}

// versioner is a lock that says what it runs on beyond this binary's modules.
type versioner interface {
	Versions() map[string]string
}

// lockVersions gives every key that does not begin with "client"
// locks.ClientVersionPrefix, so that no lock can put a version under the
// harness's own keys ("go", the module paths).
func lockVersions(v map[string]string) map[string]string {
	out := make(map[string]string, len(v))
	for k, s := range v {
		if !strings.HasPrefix(k, "client") {
			k = locks.ClientVersionPrefix + k
		}
		out[k] = s
	}
	return out
}

// Option configures Run and Plan.Run.
type Option func(*runOptions)

type runOptions struct {
	progress      func(Progress)
	progressEvery time.Duration
	stop          func(history.Event) bool // see WithStop
	log           io.Writer                // see WithLog
	view          func(nemesis.View)       // the tests' look at the view (export_test.go)
}

// WithLog writes to w, one line each, what the run does besides the test that
// takes long (building the docker backend's default image).
func WithLog(w io.Writer) Option {
	return func(o *runOptions) { o.log = w }
}

// WithProgress calls fn every interval while the test runs.
func WithProgress(interval time.Duration, fn func(Progress)) Option {
	return func(o *runOptions) { o.progress, o.progressEvery = fn, interval }
}

// WithStop calls fn with every event once it is in the history, from the
// goroutine that recorded it (so quick and concurrency-safe); once it returns
// true the run ends as at its Duration, Summary.Stopped set. Each client's
// events come in order, a cause before its effect (a release's invoke before
// the next holder's ok): for a watcher that ends a run at its first
// violation.
func WithStop(fn func(history.Event) bool) Option {
	return func(o *runOptions) { o.stop = fn }
}

// Run is NewPlan(cfg), then the plan's Run in cfg.Dir.
func Run(ctx context.Context, cfg Config, opts ...Option) (Summary, error) {
	p, err := NewPlan(cfg)
	if err != nil {
		return Summary{}, err
	}
	return p.Run(ctx, cfg.Dir, opts...)
}

// Run runs the plan in dir (created if missing): cluster, one lock per client
// group, history (streamed: checkable even if interrupted), clients and
// nemesis for Duration. When ctx is cancelled it stops the clients, heals the
// active fault, closes the history, stops the nodes and returns the summary,
// Interrupted set, with ctx's error. Every process it started is stopped
// before it returns.
func (p *Plan) Run(ctx context.Context, dir string, opts ...Option) (sum Summary, err error) {
	if dir == "" {
		return Summary{}, errors.New("harness: no run directory")
	}
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	cfg := p.cfg
	// Absolute once, here: every path handed to another process (node dirs, a
	// sentinel's conf, the clock shim's file, a bind mount) derives from it.
	if cfg.Dir, err = filepath.Abs(dir); err != nil {
		return Summary{}, fmt.Errorf("harness: run directory: %w", err)
	}
	sum = Summary{Config: cfg, HistoryPath: filepath.Join(cfg.Dir, "history.jsonl"), Faults: len(p.schedule.Steps)}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return sum, fmt.Errorf("harness: %w", err)
	}
	if err := p.schedule.Save(filepath.Join(cfg.Dir, "schedule.json")); err != nil {
		return sum, err
	}
	cl, err := cluster.Open(ctx, cluster.Spec(cfg.Cluster), p.clusterOptions(cfg.Dir, o)...)
	if err != nil {
		return sum, fmt.Errorf("harness: start nodes: %w", err)
	}
	defer func() {
		if cerr := cl.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("harness: stop nodes: %w", cerr)
		}
	}()
	// As report.Server joins them: the name alone when no version was read.
	sum.Server, sum.NodeVersions = strings.TrimSpace(cl.Server()+" "+cl.Version()), cl.Versions()
	probe, err := StartProbe(ctx, cfg.Cluster.Backend, filepath.Join(cfg.Dir, "probe"), o.log)
	if err != nil {
		return sum, err
	}
	if probe != nil {
		defer probe.Close()
	}
	// client-clock: the client processes start with the clock shim and an
	// offset file of their own.
	var clientClock nemesis.ClockSetter
	var clientEnv []string
	if p.needs.ClientClock {
		cc, err := cluster.OpenClientClock(filepath.Join(cfg.Dir, "client-clock.offset"))
		if err != nil {
			return sum, fmt.Errorf("harness: client clock: %w", err)
		}
		defer cc.Close()
		clientClock, clientEnv = cc, cc.Env()
	}
	lks, err := p.openLocks(ctx, cl, &sum, clientEnv)
	defer func() {
		for _, lk := range lks {
			lk.Close()
		}
	}()
	if err != nil {
		return sum, err
	}
	w, err := history.Create(sum.HistoryPath)
	if err != nil {
		return sum, err
	}
	defer func() {
		sum.Events = w.Len()
		if cerr := w.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	base := time.Now()
	mon := health.Start(0, HealthThreshold(cfg.TTL), base)
	if probe != nil {
		pn := probe.Node(0)
		mon.Probe(ProbeTarget, func(ctx context.Context) error { return pn.Ping(ctx) })
	}
	defer func() { sum.Health = mon.Stop() }()
	store := NewStore(cfg.Fencing)
	if cfg.Store == StoreWriteOnly {
		store = NewWriteOnlyStore()
	}
	v := newView(base)
	r := &run{cfg: cfg, rec: NewRecorder(base, w), store: store, stalls: &staller{locks: lks, view: v}, view: v, locks: lks, clientClock: clientClock}
	if o.view != nil {
		o.view(r.view)
	}
	sum, err = r.drive(ctx, p, cl, o, sum)
	// Again, with the targeted faults' decisions (what each struck, or why it
	// missed).
	if serr := p.schedule.Save(filepath.Join(cfg.Dir, "schedule.json")); err == nil {
		err = serr
	}
	return sum, err
}

// ProbeTarget says what a health probe of StartProbe's server calls.
const ProbeTarget = "a PING on a fresh connection to an untouched redis-server"

// StartProbe starts in dir the redis-server a health probe calls on a fresh
// connection each time: no fault touches it, so a slow round trip is the
// machine's (a starved CPU, loopback out of ports or conntrack slots).
// Process backend only (else nil).
func StartProbe(ctx context.Context, backend, dir string, log io.Writer) (*cluster.Cluster, error) {
	if backend != "" && backend != cluster.BackendProcess {
		return nil, nil
	}
	c, err := cluster.Start(ctx, 1, cluster.WithDir(dir), cluster.WithLog(log))
	if err != nil {
		return nil, fmt.Errorf("harness: start the health probe's node: %w", err)
	}
	return c, nil
}

// HealthThreshold is the lateness of the timers from which a stretch of a run
// with this TTL is unhealthy: one node call (TTL/10, locks.Config.Timeout's
// default), at least 20 ms.
func HealthThreshold(ttl time.Duration) time.Duration { return max(ttl/10, 20*time.Millisecond) }

// openLocks builds one lock per client group, each through the group's
// proxies (or the sentinels), so that a partition can cut groups apart. It
// returns the locks built so far also on an error, for the caller to close.
func (p *Plan) openLocks(ctx context.Context, cl *cluster.Cluster, sum *Summary, clientEnv []string) ([]locks.Lock, error) {
	cfg, groups := p.cfg, p.setup.Groups
	var lks []locks.Lock
	for g := range groups {
		lcfg := locks.Config{Addrs: cl.GroupAddrs(g), Password: cl.Password(), TTL: cfg.TTL, Fencing: cfg.Fencing, Seed: cfg.Seed + int64(g), Quorum: cfg.Quorum, WaitReplicas: cfg.WaitReplicas, ClientEnv: clientEnv,
			RetryDelay: cfg.RetryDelay, EqualRetry: cfg.RetryDelay > 0}
		if f := cl.Failover(); f != nil {
			lcfg.Addrs, lcfg.Sentinels, lcfg.MasterName, lcfg.AddrMap = nil, f.SentinelAddrs(), f.MasterName(), f.AddrMap()
			lcfg.SentinelPassword = f.SentinelPassword()
		}
		if rc := cl.RedisCluster(); rc != nil {
			lcfg.Cluster, lcfg.AddrMap = true, rc.GroupAddrMap(g)
		}
		lk, err := p.lock.Build(lcfg)
		if err != nil {
			return lks, fmt.Errorf("harness: %w", err)
		}
		lks = append(lks, lk)
		if w, ok := lk.(warmer); ok {
			// One client process per client of the group, started now rather
			// than in the first acquires.
			if err := w.Warm(ctx, (cfg.Clients-g+groups-1)/groups); err != nil {
				return lks, fmt.Errorf("harness: %w", err)
			}
		}
		if d, ok := lk.(versioner); ok && sum.LockVersions == nil {
			sum.LockVersions = lockVersions(d.Versions())
		}
	}
	return lks, nil
}

// run is one run under way: what its clients share.
type run struct {
	end    time.Time // Duration + RunGrace after the clients started: nothing of theirs outlasts it
	cfg    Config
	rec    *Recorder
	store  *Store
	stalls *staller
	view   *view        // the live holds, for the nemesis
	locks  []locks.Lock // one per client group; client i uses locks[i%len]
	// clientClock moves the client processes' clock; nil unless a kind needs
	// it.
	clientClock nemesis.ClockSetter

	acquired, attempts atomic.Int64
}

// RunGrace is how long the cycles under way when Duration ends may go on (a
// hold, then a release, each at most this long): the run ends within about
// twice it after Duration, whatever its TTL and holds. Every hold of the
// matrix's rows is under a second.
const RunGrace = 10 * time.Second

// drive runs the clients and the nemesis for Duration (or until a WithStop
// watcher or a client's error stops it, or ctx ends), and completes the
// summary.
func (r *run) drive(ctx context.Context, p *Plan, cl *cluster.Cluster, o runOptions, sum Summary) (Summary, error) {
	// The observers outlive every client and stop before the history closes;
	// an error of a connection to a node that went away says nothing of the
	// run.
	obs := r.observe(ctx, cl, runKeys(r.cfg.Keys), o.log)
	defer obs.stop(ctx)
	runCtx, stop := context.WithTimeout(ctx, r.cfg.Duration)
	defer stop()
	var stopped atomic.Bool
	if o.stop != nil {
		r.rec.observe = func(e history.Event) {
			if !stopped.Load() && o.stop(e) && stopped.CompareAndSwap(false, true) {
				stop()
			}
		}
	}
	if o.progress != nil && o.progressEvery > 0 {
		go r.report(runCtx, o)
	}
	var nemErr error
	nemDone := make(chan struct{})
	go func() {
		defer close(nemDone)
		nemErr = nemesis.Run(runCtx, p.schedule, &nemesis.Target{Cluster: cl, Clients: r.stalls, View: r.view, ClientClock: r.clientClock}, r.rec.base, r.rec)
	}()
	// Cycles under way finish within RunGrace; a longer hold or release (a
	// --hold beyond the run, a TTL of hours) is cut short.
	r.end = time.Now().Add(r.cfg.Duration + RunGrace)
	workCtx, cancelWork := context.WithDeadline(ctx, r.end)
	defer cancelWork()
	errs, failed := r.clients(workCtx, runCtx, stop, p.seeds)
	<-nemDone
	sum.Elapsed = time.Since(r.rec.base)
	if ctx.Err() != nil {
		sum.Interrupted = true
		return sum, ctx.Err()
	}
	sum.Stopped = stopped.Load()
	if nemErr != nil && !errors.Is(nemErr, context.DeadlineExceeded) && !((sum.Stopped || failed) && errors.Is(nemErr, context.Canceled)) {
		errs = append(errs, nemErr)
	}
	errs = append(errs, healthy(ctx, cl))
	return sum, errors.Join(errs...)
}

// clients runs one goroutine per client, each with its own random source,
// until all are done; a client that fails (an unwritable history, a lock that
// breaks its contract) stops the run, as the rest would test nothing.
func (r *run) clients(ctx, runCtx context.Context, stop context.CancelFunc, seeds []uint64) ([]error, bool) {
	keys := runKeys(r.cfg.Keys)
	errs := make([]error, r.cfg.Clients)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for id := range r.cfg.Clients {
		wg.Go(func() {
			c := &client{id: id, group: id % len(r.locks), rec: r.rec, lock: r.cfg.Lock, view: r.view}
			rng := rand.New(rand.NewPCG(seeds[id], uint64(id)))
			if errs[id] = c.loop(ctx, runCtx, r, keys, rng); errs[id] != nil {
				failed.Store(true)
				stop()
			}
		})
	}
	wg.Wait()
	return errs, failed.Load()
}

// runKeys returns the lock keys of a run of n keys: k0, k1, …
func runKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}

// report hands o.progress a snapshot every o.progressEvery until runCtx ends.
func (r *run) report(runCtx context.Context, o runOptions) {
	t := time.NewTicker(o.progressEvery)
	defer t.Stop()
	for {
		select {
		case <-runCtx.Done():
			return
		case <-t.C:
			o.progress(Progress{Elapsed: time.Since(r.rec.base), Duration: r.cfg.Duration,
				Acquired: r.acquired.Load(), Attempts: r.attempts.Load(), Events: r.rec.w.Len()})
		}
	}
}

// healthy checks, after the nemesis healed, that every node answers PING.
func healthy(ctx context.Context, cl *cluster.Cluster) error {
	var errs []error
	for _, n := range cl.Nodes() {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := n.Ping(pctx); err != nil {
			errs = append(errs, fmt.Errorf("harness: node %s unhealthy after the run: %w", n.Name(), err))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// loop is one client's life: acquire a random key, work (see work), release;
// after a failed acquire, back off a little. It returns only a history write
// error or a bad lease; lock errors are recorded. New cycles start while
// runCtx lasts; one under way finishes unless ctx is cancelled.
func (c *client) loop(ctx, runCtx context.Context, r *run, keys []string, rng *rand.Rand) error {
	cfg := r.cfg
	lk := r.locks[c.group]
	c.ctx = ctx
	defer c.unwatch() // a lease's loss notice is watched until its release
	for runCtx.Err() == nil {
		key := keys[c.id%len(keys)]
		if !cfg.KeyPerClient {
			key = keys[rng.IntN(len(keys))]
		}
		actx, cancel := context.WithTimeout(runCtx, cfg.AcquireTimeout)
		lease, err := c.acquire(actx, lk, key)
		cancel()
		r.attempts.Add(1)
		if err != nil {
			if errors.Is(err, history.ErrWrite) || errors.Is(err, ErrBadLease) {
				return err
			}
			pause := time.Duration(rng.Int64N(int64(cfg.TTL/20) + 1))
			if cfg.RetryDelay > 0 {
				pause = cfg.RetryDelay // in step with every other client
			}
			if wait.Sleep(runCtx, pause) != nil {
				return nil
			}
			continue
		}
		r.acquired.Add(1)
		if r.stalls.crash() {
			// client-crash: this client stops holding a lease it never
			// releases; a fresh one takes its place.
			c.unwatch()
			c.crashed(r.cfg.Clients)
			continue
		}
		if lease, err = c.work(ctx, runCtx, r, lk, lease); err != nil {
			return err
		}
		// A client whose process is stopped (client-stop) takes no step until
		// it runs again.
		if r.stalls.await(ctx, c.id) != nil {
			return nil
		}
		// Release even when the run is ending: the last holds end with a
		// release, not by expiry.
		deadline := time.Now().Add(cfg.AcquireTimeout)
		if last := r.end.Add(RunGrace); last.Before(deadline) {
			deadline = last
		}
		rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		err = c.release(rctx, lk, lease)
		cancel()
		if errors.Is(err, history.ErrWrite) {
			return err
		}
	}
	return nil
}
