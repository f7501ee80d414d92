package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
)

// adapterResult is part 5: the process adapter (locks.ProcessLock).
type adapterResult struct {
	Clients  int
	Duration time.Duration
	Rounds   int
	Example  string // the example client's lock name
	// Pipe round trips (ping) of the example client: one process alone,
	// and Clients processes pinging at once.
	PingOne, PingAll []time.Duration
	// Warm is the start of Clients redis-py-lock processes in parallel,
	// hello included; Start one process's.
	Warm, Start time.Duration
	// RSS is one redis-py-lock process's resident memory, in KiB.
	RSS int64
	// Per lock, per round, cycles/s with Clients clients and with one.
	Locks           []string
	Rates, RatesOne map[string][]float64
	// StartCPU is one redis-py-lock process's CPU time to start
	// (interpreter, import redis, hello); CycleCPU, per round, its client
	// processes' CPU time per cycle with Clients clients, start taken out.
	StartCPU             time.Duration
	CycleCPU             []time.Duration
	ValidRuns, TotalRuns int
	ExampleCmd           string
}

// runAdapter measures part 5 against one redis-server; the locks are
// compared setnx first (the reference of the ratios).
func runAdapter(ctx context.Context, e *benchEnv, r *results) error {
	examplePath, err := filepath.Abs(e.o.example)
	if err != nil {
		return err
	}
	py, err := exec.LookPath("python3") // any: the example needs only the standard library
	if err != nil {
		return fmt.Errorf("adapter: no python3 on the PATH")
	}
	example := fmt.Sprintf("exec:'%s' '%s'", py, examplePath)
	clients := e.o.adapterCl
	a := &adapterResult{Clients: clients, Duration: e.o.adapterDur, Rounds: e.o.adapterRounds, Example: example, ExampleCmd: "exec:python3 " + filepath.ToSlash(e.o.example),
		Locks: []string{"setnx", example, "redis-py-lock"}, Rates: map[string][]float64{}, RatesOne: map[string][]float64{}}
	r.Adapter = a
	cl, err := cluster.Start(ctx, 1, cluster.WithDir(filepath.Join(e.tmp, "adapter-node")))
	if err != nil {
		return err
	}
	defer cl.Close()
	cfg := locks.Config{Addrs: cl.Addrs(), Password: cl.Password(), TTL: time.Second}
	if err := a.pipe(ctx, example, cfg, clients, e.logf); err != nil {
		return err
	}
	if err := a.startup(ctx, cfg, clients, e.logf); err != nil {
		return err
	}
	return a.cycles(ctx, e.tmp, cl, e.logf)
}

// pipe measures 2000 pings of one process, then 500 of each at once.
func (a *adapterResult) pipe(ctx context.Context, example string, cfg locks.Config, clients int, logf func(string, ...any)) error {
	l, err := locks.New(example, cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	pl := l.(*locks.ProcessLock)
	for range 2000 {
		rtt, err := pl.Ping(ctx)
		if err != nil {
			return err
		}
		a.PingOne = append(a.PingOne, rtt)
	}
	if err := pl.Warm(ctx, clients); err != nil {
		return err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range 500 {
				rtt, err := pl.Ping(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				a.PingAll = append(a.PingAll, rtt)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	logf("adapter: pipe round trip p50 %v p99 %v alone, p50 %v p99 %v with %d processes", pct(a.PingOne, 50), pct(a.PingOne, 99), pct(a.PingAll, 50), pct(a.PingAll, 99), clients)
	return nil
}

// startup measures what a redis-py-lock process costs (the interpreter
// is looked for first: its probes are children too).
func (a *adapterResult) startup(ctx context.Context, cfg locks.Config, clients int, logf func(string, ...any)) error {
	if _, err := locks.PythonWithRedis(); err != nil {
		return err
	}
	cpu0 := childCPU()
	t0 := time.Now()
	l, err := locks.New("redis-py-lock", cfg)
	if err != nil {
		return err
	}
	a.Start = time.Since(t0)
	pl := l.(*locks.ProcessLock)
	t0 = time.Now()
	err = pl.Warm(ctx, clients+1)
	a.Warm = time.Since(t0)
	a.RSS = rssOf(pl)
	l.Close()
	if err != nil {
		return err
	}
	a.StartCPU = (childCPU() - cpu0) / time.Duration(clients+1)
	logf("adapter: one redis-py-lock process starts in %v, %d more in %v, %d KiB resident each", a.Start, clients, a.Warm, a.RSS)
	return nil
}

// cycles measures cycles per second: the locks back to back, the order
// rotated every round; with a.Clients clients, then with one.
func (a *adapterResult) cycles(ctx context.Context, tmp string, cl *cluster.Cluster, logf func(string, ...any)) error {
	clients, n := a.Clients, cl.Node(0)
	for r := range a.Rounds {
		for k := range a.Locks {
			lock := a.Locks[(k+r)%len(a.Locks)]
			for _, c := range []int{clients, 1} {
				dir := filepath.Join(tmp, fmt.Sprintf("adapter-%d-%d-%d", r, k, c))
				cpu0 := childCPU()
				h, err := harnessCycles(ctx, lock, dir, []string{n.Addr()}, cl.Password(), c, a.Duration, "")
				if lock == "redis-py-lock" && c == clients && err == nil && h.cycles > 0 {
					// The client processes are reaped when the run ends.
					a.CycleCPU = append(a.CycleCPU, (childCPU()-cpu0-time.Duration(c)*a.StartCPU)/time.Duration(h.cycles))
				}
				os.RemoveAll(dir)
				a.TotalRuns++
				if err != nil {
					return fmt.Errorf("%s, %d clients: %w", lock, c, err)
				}
				a.ValidRuns++
				if c == clients {
					a.Rates[lock] = append(a.Rates[lock], h.rate)
				} else {
					a.RatesOne[lock] = append(a.RatesOne[lock], h.rate)
				}
				logf("adapter round %d: %s, %d clients: %.0f cycles/s", r+1, lockLabel(lock, *a), c, h.rate)
			}
		}
	}
	return nil
}

// childCPU is the user and system CPU time of the reaped children.
func childCPU() time.Duration { return cpuOf(syscall.RUSAGE_CHILDREN) }

// rssOf is the resident memory of one of l's processes, in KiB, or 0.
func rssOf(l *locks.ProcessLock) int64 {
	for _, pid := range l.Pids() {
		if kib := statusKB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS"); kib > 0 {
			return kib
		}
	}
	return 0
}

// pct is the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[max(i, 1)-1]
}

func lockLabel(lock string, a adapterResult) string {
	if lock == a.Example {
		return "example client (exec)"
	}
	return lock
}

func (r *results) adapterSection(p func(string, ...any)) {
	a := r.Adapter
	p("`locks.ProcessLock` (locks/clients/PROTOCOL.md) against one redis-server (`cluster.Start`, 1 node, through its proxy).\n\n")
	p("**The pipe.** Round trip of a `ping` (request written → reply read: the pipe both ways, the client's JSON decode and encode, a Python `readline` loop) with the example client (`%s`): ", a.ExampleCmd)
	p("one process alone, %d pings: p50 %s, p99 %s; %d processes pinging at once, %d pings: p50 %s, p99 %s. ",
		len(a.PingOne), fmtDur(pct(a.PingOne, 50)), fmtDur(pct(a.PingOne, 99)), a.Clients, len(a.PingAll), fmtDur(pct(a.PingAll, 50)), fmtDur(pct(a.PingAll, 99)))
	p("The adapter counts a client's validity from the moment it wrote the request, before the client could read it, so a recorded lease ends earlier than the client believes by the pipe's one-way delay, at most the round trip: the harness can miss an overlap shorter than that, never report one the client did not claim.\n\n")
	p("**A client process.** One redis-py-lock process (Python, `import redis`) starts and answers its hello in %s (%s of CPU); %d more, started in parallel (`Warm`), in %s; each holds %d KiB resident.\n\n",
		fmtDur(a.Start), fmtDur(a.StartCPU), a.Clients, fmtDur(a.Warm), a.RSS)
	p("**Throughput.** The run shape of part 1 — `harness.Run` with `KeyPerClient` and `NoHold`, each cycle acquire + critical section + release, recording on — with %d clients and with 1, %d rounds of %v per lock, the locks back to back in each round (in a different order each round); medians, rounds in brackets; the ratios are medians of each round's ratio to setnx.\n\n", a.Clients, a.Rounds, a.Duration)
	p("| lock | language | cycles/s, %d clients | ÷ setnx | cycles/s, 1 client | ÷ setnx | %d clients ÷ 1 |\n|---|---|---|---|---|---|---|\n", a.Clients, a.Clients)
	for _, lock := range a.Locks {
		lang := "Go"
		if lock != "setnx" {
			lang = "Python"
		}
		p("| %s | %s | %.0f [%s] | %.2f | %.0f [%s] | %.2f | %.1f |\n", lockLabel(lock, *a), lang,
			median(a.Rates[lock]), join("%.0f", a.Rates[lock]), ratio(a.Rates[lock], a.Rates["setnx"]),
			median(a.RatesOne[lock]), join("%.0f", a.RatesOne[lock]), ratio(a.RatesOne[lock], a.RatesOne["setnx"]),
			ratio(a.Rates[lock], a.RatesOne[lock]))
	}
	if len(a.CycleCPU) > 0 {
		cpu := median(a.CycleCPU)
		p("\n**One process per client, or one for all?** The redis-py-lock client processes spent %s of CPU per cycle (median of the rounds with %d clients; the CPU of their start taken out). ", fmtDur(cpu), a.Clients)
		p("A single process serving every client would have to be concurrent itself (threads or an event loop, in every client's language), and a Python one runs its bytecode on one core at a time (the interpreter lock): it could not pass about %.0f cycles/s (one second of CPU ÷ %s), where %d processes measured %.0f, %.1f× one process. ",
			float64(time.Second)/float64(cpu), fmtDur(cpu), a.Clients, median(a.Rates["redis-py-lock"]), ratio(a.Rates["redis-py-lock"], a.RatesOne["redis-py-lock"]))
		p("On these 2 cores, shared with redis-server, the proxy and the harness, the throughput is not what decides: a process per client keeps every client a plain read-answer loop, and a client that hangs or dies loses one torture client's call, not every client's; it costs a start, paid before the run, and its memory. The adapter therefore runs one process per client.\n")
	}
	p("\nEvery history of these %d runs checked valid. redis-py-lock keeps redis-py's defaults but for the socket timeouts; its acquire is one `SET NX PX` when the key is free, its release redis-py's Lua compare-and-delete.\n\n", a.ValidRuns)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}
