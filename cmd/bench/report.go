package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// Targets of the harness's own performance.
const (
	targetRatio      = 0.5
	targetCheckTime  = 10 * time.Second
	targetCheckMem   = 1 << 30
	targetDetectRate = 1.0
	targetMedian     = 5.0 // seconds
	targetStartup    = 500 * time.Millisecond
)

// results is everything one run of the benchmarks measured.
type results struct {
	Opts                                options
	LoadStart                           string // the load averages when the part began
	Startup                             startupResult
	Workload                            *workloadResult
	ProfileTop                          []profileLine
	Checker                             []checkRow
	GoBench                             string
	Detect, Targeted, Clock             []detectRow
	DetectWall, TargetedWall, ClockWall time.Duration
	Adapter                             *adapterResult
	Evidence                            *evidenceResult
	Gate                                *gateFigures
	OnePass                             *onePassResult
}

type machineInfo struct {
	CPU                string
	NumCPU, GOMAXPROCS int
	LoadStart          string `json:",omitempty"`
	LoadEnd            string `json:",omitempty"`
	Revision           string `json:",omitempty"`
	Go, Redis          string
	Modules            []string
}

func machine() machineInfo {
	m := machineInfo{CPU: "unknown", NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadStart: loadAvg(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		m.Redis = strings.TrimSpace(string(out))
	}
	if rev, dirty := matrix.Commit(); rev != report.UnknownCommit {
		m.Revision = rev
		if dirty {
			m.Revision += " (with uncommitted changes)"
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			for _, p := range []string{"github.com/redis/go-redis", "github.com/Shopify/toxiproxy", "github.com/anishathalye/porcupine"} {
				if strings.HasPrefix(d.Path, p) {
					m.Modules = append(m.Modules, d.Path+" "+d.Version)
				}
			}
		}
	}
	if m.Revision == "" { // built with -buildvcs=false: ask git
		if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
			m.Revision = strings.TrimSpace(string(out))
			if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!BENCHMARKS.md", ":!BENCHMARKS.json").Output(); err == nil && len(st) > 0 {
				m.Revision += " (the work tree had uncommitted changes besides BENCHMARKS.md and BENCHMARKS.json)"
			}
		}
	}
	return m
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " / ")
	}
	return "unknown"
}

// profileLine is one function of the harness profile and the share of
// the samples in it and its callees.
type profileLine struct {
	What, Func string
	Cum        string
}

// profileFuncs are the functions that tell where a cycle's CPU goes.
var profileFuncs = []struct{ what, re string }{
	{"toxiproxy proxy: reading from either side, handing to the toxic chain", `toxiproxy/v2\.\(\*ToxicLink\)\.read$`},
	{"toxiproxy proxy: writing to the other side", `toxiproxy/v2\.\(\*ToxicLink\)\.write$`},
	{"harness clients, all of a cycle", `harness\.\(\*client\)\.loop$`},
	{"  lock: acquire (SET NX PX, go-redis)", `locks\.\(\*setnx\)\.Acquire$`},
	{"  lock: release (EVALSHA compare-and-delete)", `locks\.\(\*setnx\)\.Release$`},
	{"  recording: Recorder.Append", `harness\.\(\*Recorder\)\.Append$`},
	{"    of which history.Writer.Append", `history\.\(\*Writer\)\.Append$`},
	{"  context.WithTimeout (harness and lock)", `^context\.WithTimeout$`},
	{"system calls (socket reads and writes), all goroutines", `^syscall\.Syscall$`},
	{"garbage collector", `^runtime\.gcBgMarkWorker$`},
}

var pprofLine = regexp.MustCompile(`^\s*\S+\s+\S+%\s+\S+%\s+(\S+)\s+(\S+%)\s+(.+)$`)

// profileTop reads the CPU profile with go tool pprof.
func profileTop(ctx context.Context, path string) []profileLine {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=1000", exe, path).Output()
	if err != nil {
		return []profileLine{{What: "go tool pprof failed: " + err.Error()}}
	}
	var lines []profileLine
	total := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Total samples") {
			total = strings.TrimSpace(l)
		}
	}
	for _, pf := range profileFuncs {
		re := regexp.MustCompile(pf.re)
		pl := profileLine{What: pf.what, Func: strings.Trim(strings.ReplaceAll(pf.re, `\`, ""), "^$"), Cum: "–"}
		for _, l := range strings.Split(string(out), "\n") {
			if m := pprofLine.FindStringSubmatch(l); m != nil && re.MatchString(strings.TrimSpace(m[3])) {
				pl.Func, pl.Cum = strings.TrimSpace(m[3]), m[2]+" ("+m[1]+")"
				break
			}
		}
		lines = append(lines, pl)
	}
	return append(lines, profileLine{What: total})
}

// runGoBench runs the Go benchmarks of the hot paths.
func runGoBench(ctx context.Context, e *benchEnv, r *results) error {
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1", "-benchtime", e.o.benchTime, "./history", "./harness", "./checker"}
	e.logf("go %s", strings.Join(args, " "))
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "goos:") || strings.HasPrefix(l, "goarch:") ||
			strings.HasPrefix(l, "pkg:") || strings.HasPrefix(l, "cpu:") {
			keep = append(keep, l)
		}
	}
	r.GoBench = strings.Join(keep, "\n")
	return nil
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

// targetRows are the rows of the targets table for the parts r holds.
func (r *results) targetRows() []string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	if w := r.Workload; w != nil {
		hr := ratio(w.Harness, w.RawDirect)
		p("| 1. harness (through its proxy) ÷ raw go-redis loop (direct) | ≥ %.1f | %.2f | %s |\n", targetRatio, hr, mark(hr >= targetRatio))
		p("| 1. harness ÷ raw loop, both through the proxy | | %.2f | |\n", ratio(w.Harness, w.RawProxy))
		p("| 1. harness ÷ raw loop, both direct | | %.2f | |\n", ratio(w.HarnessDirect, w.RawDirect))
	}
	for _, c := range r.Checker {
		if c.Mode != "stream" || c.Ops != slices.Max(r.Opts.sizes) {
			continue
		}
		ok := c.Total <= targetCheckTime && c.PeakRSS <= targetCheckMem && c.Err == ""
		p("| 2. check %d ops (%s): time, peak RSS | ≤ %v, ≤ 1 GiB | %s s, %.0f MiB | %s |\n", c.Ops, c.kind(), targetCheckTime, secs(c.Total), mib(c.PeakRSS), mark(ok))
	}
	if len(r.Detect) > 0 {
		w := worstOf(r.Detect, func(s cellStats) *float64 { return s.medFirst })
		p("| 3. share of seeds finding the violation, worst of %d expected-violation cells | %.0f%% | %.0f%% %s | %s |\n", w.cells, 100*targetDetectRate, 100*w.share, paren(w.shareCell), mark(w.share >= targetDetectRate))
		p("| 3. median time to first violation, worst cell | ≤ %.0f s | %.2f s %s | %s |\n", targetMedian, w.time, paren(w.timeCell), mark(w.time <= targetMedian))
		p("| 3. false alarms in expected-safe cells | 0 | %d of %d runs | %s |\n", w.falseAlarms, w.safeRuns, mark(w.falseAlarms == 0))
	}
	if len(r.Startup.Times) > 0 {
		med := median(r.Startup.Times)
		p("| 4. start-up of 5 nodes and their proxies (median of %d) | ≤ %v | %s s | %s |\n", len(r.Startup.Times), targetStartup, secs(med), mark(med <= targetStartup))
	}
	if r.Gate != nil {
		alarms := 0
		for _, g := range r.Gate.Gates {
			ok := g.Exit == 0 && g.Err == "" && g.Wall <= 3*time.Minute
			p("| 7. `torture gate --lock %s` beside %d CPU hogs: PASS, each promise cell excluding a per-trial rate of %.0f %% | ≤ 3 min | %.0f s, %s, %d cells short | %s |\n",
				g.Lock, g.Hogs, 100*g.Rate, g.Wall.Seconds(), g.Status, len(g.Short), mark(ok))
			if g.Exit == 1 {
				alarms++
			}
		}
		p("| 7. false alarms (a gate exiting 1) of %d gates, idle and beside the hogs | 0 | %d | %s |\n", len(r.Gate.Gates), alarms, mark(alarms == 0))
		for _, m := range r.Gate.Matrix {
			if m.Jobs == 0 {
				p("| 7. `make torture`'s matrix at the default jobs: wall, every cell matching | ≤ 60 s | %.0f s, %d of %d matching | %s |\n",
					m.Wall.Seconds(), m.Matching, m.Cells, mark(m.Wall <= time.Minute && m.Matching == m.Cells && m.Cells > 0))
			}
		}
	}
	if len(r.Targeted) > 0 {
		w := worstOf(r.Targeted, func(s cellStats) *float64 { return s.medAfter })
		p("| 8. share of seeds finding the violation, worst of %d targeted cells | ≥ %.0f%% | %.0f%% %s | %s |\n", w.cells, 100*targetTargetedShare, 100*w.share, paren(w.shareCell), mark(w.share >= targetTargetedShare))
		p("| 8. median time from the strike to the first violation, worst targeted cell | ≤ %.0f s | %.2f s %s | %s |\n", targetTargetedAfter, w.time, paren(w.timeCell), mark(w.time <= targetTargetedAfter))
		p("| 8. false alarms in the targeted kinds' expected-safe controls | 0 | %d of %d runs | %s |\n", w.falseAlarms, w.safeRuns, mark(w.falseAlarms == 0))
	}
	if op := r.OnePass; op != nil && len(op.Rounds) > 0 {
		t, m := op.ratios()
		p("| 9. `torture run`'s check and report ÷ `torture check`, %d ops: time (median of rounds) | ≤ %.1f× | %.2f× | %s |\n", op.Ops, targetOnePass, median(t), mark(median(t) <= targetOnePass))
		p("| 9. the same: peak RSS | ≤ %.1f× | %.2f× | %s |\n", targetOnePass, median(m), mark(median(m) <= targetOnePass))
	}
	if len(r.Clock) > 0 {
		matched, n := 0, len(r.Clock)
		for _, row := range r.Clock {
			if clockMatches(row) {
				matched++
			}
		}
		p("| 10. clock-on-the-client and slewed-heal cells whose runs match their expectation | all | %d of %d | %s |\n", matched, n, mark(matched == n))
	}
	return lines(b.String())
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	return slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return l == "" })
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

func (r *results) workloadSection(p func(string, ...any)) {
	w := r.Workload
	p("%d clients, each on its own key, each cycle acquire + release (SET key token NX PX 1000, then the Lua compare-and-delete), ", w.Clients)
	p("%d rounds of %v per measurement, the four measurements back to back in each round (in a different order each round), all against one redis-server (`cluster.Start`, 1 node) in this process's run; medians, with the rounds in brackets; the ratios are medians of each round's ratio.\n\n", w.Rounds, w.Duration)
	p("| measurement | cycles/s | CPU of this process per cycle (not Redis) | ÷ raw direct |\n|---|---|---|---|\n")
	row := func(name string, v []float64, cpu []time.Duration) {
		p("| %s | %.0f [%s] | %.0f µs | %.2f |\n", name, median(v), join("%.0f", v), float64(median(cpu))/1e3, ratio(v, w.RawDirect))
	}
	row("raw go-redis loop, straight to redis-server", w.RawDirect, w.RawDirectCPU)
	row("raw go-redis loop, through the node's toxiproxy proxy", w.RawProxy, w.RawProxyCPU)
	row("**harness** (`harness.Run`, setnx, recording on), through the proxy", w.Harness, w.HarnessCPU)
	row("harness, straight to redis-server", w.HarnessDirect, w.HarnessDirectCPU)
	p("| `redis-benchmark -q -t set -n 200000 -c 50` (SET requests/s, one command, not a cycle): the server's limit | %.0f | | |\n\n", w.RedisBenchmark)
	p("The harness rows are `harness.Run` itself — its 50 clients, the setnx lock, the recorder, `history.Writer` and the store — with `KeyPerClient` and `NoHold` (hold = 0; each cycle still runs its critical section: a read and a write of the in-process store, recorded as a section), ")
	p("on the external backend pointed at the raw loops' own node (through its proxy, or at redis-server directly), so all four share one server. ")
	p("A cycle recorded %.1f events, %.0f bytes of history; every harness history checked valid. ", w.EventsPerCycle, w.BytesPerCycle)
	p("The harness's own per-cycle work besides the two commands: the back-off is never taken (no contention), ")
	p("and each cycle makes four `context.WithTimeout` (the harness bounds acquire and release; the lock bounds each node call), a 128-bit random token, six clock readings and six history lines.\n\n")
	p("**With or without the proxy.** The target compares the harness as it runs — every node behind a toxiproxy proxy, so that faults can be injected — with a raw loop straight to Redis. ")
	p("The proxy alone costs the raw loop %.0f%% of its throughput here (FACTS.md: 43%% on an idle machine) and multiplies the client-side CPU per cycle by %.1f: ",
		100*(1-ratio(w.RawProxy, w.RawDirect)), median(w.RawProxyCPU).Seconds()/median(w.RawDirectCPU).Seconds())
	p("every command and reply is read by one goroutine, handed over two unbuffered channels (through toxiproxy's no-op toxic) and written again by another, four extra syscalls and four goroutine switches per round trip. ")
	p("Measured against the same proxy, the harness runs at %.2f of the raw loop; without it, %.2f.\n\n", ratio(w.Harness, w.RawProxy), ratio(w.HarnessDirect, w.RawDirect))
	if len(r.ProfileTop) > 0 {
		p("CPU profile (pprof) of the last harness round through the proxy: cumulative share of this process's samples, which hold the clients and the in-process proxy; redis-server is another process:\n\n")
		p("| where | function | cum |\n|---|---|---|\n")
		for _, l := range r.ProfileTop {
			if l.Func == "" && l.Cum == "" {
				p("\n%s\n\n", l.What)
				continue
			}
			p("| %s | `%s` | %s |\n", l.What, l.Func, l.Cum)
		}
	}
}

// ratio is the median over rounds of a[i] / b[i]: one round's
// measurements ran back to back, so their ratio is less disturbed by
// passing load than the ratio of the medians.
func ratio(a, b []float64) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return median(r)
}

// join writes v with format f, comma-separated.
func join(f string, v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(f, x)
	}
	return strings.Join(s, ", ")
}

func (r *results) checkerSection(p func(string, ...any)) {
	p("Generated histories in the harness's shape (10 keys, 5 clients each; per key and round an acquire, a section and a release by the holder while another client's acquire fails: 4 operations, 8 events), ")
	p("valid, or with one lease overlap and one lost update injected at 90%% of the history. Each is checked in a child process (`bench check-one`), so its peak RSS is the check's alone; ")
	p("**stream** is `trial.Check`, the history streamed into the analysis (what every run and `torture check` do). ")
	p("*decode only* is one pass of `history.Decoder` over the file with nothing kept; *total* is decode + check; the phases after the scan come from `checker.Options.Timings` (porcupine runs on GOMAXPROCS workers).\n\n")
	p("| ops | history | mode | events | file MB | decode only s | total s | µs/op | porcupine lease s | sweep ms | porcupine resource s | stats s | peak RSS MiB | peak heap MiB | verdicts | first violation found at / injected at (s) |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Checker {
		first := "–"
		if c.Violation {
			f := "none"
			for _, t := range []*int64{c.FirstLease, c.FirstResource} {
				if t != nil {
					f = fmt.Sprintf("%.6f", time.Duration(*t).Seconds())
					break
				}
			}
			first = fmt.Sprintf("%s / %.6f", f, time.Duration(c.Injected).Seconds())
		}
		verdict := fmt.Sprintf("%s/%s", c.Lease, c.Resource)
		if c.Err != "" {
			verdict += " **" + c.Err + "**"
		}
		tm := c.Timings
		p("| %d | %s | %s | %d | %.0f | %s | %s | %.2f | %s | %.1f | %s | %s | %.0f | %.0f | %s | %s |\n",
			c.Ops, c.kind(), c.Mode, c.Events, float64(c.FileBytes)/1e6, secs(c.Decode), secs(c.Total), float64(c.Total.Microseconds())/float64(c.Ops),
			secs(tm.LeasePorcupine), float64(tm.Sweep.Microseconds())/1e3, secs(tm.ResourcePorcupine), secs(tm.Stats), mib(c.PeakRSS), float64(c.PeakHeap)/(1<<20), verdict, first)
	}
	p("\nGrowth: µs per operation should stay flat from 10⁴ to 10⁶ (linear cost). The first violation the checker reports is the injected one: the overlap starts at the injected acquire ok, and the lost update shows when the second of the two sections that read the same value completes.\n\n")
}

func (r *results) detectSection(p func(string, ...any)) {
	o := r.Opts
	which := "of the quick profile (`matrix.Cells(true)`, what `make torture` runs; `-detect-full` takes the whole matrix)"
	if o.detectFull {
		which = "of the whole matrix (`matrix.Cells(false)`)"
	}
	if o.cells != nil {
		which += fmt.Sprintf(" whose name matches `%s`", o.cells)
	}
	p("Every expected-violation cell %s with %d seeds, every expected-safe cell with %d. ", which, o.seeds, o.safeSeeds)
	p("A run of an expected-violation cell lasts at most %v but stops at the first violation a watcher sees in the recorded events (`harness.WithStop`; the verdict and the time are still the checker's, on the whole history); ", o.detectMax)
	p("a run of an expected-safe cell lasts %v, the matrix's default (both raised to the cell's `MinDuration`, at most 30 s); %d runs at a time. ", o.detectDur, o.parallel)
	p("Time to first violation is from the start of the clients (after the nodes are up) to the earliest of `FirstLeaseViolation` and `FirstResourceViolation`; ")
	p("it includes the schedule's first quiet interval (the cell's nemesis interval: 1 s, 3 s for failover) before the first fault, so the time from the first fault's start is given too. ")
	ran, skipped := ranIn(r.Detect)
	p("Detection took %s of wall time for %d runs", r.DetectWall.Round(time.Second), ran)
	if skipped > 0 {
		p(", and **%d runs were skipped** because the %v budget of `make bench` ran out", skipped, o.budget)
	}
	p(". Cells marked \"possible\" in the matrix are not measured: they have no expected outcome.\n\n")
	p("| cell | lock | faults | expect | runs | found | share | median first s | slowest first s | median s after the first fault began | notes |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Detect {
		s := row.stats()
		var alarms []string
		faults := cmp.Or(strings.Join(row.Spec.Kinds(), ","), "none")
		share, slow := "–", "–"
		if s.n > 0 {
			share = fmt.Sprintf("%.0f%%", 100*s.share)
		}
		if s.medFirst != nil {
			slow = fmt.Sprintf("%.2f", s.slowest)
		}
		if row.Spec.Expect.Overall() == report.ExpectSafe {
			if s.found > 0 {
				alarms = append(alarms, fmt.Sprintf("**%d false alarms**", s.found))
			}
			share = "–"
		}
		p("| %s | %s | %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", row.Spec.Name, row.Spec.Lock(), faults, row.Spec.Expect, s.n, s.found, share, s.med, slow, s.after, s.notes(true, alarms...))
	}
	p("\n\n")
}

func (r *results) startupSection(p func(string, ...any)) {
	s := r.Startup
	p("`cluster.Start(ctx, %d)` on the process backend, from the call until it returns — every redis-server answering PING directly and through its toxiproxy proxy — %d times: ", s.Nodes, len(s.Times))
	var ts []string
	for _, t := range s.Times {
		ts = append(ts, secs(t))
	}
	p("median %s s, min %s s, max %s s (each: %s s).\n\n", secs(median(s.Times)), secs(slices.Min(s.Times)), secs(slices.Max(s.Times)), strings.Join(ts, ", "))
}

// notes explain each target not met: the figure, what limits it, what
// was done.
func (r *results) notes() []string {
	var out []string
	load := fmt.Sprintf("the load average at %s on %d CPUs", r.LoadStart, runtime.NumCPU())
	if w := r.Workload; w != nil && ratio(w.Harness, w.RawDirect) < targetRatio {
		out = append(out, fmt.Sprintf("**Workload, %.2f of the raw loop instead of %.1f.** What limits it is the toxiproxy proxy every run goes through, not the harness: "+
			"the raw loop itself drops to %.2f of its direct rate through the same proxy, and its CPU per cycle goes from %.0f µs to %.0f µs; "+
			"in the harness profile below the proxy's readers and writers hold %s and %s of the samples, and system calls %s. "+
			"The harness keeps %.2f of the raw loop's rate through the proxy and %.2f without it (target met there). "+
			"Done to get there: the history's JSON is written by hand, without reflection or allocation (`BenchmarkEncode` below compares it with encoding/json, which it replaced), "+
			"which leaves recording at %s of the samples (`BenchmarkRecorder` below: one cycle's six events); a zero hold arms no timer. "+
			"What remains of the harness's own cost is the lock's and the harness's `context.WithTimeout`s (%s), the random token and the clock readings. "+
			"The proxy cannot be tuned: toxiproxy moves every chunk from a reading goroutine through unbuffered channels and a no-op toxic to a writing goroutine. "+
			"A cheaper path — nodes dialed directly in runs without network faults, or a forwarder that splices while no toxic is armed — is a change to the cluster package and to what a run tests, so it is left to its owners; the figure without the proxy shows what it would give.",
			ratio(w.Harness, w.RawDirect), targetRatio, ratio(w.RawProxy, w.RawDirect), median(w.RawDirectCPU).Seconds()*1e6, median(w.RawProxyCPU).Seconds()*1e6,
			r.profileCum("proxy: reading"), r.profileCum("proxy: writing"), r.profileCum("system calls"),
			ratio(w.Harness, w.RawProxy), ratio(w.HarnessDirect, w.RawDirect), r.profileCum("recording"), r.profileCum("context.WithTimeout")))
	}
	for _, c := range r.Checker {
		if c.Mode != "stream" || c.Ops != slices.Max(r.Opts.sizes) || c.Err != "" || c.Total <= targetCheckTime || c.PeakRSS > targetCheckMem {
			continue
		}
		out = append(out, fmt.Sprintf("**Checker, %d ops (%s) in %s s instead of ≤ %v.** Measured with %s: "+
			"the check decodes on one goroutine and runs porcupine on GOMAXPROCS workers, so its wall time stretches with the run queue, while its peak RSS (%.0f MiB), which the load does not change, is within the target. "+
			"The figure to trust is a run on a quiet machine: `bin/bench -only checker`.", c.Ops, c.kind(), secs(c.Total), targetCheckTime, load, mib(c.PeakRSS)))
	}
	for _, row := range r.Detect {
		if row.Extra || row.Spec.Expect.Overall() != report.ExpectViolation {
			continue
		}
		s := row.stats()
		if s.n > 0 && s.found < s.n {
			out = append(out, fmt.Sprintf("**Detection, %s found the violation in %d of %d seeds.** Its runs depend on timing, not only on the seed: "+
				"the fault has to land while a lock is held in the way that breaks it (for a clock jump, on nodes that granted the lock, while it is still held). "+
				"A run may last 30 s; a miss in one run of `make bench` can be a find in the next. Check the missed seeds' runs with `torture run` before reading more into it.",
				row.Spec.Name, s.found, s.n))
		}
		if s.medFirst != nil && *s.medFirst > targetMedian {
			a := s.after
			if s.medAfter != nil {
				a += " s"
			}
			out = append(out, fmt.Sprintf("**Detection, %s's median first violation at %.2f s instead of ≤ %.0f s.** The cell's schedule begins with a quiet interval of %v before its first fault; "+
				"the violation follows the fault's start by a median %s (a failover waits for the sentinels to promote the replica). A shorter interval for this cell would be the matrix's choice; it is left as it is.",
				row.Spec.Name, *s.medFirst, targetMedian, row.Spec.Config.NemesisInterval, a))
		}
	}
	if r.Gate != nil {
		for _, g := range r.Gate.Gates {
			if g.Exit != 0 || g.Err != "" || g.Wall > 3*time.Minute {
				out = append(out, fmt.Sprintf("**Gate, %s beside %d CPU hogs exited %d (%s) in %.0f s; promise cells short of %d trials: %s.** A cell's trials come from its fault steps, a few a run: the gate runs more seeds side by side while its budget holds them, fewer when the machine is too slow for more (%s); `torture gate --lock %s --cells '^NAME$'` runs one again.",
					g.Lock, g.Hogs, g.Exit, g.Status, g.Wall.Seconds(), g.Need, strings.Join(g.Short, ", ")+errNote(g.Err), load, g.Lock))
			}
		}
	}
	for _, row := range r.Targeted {
		if row.Extra || row.Spec.Expect.Overall() != report.ExpectViolation {
			continue
		}
		if s := row.stats(); s.n > 0 && s.share < targetTargetedShare {
			out = append(out, fmt.Sprintf("**Targeted, %s found the violation in %d of %d seeds.** A strike needs a hold of the shape it aims at within its window, and the violation a second client to win the key before the holder releases; a run's `schedule.json` says whether each step struck. Measured with %s.",
				row.Spec.Name, s.found, s.n, load))
		}
	}
	if op := r.OnePass; op != nil && len(op.Rounds) > 0 {
		if t, _ := op.ratios(); median(t) > targetOnePass {
			out = append(out, fmt.Sprintf("**One pass, %s's check and report at %.2f× `torture check`'s time instead of ≤ %.1f×.** Measured with %s: the rounds' ratios (%s) move by more than the report adds; `bin/bench -only onepass` on a quiet machine settles it.",
				"`torture run`", median(t), targetOnePass, load, join("%.2f", t)))
		}
	}
	for _, row := range r.Clock {
		if !clockMatches(row) {
			out = append(out, fmt.Sprintf("**Clock, %s's runs do not match its expectation (%s).** See its row in part 10; `torture matrix --cells '^%s$' --seeds 1..10` measures it with more seeds.", row.Spec.Name, row.Spec.Expect, regexp.QuoteMeta(row.Spec.Name)))
		}
	}
	return out
}

// profileCum is the cumulative share of the profile line about what.
func (r *results) profileCum(what string) string {
	for _, l := range r.ProfileTop {
		if strings.Contains(l.What, what) {
			c, _, _ := strings.Cut(l.Cum, " ")
			return c
		}
	}
	return "?"
}
