package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// Config is one torture test: a lock × keys × clients × duration × TTL ×
// hold time × seed.
type Config struct {
	// Lock is the registry name of the lock under test (see locks.Names).
	Lock string `json:"lock"`
	// Nodes is the number of Redis nodes. Default: 5 for a multi-node
	// lock, 1 otherwise; a single-node lock refuses more than one.
	Nodes int `json:"nodes"`
	// Clients is the number of concurrent clients. Default 10.
	Clients int `json:"clients"`
	// Keys is the number of lock keys the clients contend for. Default 2.
	Keys int `json:"keys"`
	// Duration is how long clients keep starting new cycles. Default 10s.
	Duration time.Duration `json:"duration"`
	// TTL is the lock's time to live. Default 1s.
	TTL time.Duration `json:"ttl"`
	// Hold is how long a client stays inside its critical section.
	// Default 10ms.
	Hold time.Duration `json:"hold"`
	// Seed feeds the one random source of the run. Default 1.
	Seed int64 `json:"seed"`
	// Fencing makes the lock issue fencing tokens and the store check them.
	Fencing bool `json:"fencing"`
	// AcquireTimeout bounds the wait of one acquire call. Default TTL.
	AcquireTimeout time.Duration `json:"acquire_timeout"`
	// Dir is the run directory: history.jsonl is written there and the
	// nodes' logs under nodes/. Required.
	Dir string `json:"-"`
}

// WithDefaults returns c with every zero field set to its default, or an
// error naming the first invalid field.
func (c Config) WithDefaults() (Config, error) {
	spec, err := locks.Lookup(c.Lock)
	if err != nil {
		return c, err
	}
	if c.Nodes == 0 {
		c.Nodes = 1
		if spec.MultiNode {
			c.Nodes = 5
		}
	}
	if c.Clients == 0 {
		c.Clients = 10
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
	if c.Hold == 0 {
		c.Hold = 10 * time.Millisecond
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = c.TTL
	}
	switch {
	case c.Nodes < 1:
		return c, fmt.Errorf("harness: nodes must be at least 1, got %d", c.Nodes)
	case !spec.MultiNode && c.Nodes != 1:
		return c, fmt.Errorf("harness: %s is a single-instance lock; it takes 1 node, not %d", c.Lock, c.Nodes)
	case c.Clients < 1:
		return c, fmt.Errorf("harness: clients must be at least 1, got %d", c.Clients)
	case c.Keys < 1:
		return c, fmt.Errorf("harness: keys must be at least 1, got %d", c.Keys)
	case c.Duration < 0 || c.TTL < 0 || c.Hold < 0 || c.AcquireTimeout < 0:
		return c, errors.New("harness: durations must not be negative")
	case c.Fencing && !spec.Fencing:
		return c, fmt.Errorf("harness: %s issues no fencing tokens", c.Lock)
	case c.Dir == "":
		return c, errors.New("harness: no run directory")
	}
	return c, nil
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
	Interrupted  bool          `json:"interrupted"`
}

// Option configures Run.
type Option func(*runOptions)

type runOptions struct {
	progress      func(Progress)
	progressEvery time.Duration
}

// WithProgress calls fn every interval while the test runs. By default
// nothing is reported.
func WithProgress(interval time.Duration, fn func(Progress)) Option {
	return func(o *runOptions) { o.progress, o.progressEvery = fn, interval }
}

// Run runs one test and writes its history to cfg.Dir/history.jsonl. The
// history is streamed as the test goes, so it can be checked even if Run
// is interrupted; when ctx is cancelled, Run stops the clients, closes the
// history and stops the nodes, and returns the summary with Interrupted
// set and ctx's error. Every process Run started is stopped before it
// returns.
func Run(ctx context.Context, cfg Config, opts ...Option) (sum Summary, err error) {
	cfg, err = cfg.WithDefaults()
	if err != nil {
		return Summary{}, err
	}
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	sum = Summary{Config: cfg, HistoryPath: filepath.Join(cfg.Dir, "history.jsonl")}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return sum, fmt.Errorf("harness: %w", err)
	}

	cl, err := cluster.Start(ctx, cfg.Nodes, cluster.WithDir(filepath.Join(cfg.Dir, "nodes")))
	if err != nil {
		return sum, fmt.Errorf("harness: start nodes: %w", err)
	}
	defer func() {
		if cerr := cl.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("harness: stop nodes: %w", cerr)
		}
	}()
	sum.RedisVersion = cl.Version()

	lk, err := locks.New(cfg.Lock, locks.Config{
		Addrs:    cl.Addrs(),
		Password: cl.Password(),
		TTL:      cfg.TTL,
		Fencing:  cfg.Fencing,
		Seed:     cfg.Seed,
	})
	if err != nil {
		return sum, fmt.Errorf("harness: %w", err)
	}
	defer lk.Close()

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
	var acquired, attempts atomic.Int64

	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
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

	keys := make([]string, cfg.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	errs := make([]error, cfg.Clients)
	var wg sync.WaitGroup
	for id := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{id: id, rec: rec}
			// One stream per client, all derived from the one seed.
			rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(id)))
			errs[id] = c.loop(runCtx, lk, st, keys, rng, cfg, &acquired, &attempts)
		}()
	}
	wg.Wait()
	sum.Elapsed = time.Since(base)
	if ctx.Err() != nil {
		sum.Interrupted = true
		return sum, ctx.Err()
	}
	return sum, errors.Join(errs...)
}

// loop is one client's life: acquire a random key (bounded wait), run
// the critical section, release; after a failed acquire, back off a
// little. It returns only a history write error; lock errors are recorded.
func (c *client) loop(ctx context.Context, lk locks.Lock, st *Store, keys []string, rng *rand.Rand, cfg Config, acquired, attempts *atomic.Int64) error {
	for ctx.Err() == nil {
		key := keys[rng.IntN(len(keys))]
		actx, cancel := context.WithTimeout(ctx, cfg.AcquireTimeout)
		lease, err := c.acquire(actx, lk, key)
		cancel()
		attempts.Add(1)
		if err != nil {
			if errors.Is(err, history.ErrWrite) {
				return err
			}
			if !sleepCtx(ctx, time.Duration(rng.Int64N(int64(cfg.TTL/20)+1))) {
				return nil
			}
			continue
		}
		acquired.Add(1)
		if err := c.section(ctx, st, lease, cfg.Hold); err != nil {
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

// sleepCtx waits d or until ctx is done; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
