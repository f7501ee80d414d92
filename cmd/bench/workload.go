package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/trial"
	"github.com/redis/go-redis/v9"
)

// workloadResult is part 1: lock cycles per second.
type workloadResult struct {
	Clients  int
	Duration time.Duration
	Rounds   int
	// Per round, cycles per second,
	RawDirect     []float64 // go-redis loop straight to redis-server
	RawProxy      []float64 // the same loop through the node's toxiproxy proxy
	Harness       []float64 // harness.Run, setnx, recording, through the proxy
	HarnessDirect []float64 // the same, straight to redis-server
	// and CPU time of this process (clients, proxy, recording; not
	// redis-server) per cycle.
	RawDirectCPU, RawProxyCPU, HarnessCPU, HarnessDirectCPU []time.Duration
	// Harness rounds: events recorded and history bytes per cycle.
	EventsPerCycle, BytesPerCycle float64
	// RedisBenchmark is redis-benchmark's SET requests/s, direct.
	RedisBenchmark float64
	// HarnessValid: every harness run's history checked valid.
	HarnessValid bool
	HarnessNote  string
	Profile      string // path of the CPU profile of the last harness round, if taken
}

// median is the median of xs (a duration's truncated to the nanosecond).
func median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// releaseScript is the compare-and-delete of locks/scripts.go, verbatim.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// rawLoop runs clients goroutines for d, each looping SET key token NX
// PX 1000 and the compare-and-delete on its own key: cycles per second.
func rawLoop(ctx context.Context, addr, password string, clients int, d time.Duration) (rate float64, cpu time.Duration, err error) {
	c := locks.NewClient(addr, locks.Config{Password: password}) // the locks' own client options
	defer c.Close()
	if err := releaseScript.Load(ctx, c).Err(); err != nil {
		return 0, 0, fmt.Errorf("raw loop: load script: %w", err)
	}
	cpu0 := selfCPU()
	var cycles atomic.Int64
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := range clients {
		wg.Go(func() {
			key := fmt.Sprintf("raw-k%d", i)
			token := fmt.Sprintf("raw-token-%d", i)
			for time.Now().Before(deadline) {
				ok, err := c.SetNX(ctx, key, token, time.Second).Result()
				if err != nil {
					errs[i] = err
					return
				}
				if !ok {
					errs[i] = fmt.Errorf("raw loop: %s was taken", key)
					return
				}
				n, err := releaseScript.EvalSha(ctx, c, []string{key}, token).Int64()
				if err != nil || n != 1 {
					errs[i] = fmt.Errorf("raw loop: release %s: %d, %v", key, n, err)
					return
				}
				cycles.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	cpu = selfCPU() - cpu0
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	n := cycles.Load()
	if n == 0 {
		return 0, 0, errors.New("raw loop: no cycle completed")
	}
	return float64(n) / el.Seconds(), cpu / time.Duration(n), nil
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration { return cpuOf(syscall.RUSAGE_SELF) }

// cpuOf is the user and system CPU time of who (getrusage), or 0.
func cpuOf(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// harnessCycles runs lock through harness.Run, every torture run's code
// path, with one key per client and no hold, against the nodes at addrs
// (the external backend: the raw loops' server), and returns completed
// cycles per second of the clients' time, read back from the history,
// which must check valid.
func harnessCycles(ctx context.Context, lock, dir string, addrs []string, password string, clients int, d time.Duration, profile string) (h harnessRound, err error) {
	cfg := harness.Config{
		Workload: harness.Workload{Lock: lock, Clients: clients, KeyPerClient: true, NoHold: true, Duration: d, Seed: 1},
		Cluster:  harness.Cluster{Backend: cluster.BackendExternal, External: addrs, Password: password},
		Output:   harness.Output{Dir: dir},
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return h, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return h, err
		}
	}
	cpu0 := selfCPU()
	sum, err := harness.Run(ctx, cfg)
	cpu := selfCPU() - cpu0
	if profile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return h, fmt.Errorf("harness run: %w", err)
	}
	f, err := os.Open(sum.HistoryPath)
	if err != nil {
		return h, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		h.bytes = st.Size()
	}
	// Count release oks and the span of the clients' operations.
	var cycles int64
	first, last := int64(-1), int64(0)
	for e, err := range history.NewDecoder(f).All() {
		if err != nil {
			return h, err
		}
		h.events++
		if e.Process < 0 {
			continue
		}
		if first < 0 {
			first = e.Time
		}
		last = e.Time
		if e.F == history.Release && e.Type == history.Ok {
			cycles++
		}
	}
	a, _, err := trial.Check(sum.HistoryPath, checker.Options{})
	if err != nil {
		return h, err
	}
	res := a.Result
	if !res.Valid() {
		return h, fmt.Errorf("harness run: history of a fault-free run is %s/%s", res.Lease, res.Resource)
	}
	if last <= first || cycles == 0 {
		return h, errors.New("harness run: nothing recorded")
	}
	h.cycles = cycles
	h.rate = float64(cycles) / (time.Duration(last - first)).Seconds()
	h.cpu = cpu / time.Duration(cycles)
	return h, nil
}

// harnessRound is what one harness round measured.
type harnessRound struct {
	rate                  float64
	cpu                   time.Duration // per cycle
	cycles, events, bytes int64
}

// add counts h's cycles, events and bytes into t.
func (t *harnessRound) add(h harnessRound) {
	t.cycles, t.events, t.bytes = t.cycles+h.cycles, t.events+h.events, t.bytes+h.bytes
}

// perCycle is t's events and bytes per cycle.
func (t harnessRound) perCycle() (events, bytes float64) {
	return float64(t.events) / float64(t.cycles), float64(t.bytes) / float64(t.cycles)
}

var benchRE = regexp.MustCompile(`SET: ([0-9.]+) requests per second`)

// redisBenchmark runs redis-benchmark -q -t set -n 200000 -c 50 against
// addr and returns its last SET figure, in requests per second.
func redisBenchmark(ctx context.Context, addr, password string) (float64, error) {
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.CommandContext(ctx, "redis-benchmark", "-h", host, "-p", port, "-a", password, "-q", "-t", "set", "-n", "200000", "-c", "50")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %w: %s", err, out)
	}
	var rps float64
	if m := benchRE.FindAllSubmatch(out, -1); len(m) > 0 {
		rps, _ = strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	}
	if rps == 0 {
		return 0, fmt.Errorf("redis-benchmark: no SET figure in %q", out)
	}
	return rps, nil
}

// runWorkload measures part 1: rounds of the four measurements back to
// back, the order rotated every round so that load from other processes
// falls on all alike; then redis-benchmark.
func runWorkload(ctx context.Context, e *benchEnv, res *results) error {
	tmp, clients, d, rounds := e.tmp, e.o.clients, e.o.workloadDur, e.o.rounds
	profile := filepath.Join(tmp, "harness.prof")
	w := &workloadResult{Clients: clients, Duration: d, Rounds: rounds, HarnessValid: true}
	cl, err := cluster.Start(ctx, 1, cluster.WithDir(filepath.Join(tmp, "workload-node")))
	if err != nil {
		return err
	}
	defer cl.Close()
	n := cl.Node(0)
	var tot harnessRound
	type measurement struct {
		name string
		run  func(r int) (float64, time.Duration, error)
		rate *[]float64
		cpu  *[]time.Duration
	}
	raw := func(addr string) func(int) (float64, time.Duration, error) {
		return func(int) (float64, time.Duration, error) { return rawLoop(ctx, addr, cl.Password(), clients, d) }
	}
	hrn := func(addr string, profiled bool) func(int) (float64, time.Duration, error) {
		return func(r int) (float64, time.Duration, error) {
			prof := ""
			if profiled && r == rounds-1 {
				prof = profile
			}
			dir := filepath.Join(tmp, fmt.Sprintf("workload-harness-%d", r))
			defer os.RemoveAll(dir)
			h, err := harnessCycles(ctx, "setnx", dir, []string{addr}, cl.Password(), clients, d, prof)
			tot.add(h)
			return h.rate, h.cpu, err
		}
	}
	ms := []measurement{
		{"raw direct", raw(n.DirectAddr()), &w.RawDirect, &w.RawDirectCPU},
		{"raw through proxy", raw(n.Addr()), &w.RawProxy, &w.RawProxyCPU},
		{"harness through proxy", hrn(n.Addr(), true), &w.Harness, &w.HarnessCPU},
		{"harness direct", hrn(n.DirectAddr(), false), &w.HarnessDirect, &w.HarnessDirectCPU},
	}
	for r := range rounds {
		for k := range ms {
			m := ms[(k+r)%len(ms)]
			v, cpu, err := m.run(r)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			*m.rate, *m.cpu = append(*m.rate, v), append(*m.cpu, cpu)
			e.logf("workload round %d: %s %.0f cycles/s, %v CPU/cycle", r+1, m.name, v, cpu)
		}
	}
	w.EventsPerCycle, w.BytesPerCycle = tot.perCycle()
	w.Profile = profile
	w.RedisBenchmark, err = redisBenchmark(ctx, n.DirectAddr(), cl.Password())
	if err != nil {
		return err
	}
	e.logf("redis-benchmark SET: %.0f req/s", w.RedisBenchmark)
	res.Workload, res.ProfileTop = w, profileTop(ctx, profile)
	return nil
}
