package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// Config is one torture test: a lock × keys × clients × duration × TTL ×
// hold time × seed.
type Config struct {
	// Lock is the registry name of the lock under test (see locks.Names).
	Lock string `json:"lock"`
	// Nodes is the number of Redis nodes. Default: 5 for a multi-node
	// lock, 1 otherwise; a single-node lock refuses more than one. At
	// most MaxNodes on the backends that start their nodes.
	Nodes int `json:"nodes"`
	// Clients is the number of concurrent clients. Default 10; at most
	// MaxClients.
	Clients int `json:"clients"`
	// Keys is the number of lock keys the clients contend for. Default 2.
	Keys int `json:"keys"`
	// Duration is how long clients keep starting new cycles. Default 10s.
	Duration time.Duration `json:"duration"`
	// TTL is the lock's time to live. Default 1s.
	TTL time.Duration `json:"ttl"`
	// Hold is how long a client stays inside its critical section.
	// Default 10ms; see NoHold for none. A Hold longer than the TTL is
	// allowed: a correct lock then lets no section write (the resource
	// verdict is unknown), and a lock that over-reports its validity is
	// caught at once.
	Hold time.Duration `json:"hold"`
	// NoHold makes Hold 0: a client leaves its critical section as soon
	// as it has read and written. For throughput measurements; the
	// default is false.
	NoHold bool `json:"no_hold,omitempty"`
	// KeyPerClient gives client i the key "k<i>" for all its cycles, so
	// no two clients contend (Keys is then Clients). For throughput
	// measurements; the default is false: each cycle draws one of Keys
	// keys from the seed.
	KeyPerClient bool `json:"key_per_client,omitempty"`
	// Seed feeds the one random source of the run. Default 1.
	Seed int64 `json:"seed"`
	// Fencing makes the lock issue fencing tokens and the store check them.
	Fencing bool `json:"fencing"`
	// AcquireTimeout bounds the wait of one acquire call. Default TTL.
	AcquireTimeout time.Duration `json:"acquire_timeout"`
	// Nemesis lists the fault kinds to inject (see nemesis.Kinds); none
	// by default. A run with faults whose schedule holds no fault (a
	// duration too short for one) is refused: it would test nothing.
	Nemesis []string `json:"nemesis,omitempty"`
	// NemesisInterval is the quiet time between faults and the least time
	// each fault stays active. Default 2s.
	NemesisInterval time.Duration `json:"nemesis_interval,omitempty"`
	// RestartDelay, when set, is the delay of every delayed restart a kill
	// fault draws. Default 1.5×TTL.
	RestartDelay time.Duration `json:"restart_delay,omitempty"`
	// Restart is how kill faults restart nodes: "mixed" (drawn from the
	// seed; the default), "immediate" or "delayed".
	Restart string `json:"restart,omitempty"`
	// Persistence runs the nodes with appendfsync always, so a killed node
	// keeps its locks.
	Persistence bool `json:"persistence,omitempty"`
	// Topology is "masters" (independent nodes; the default) or
	// "failover": a primary, an asynchronous replica and three sentinels,
	// for single-instance locks, which then find the primary through the
	// sentinels (process or docker backend).
	Topology string `json:"topology,omitempty"`
	// Replay is a schedule.json to replay instead of drawing faults from
	// the seed. The schedule says which kinds it holds: WithDefaults sets
	// Nemesis to them (a Nemesis given must name the same kinds) and
	// refuses a schedule with no step, with a step the run does not have
	// the nodes, client groups or parameters for, or with a step that
	// ends after Duration.
	Replay string `json:"replay,omitempty"`
	// Backend runs the nodes: "process" (redis-server processes on this
	// host; the default), "docker" (one container per node, from Image)
	// or "external" (nodes someone else runs, at External; no kill,
	// pause or clock faults, and network faults only through Toxiproxy).
	Backend string `json:"backend"`
	// Image is the docker backend's image. Default cluster.DefaultImage,
	// which make redis-image builds.
	Image string `json:"image,omitempty"`
	// External lists the external backend's nodes, host:port each, in
	// node order; Nodes defaults to their number. Only these addresses
	// and Toxiproxy are ever contacted.
	External []string `json:"external,omitempty"`
	// Toxiproxy is the URL of the HTTP API of a toxiproxy server that the
	// external backend's clients reach the nodes through (e.g.
	// http://10.0.0.5:8474); none by default, and then no network fault.
	Toxiproxy string `json:"toxiproxy,omitempty"`
	// Password is the external nodes' password (requirepass); for the
	// other backends, the one they give their nodes instead of a random
	// one. Never on a command line; written only to the nodes' own
	// redis.conf (mode 0600, in a folder of mode 0700), and for the
	// external backend not at all.
	Password string `json:"-"`
	// Dir is the run directory: history.jsonl is written there and the
	// nodes' logs under nodes/. Required.
	Dir string `json:"-"`
}

// WithDefaults returns c with every zero field set to its default, or an
// error naming the first invalid field. It also refuses what this machine
// cannot run (see MaxNodes, MaxClients; the file descriptors the run
// needs) and a run with faults whose schedule would inject none (see
// Nemesis, Replay); the schedule is drawn, or loaded, as Run will.
func (c Config) WithDefaults() (Config, error) {
	spec, err := locks.Lookup(c.Lock)
	if err != nil {
		return c, err
	}
	if c.Topology == "" {
		c.Topology = "masters"
	}
	if c.Backend == "" {
		c.Backend = cluster.BackendProcess
	}
	if err := c.checkBackend(); err != nil {
		return c, err
	}
	switch c.Topology {
	case "masters":
	case "failover":
		if spec.MultiNode {
			return c, fmt.Errorf("harness: %s needs independent masters; topology failover is for single-instance locks", c.Lock)
		}
		if c.Nodes != 0 && c.Nodes != 2 {
			return c, fmt.Errorf("harness: topology failover has 2 data nodes (a primary and a replica), not %d", c.Nodes)
		}
		c.Nodes = 2
	default:
		return c, fmt.Errorf("harness: unknown topology %q (want masters or failover)", c.Topology)
	}
	if c.Nodes == 0 {
		c.Nodes = spec.DefaultNodes()
	}
	if c.Clients == 0 {
		c.Clients = 10
	}
	if c.KeyPerClient {
		c.Keys = c.Clients
	}
	if c.Keys == 0 {
		c.Keys = 2
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.TTL == 0 {
		c.TTL = time.Second
	}
	if c.NoHold {
		c.Hold = 0
	} else if c.Hold == 0 {
		c.Hold = 10 * time.Millisecond
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = c.TTL
	}
	switch c.Restart {
	case "":
		c.Restart = nemesis.RestartMixed
	case nemesis.RestartMixed, nemesis.RestartImmediate, nemesis.RestartDelayed:
	default:
		return c, fmt.Errorf("harness: unknown restart mode %q (want mixed, immediate or delayed)", c.Restart)
	}
	if c.NemesisInterval == 0 {
		c.NemesisInterval = 2 * time.Second
	}
	switch {
	case c.Nodes < 1:
		return c, fmt.Errorf("harness: nodes must be at least 1, got %d", c.Nodes)
	case !spec.MultiNode && c.Nodes != 1 && c.Topology == "masters":
		return c, fmt.Errorf("harness: %s is a single-instance lock; it takes 1 node, not %d", c.Lock, c.Nodes)
	case c.Clients < 1:
		return c, fmt.Errorf("harness: clients must be at least 1, got %d", c.Clients)
	case c.Keys < 1:
		return c, fmt.Errorf("harness: keys must be at least 1, got %d", c.Keys)
	case c.Duration < 0 || c.TTL < 0 || c.Hold < 0 || c.AcquireTimeout < 0 || c.NemesisInterval < 0 || c.RestartDelay < 0:
		return c, errors.New("harness: durations must not be negative")
	case c.Fencing && !spec.Fencing:
		return c, fmt.Errorf("harness: %s issues no fencing tokens", c.Lock)
	case c.Dir == "":
		return c, errors.New("harness: no run directory")
	}
	if c.Replay != "" {
		// The schedule says which kinds it holds; the run is set up for
		// them (client groups, the clock shim) before its steps are
		// checked against that setup.
		kinds, err := nemesis.ScheduleKinds(c.Replay)
		if err != nil {
			return c, fmt.Errorf("harness: replay: %w", err)
		}
		if len(c.Nemesis) > 0 && !sameKinds(c.Nemesis, kinds) {
			return c, fmt.Errorf("harness: nemesis %s differs from the kinds of the replayed schedule (%s); the schedule says which kinds it holds", strings.Join(c.Nemesis, ","), strings.Join(kinds, ","))
		}
		c.Nemesis = kinds
	}
	setup, _ := c.setup(spec)
	if err := c.checkLimits(setup.Groups); err != nil {
		return c, err
	}
	if _, err := nemesis.Check(c.Nemesis, setup); err != nil {
		return c, err
	}
	if len(c.Nemesis) > 0 {
		// Drawn (or loaded) as Run will, so that a schedule without a
		// fault is refused before anything starts.
		sc, err := schedule(newRand(c.Seed), c, setup)
		if err != nil {
			return c, err
		}
		if err := c.checkSchedule(sc); err != nil {
			return c, err
		}
	}
	return c, nil
}

// sameKinds reports whether a and b name the same kinds, in any order.
func sameKinds(a, b []string) bool {
	for _, k := range a {
		if !slices.Contains(b, k) {
			return false
		}
	}
	for _, k := range b {
		if !slices.Contains(a, k) {
			return false
		}
	}
	return true
}

// checkSchedule refuses a schedule of a run with faults that injects none,
// or that has a step the run would end before: a fault that does nothing
// is not a fault test.
func (c Config) checkSchedule(sc nemesis.Schedule) error {
	if len(sc.Steps) == 0 {
		if c.Replay != "" {
			return fmt.Errorf("harness: replay %s: the schedule has no step; a run without a fault is not a fault test (leave out the replay for a fault-free run)", c.Replay)
		}
		return fmt.Errorf("harness: nemesis %s: no fault fits in the %s run (each comes after %s of quiet and stays at least as long, some kinds longer); a run without a fault is not a fault test: lengthen the duration or shorten the nemesis interval",
			strings.Join(c.Nemesis, ","), c.Duration, c.NemesisInterval)
	}
	for i, st := range sc.Steps {
		if end := time.Duration(st.At + st.For); end > c.Duration {
			return fmt.Errorf("harness: replay %s: step %d (%s) ends at %s, after the %s run: lengthen the duration", c.Replay, i, st.Kind, end, c.Duration)
		}
	}
	return nil
}

// newRand returns the one random source of a run: it draws the fault
// schedule, then one seed per client.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x6c6f636b)) }

// checkBackend checks the backend's own fields, sets Nodes to the number
// of external nodes if it is 0, and Image to its default.
func (c *Config) checkBackend() error {
	switch c.Backend {
	case cluster.BackendProcess, cluster.BackendDocker, cluster.BackendExternal:
	default:
		return fmt.Errorf("harness: unknown backend %q (want process, docker or external)", c.Backend)
	}
	switch {
	case c.Image != "" && c.Backend != cluster.BackendDocker:
		return errors.New("harness: an image is for the docker backend")
	case (len(c.External) > 0 || c.Toxiproxy != "") && c.Backend != cluster.BackendExternal:
		return errors.New("harness: external nodes and a toxiproxy server are for the external backend")
	case c.Backend == cluster.BackendExternal && c.Topology == "failover":
		return errors.New("harness: topology failover needs nodes and sentinels the run starts, not the external backend's")
	case c.Backend == cluster.BackendDocker && c.Image == "":
		c.Image = cluster.DefaultImage
	case c.Backend != cluster.BackendExternal:
		return nil
	case len(c.External) == 0:
		return errors.New("harness: the external backend needs its nodes, host:port each")
	case c.Persistence:
		return errors.New("harness: persistence is set by whoever runs the external nodes, not by the run")
	case c.Nodes == 0:
		c.Nodes = len(c.External)
	case c.Nodes != len(c.External):
		return fmt.Errorf("harness: %d nodes, but %d external addresses", c.Nodes, len(c.External))
	}
	return nil
}

// setup describes the run to the nemesis, and needs what its kinds need
// of the cluster (see nemesis.NeedsOf): client groups, the clock shim.
func (c Config) setup(spec locks.Spec) (nemesis.Setup, nemesis.Needs) {
	var ks []nemesis.Kind
	for _, name := range c.Nemesis {
		if k, err := nemesis.Lookup(name); err == nil { // an unknown name is refused by nemesis.Check
			ks = append(ks, k)
		}
	}
	needs := nemesis.NeedsOf(ks)
	s := nemesis.Setup{
		Lock: c.Lock, MultiNode: spec.MultiNode, Nodes: c.Nodes, Groups: max(1, needs.Groups),
		TTL: c.TTL, RestartDelay: c.RestartDelay, Restart: c.Restart, Topology: c.Topology,
		Persistent: c.Persistence, Abilities: c.clusterSpec().Abilities(),
	}
	return s, needs
}

// clusterSpec is the cluster of the run.
func (c Config) clusterSpec() cluster.Spec {
	return cluster.Spec{Nodes: c.Nodes, Backend: c.Backend, Image: c.Image, External: c.External,
		Toxiproxy: c.Toxiproxy, Topology: c.Topology, Persistence: c.Persistence, Password: c.Password}
}

// Progress is a snapshot of a running test, handed to Options.Progress.
type Progress struct {
	Elapsed  time.Duration
	Duration time.Duration
	Acquired int64 // successful acquires so far
	Attempts int64 // acquire calls completed so far
	Events   int   // history events written so far
}

// Summary is what Run reports besides the history file.
type Summary struct {
	Config       Config        `json:"config"`
	HistoryPath  string        `json:"history"`
	Events       int           `json:"events"`
	Elapsed      time.Duration `json:"elapsed"`
	RedisVersion string        `json:"redis_version"`
	// NodeVersions is the redis_version each node reported, in node order.
	NodeVersions []string `json:"node_versions"`
	Faults       int      `json:"faults"`
	Interrupted  bool     `json:"interrupted"`
	// Stopped is set when a WithStop watcher ended the run early.
	Stopped bool `json:"stopped,omitempty"`
	// LockVersions is what a lock served by client processes says it
	// runs on (the client, its language, its libraries); nil for a Go
	// lock, whose modules report.Versions lists.
	LockVersions map[string]string `json:"lock_versions,omitempty"`
}

// warmer is a lock that starts something per concurrent caller (the
// process adapter: one client process each) and can start it ahead.
type warmer interface {
	Warm(ctx context.Context, callers int) error
}

// versioner is a lock that can say what it runs on beyond this binary's
// modules (the process adapter: its client's self-description).
type versioner interface {
	Versions() map[string]string
}

// Option configures Run.
type Option func(*runOptions)

type runOptions struct {
	progress      func(Progress)
	progressEvery time.Duration
	stop          func(history.Event) bool // see WithStop
	log           io.Writer                // see WithLog
}

// WithLog writes to w, one line each, what the run does besides the
// test itself and that takes long enough to be worth saying (building
// the docker backend's default image). By default nothing is written.
func WithLog(w io.Writer) Option {
	return func(o *runOptions) { o.log = w }
}

// CheckPrograms returns a one-line error naming the first program the run
// needs that is not on the PATH (redis-server for the process backend, gcc
// for the clock shim) and how to install it; see cluster.CheckPrograms. Run
// calls it first; a caller that prepares a run directory or a whole
// matrix can call it before that.
func (c Config) CheckPrograms() error {
	backend := c.Backend
	if backend == "" {
		backend = cluster.BackendProcess
	}
	_, needs := c.setup(locks.Spec{})
	if err := (cluster.Spec{Backend: backend}).CheckPrograms(needs.Cluster.Clock); err != nil {
		return err
	}
	// What the lock itself needs (the Python locks: an interpreter that
	// imports redis).
	if spec, err := locks.Lookup(c.Lock); err == nil && spec.Check != nil {
		return spec.Check()
	}
	return nil
}

// WithProgress calls fn every interval while the test runs. By default
// nothing is reported.
func WithProgress(interval time.Duration, fn func(Progress)) Option {
	return func(o *runOptions) { o.progress, o.progressEvery = fn, interval }
}

// Run runs one test and writes its history to cfg.Dir/history.jsonl and
// its fault schedule to cfg.Dir/schedule.json. The history is streamed as
// the test goes, so it can be checked even if Run is interrupted; when
// ctx is cancelled, Run stops the clients, heals the active fault, closes
// the history and stops the nodes, and returns the summary with
// Interrupted set and ctx's error. Every process Run started is stopped
// before it returns.
func Run(ctx context.Context, cfg Config, opts ...Option) (sum Summary, err error) {
	cfg, err = cfg.WithDefaults()
	if err != nil {
		return Summary{}, err
	}
	if err := cfg.CheckPrograms(); err != nil {
		return Summary{}, err
	}
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	// The run directory is made absolute once, here: every path that
	// crosses into another process (the nodes' dir and logs, a sentinel's
	// conf, the clock shim's file, a container's bind mount) derives
	// from it, and such a process resolves a relative path against its
	// own working directory, not ours.
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return Summary{}, fmt.Errorf("harness: run directory: %w", err)
	}
	spec, _ := locks.Lookup(cfg.Lock)
	setup, needs := cfg.setup(spec)
	sum = Summary{Config: cfg, HistoryPath: filepath.Join(cfg.Dir, "history.jsonl")}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return sum, fmt.Errorf("harness: %w", err)
	}

	// The one random source of the run: it draws the fault schedule,
	// then one seed per client.
	rng := newRand(cfg.Seed)
	sched, err := schedule(rng, cfg, setup)
	if err != nil {
		return sum, err
	}
	if len(cfg.Nemesis) > 0 {
		if err := cfg.checkSchedule(sched); err != nil {
			return sum, err
		}
	}
	sum.Faults = len(sched.Steps)
	if err := sched.Save(filepath.Join(cfg.Dir, "schedule.json")); err != nil {
		return sum, err
	}
	clientSeeds := make([]uint64, cfg.Clients)
	for i := range clientSeeds {
		clientSeeds[i] = rng.Uint64()
	}

	copts := []cluster.Option{cluster.WithDir(filepath.Join(cfg.Dir, "nodes")), cluster.WithProxyGroups(setup.Groups), cluster.WithLog(o.log)}
	if needs.Cluster.Clock {
		copts = append(copts, cluster.WithClockShim())
	}
	cl, err := cluster.Open(ctx, cfg.clusterSpec(), copts...)
	if err != nil {
		return sum, fmt.Errorf("harness: start nodes: %w", err)
	}
	defer func() {
		if cerr := cl.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("harness: stop nodes: %w", cerr)
		}
	}()
	sum.RedisVersion, sum.NodeVersions = cl.Version(), cl.Versions()

	// One lock per client group: a group reaches the nodes through its
	// own proxies, so a partition can cut groups apart.
	groupLocks := make([]locks.Lock, setup.Groups)
	for g := range groupLocks {
		lcfg := locks.Config{
			Addrs:    cl.GroupAddrs(g),
			Password: cl.Password(),
			TTL:      cfg.TTL,
			Fencing:  cfg.Fencing,
			Seed:     cfg.Seed + int64(g),
		}
		if f := cl.Failover(); f != nil {
			lcfg.Addrs, lcfg.Sentinels, lcfg.MasterName, lcfg.AddrMap = nil, f.SentinelAddrs(), f.MasterName(), f.AddrMap()
			lcfg.SentinelPassword = f.SentinelPassword()
		}
		lk, err := locks.New(cfg.Lock, lcfg)
		if err != nil {
			return sum, fmt.Errorf("harness: %w", err)
		}
		defer lk.Close()
		groupLocks[g] = lk
		if w, ok := lk.(warmer); ok {
			// One client process per client of the group, started now
			// rather than in the clients' first acquires.
			if err := w.Warm(ctx, (cfg.Clients-g+setup.Groups-1)/setup.Groups); err != nil {
				return sum, fmt.Errorf("harness: %w", err)
			}
		}
		if d, ok := lk.(versioner); ok && sum.LockVersions == nil {
			sum.LockVersions = d.Versions()
		}
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
	rec := NewRecorder(base, w)
	st := NewStore(cfg.Fencing)
	stalls := &staller{}
	var acquired, attempts atomic.Int64

	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var stopped atomic.Bool
	if o.stop != nil {
		rec.observe = func(e history.Event) {
			if !stopped.Load() && o.stop(e) && stopped.CompareAndSwap(false, true) {
				stop()
			}
		}
	}
	if o.progress != nil && o.progressEvery > 0 {
		go func() {
			t := time.NewTicker(o.progressEvery)
			defer t.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-t.C:
					o.progress(Progress{Elapsed: time.Since(base), Duration: cfg.Duration,
						Acquired: acquired.Load(), Attempts: attempts.Load(), Events: w.Len()})
				}
			}
		}()
	}

	var nemErr error
	nemDone := make(chan struct{})
	go func() {
		defer close(nemDone)
		t := nemesis.Target{Cluster: cl, Clients: stalls}
		nemErr = nemesis.Run(runCtx, sched, &t, base, rec)
	}()

	keys := make([]string, cfg.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	errs := make([]error, cfg.Clients)
	var failed atomic.Bool // a client stopped the run with an error
	var wg sync.WaitGroup
	for id := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{id: id, rec: rec, lock: cfg.Lock}
			crng := rand.New(rand.NewPCG(clientSeeds[id], uint64(id)))
			lk := groupLocks[id%len(groupLocks)]
			errs[id] = c.loop(ctx, runCtx, lk, st, keys, crng, cfg, stalls, &acquired, &attempts)
			if errs[id] != nil {
				// A history that cannot be written, or a lock that
				// breaks its contract: the rest of the run would
				// test nothing.
				failed.Store(true)
				stop()
			}
		}()
	}
	wg.Wait()
	<-nemDone
	sum.Elapsed = time.Since(base)
	if ctx.Err() != nil {
		sum.Interrupted = true
		return sum, ctx.Err()
	}
	sum.Stopped = stopped.Load()
	if nemErr != nil && !errors.Is(nemErr, context.DeadlineExceeded) && !((sum.Stopped || failed.Load()) && errors.Is(nemErr, context.Canceled)) {
		errs = append(errs, nemErr)
	}
	errs = append(errs, healthy(ctx, cl))
	return sum, errors.Join(errs...)
}

// schedule draws the run's faults from rng, or loads cfg.Replay.
func schedule(rng *rand.Rand, cfg Config, s nemesis.Setup) (nemesis.Schedule, error) {
	if cfg.Replay != "" {
		return nemesis.Load(cfg.Replay, s)
	}
	kinds, err := nemesis.Check(cfg.Nemesis, s)
	if err != nil {
		return nemesis.Schedule{}, err
	}
	return nemesis.Plan(rng, cfg.Seed, kinds, s, cfg.Duration, cfg.NemesisInterval)
}

// healthy checks, after the nemesis has healed, that every node is up and
// answers PING.
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

// loop is one client's life: acquire a random key (bounded wait), run
// the critical section, release; after a failed acquire, back off a
// little. It returns only a history write error; lock errors are recorded.
//
// New cycles start while runCtx lasts; a cycle under way finishes unless
// ctx (the caller's) is cancelled.
func (c *client) loop(ctx, runCtx context.Context, lk locks.Lock, st *Store, keys []string, rng *rand.Rand, cfg Config, stalls *staller, acquired, attempts *atomic.Int64) error {
	for runCtx.Err() == nil {
		var key string
		if cfg.KeyPerClient {
			key = keys[c.id]
		} else {
			key = keys[rng.IntN(len(keys))]
		}
		actx, cancel := context.WithTimeout(runCtx, cfg.AcquireTimeout)
		lease, err := c.acquire(actx, lk, key)
		cancel()
		attempts.Add(1)
		if err != nil {
			if errors.Is(err, history.ErrWrite) {
				return err
			}
			if errors.Is(err, ErrBadLease) {
				return err
			}
			if wait.Sleep(runCtx, time.Duration(rng.Int64N(int64(cfg.TTL/20)+1))) != nil {
				return nil
			}
			continue
		}
		acquired.Add(1)
		if err := c.section(ctx, st, lease, cfg.Hold, stalls); err != nil {
			return err
		}
		// Release even when the run is ending, so the last holds end
		// with a release rather than by expiry.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.AcquireTimeout)
		err = c.release(rctx, lk, lease)
		cancel()
		if errors.Is(err, history.ErrWrite) {
			return err
		}
	}
	return nil
}
