package harness

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
)

// The most a run may ask of the machine. Within them a run starts, and what
// it then achieves (perhaps no acquire at all) is for the verdicts to say;
// beyond them it is refused before anything starts, with the measurement that
// set the limit (checkLimits, checkBounds). Measured on the project's 2-core,
// 24 GB machine, besides: 100 nodes started in 2.1 s and 500 in 7.2 s on the
// process backend, 100 containers in 43 s under load 8–12 on the docker one;
// clients share the lock's connections (locks.PoolSize per node), so Redis's
// maxclients is never reached; three descriptors per connection through a
// node's in-process proxy (1,660 for 50 nodes × 10 clients: openFiles).
const (
	MaxNodes    = 100
	MaxClients  = 100_000
	MaxKeys     = MaxClients
	MaxDuration = 24 * time.Hour
)

// What one client process costs (the built-in Python 3.11 clients, on the
// 2-core machine):
//
//   - CPU: 0.10–0.16 s to start an interpreter and answer the hello. All
//     start at once before the run and must answer within the process
//     adapter's 20 s: with half of it spare, 20 / 0.16 / 2 ≈ 62 per core.
//   - Memory: 18.7 MB resident for the example, 26 MB for redis-py-lock
//     and redlock-py, rounded up; the clients may take half of the memory
//     available, the rest being the nodes', this process's and the machine's.
//   - File descriptors here: 8 per client while it starts (both ends of
//     its three pipes and the script's), plus the proxy's two per node.
//     A client group's supervisor (17 MB, three descriptors) fits the base.
const (
	processClientsPerCore = 64
	processClientMemory   = 32 << 20
	processClientFiles    = 8
)

// openFileLimit is how many files this process may open (Go raises the soft
// RLIMIT_NOFILE to the hard one), 0 if unknown; a variable for tests.
var openFileLimit = func() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur, 1<<30))
}

// machine returns the cores and the memory available now (0 if unknown); a
// variable for tests.
var machine = func() (cores int, available int64) {
	return runtime.NumCPU(), memAvailable()
}

// memAvailable is MemAvailable of /proc/meminfo in bytes, or 0.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		var kib int64
		if _, err := fmt.Sscanf(line, "MemAvailable: %d kB", &kib); err == nil {
			return kib << 10
		}
	}
	return 0
}

// proxyFiles is the descriptors per connection through a node's in-process
// proxy (its two sockets); 0 without one.
func (c Config) proxyFiles() int {
	if !cluster.Spec(c.Cluster).RunsNodes() {
		return 0 // no in-process proxy; a remote toxiproxy holds the rest
	}
	return 2
}

// baseFiles is what the run holds whatever its clients: a few per node and
// client group (proxy listeners, logs) and a base.
func (c Config) baseFiles(groups int) int {
	return c.Nodes*(2*groups+4) + 64
}

// openFiles estimates the descriptors the run holds at its busiest: each
// client group's lock keeps up to locks.PoolSize connections per node, each
// with its proxy's; plus baseFiles.
func (c Config) openFiles(groups int) int {
	perGroup := min((c.Clients+groups-1)/groups, locks.PoolSize)
	return c.Nodes*groups*perGroup*(1+c.proxyFiles()) + c.baseFiles(groups)
}

// processFiles is the descriptors per client process: processClientFiles, and
// the proxy's for its own connection to each node (not bounded by
// locks.PoolSize).
func (c Config) processFiles() int {
	return processClientFiles + c.Nodes*c.proxyFiles()
}

// processLimit is the most client processes this machine may start, the least
// of three bounds: by cores, by memory (half of what is available), by open
// files beyond baseFiles; a bound the machine does not tell is left out. why
// says each.
func (c Config) processLimit(groups int) (limit int, why string) {
	cores, avail := machine()
	limit = cores * processClientsPerCore
	parts := []string{fmt.Sprintf("cores: %d × %d, as each start costs about 0.16 s of CPU and every client must start within 20 s", cores, processClientsPerCore)}
	if avail > 0 {
		byMem := int(avail / 2 / processClientMemory)
		limit = min(limit, byMem)
		parts = append(parts, fmt.Sprintf("memory: %d, at %d MiB each in half of the %.1f GiB available", byMem, processClientMemory>>20, float64(avail)/(1<<30)))
	}
	if files := openFileLimit(); files > 0 {
		byFiles := max(0, (files-c.baseFiles(groups))/c.processFiles())
		limit = min(limit, byFiles)
		parts = append(parts, fmt.Sprintf("open files: %d, at %d each of ulimit -n %d", byFiles, c.processFiles(), files))
	}
	return limit, strings.Join(parts, "; ")
}

// checkLimits refuses what the machine cannot run: MaxNodes, MaxClients, and
// openFiles or, for client processes, processLimit.
func (c Config) checkLimits(groups int, process bool) error {
	switch {
	case c.Nodes > MaxNodes && cluster.Spec(c.Cluster).RunsNodes():
		return fmt.Errorf("harness: %d nodes: a run starts at most %d (on a 2-core machine, of 1000 redis-server processes some did not answer within the 10 s start-up time; 100 start in about 2 s)", c.Nodes, MaxNodes)
	case c.Clients > MaxClients:
		return fmt.Errorf("harness: %d clients: a run drives at most %d (100,000 took 460 MB and twice the run's time to drive on a 2-core machine)", c.Clients, MaxClients)
	}
	if process {
		if limit, why := c.processLimit(groups); c.Clients > limit {
			return fmt.Errorf("harness: %d clients of %s, one client process each: this machine runs at most %d (%s): use fewer clients",
				c.Clients, c.Lock, limit, why)
		}
		return nil
	}
	if limit, need := openFileLimit(), c.openFiles(groups); limit > 0 && need > limit {
		return fmt.Errorf("harness: %d nodes with %d clients need about %d open files, more than this process may open (%d, ulimit -n): use fewer nodes or clients, or raise the limit",
			c.Nodes, c.Clients, need, limit)
	}
	return nil
}

// checkBounds refuses a value beyond what any run can use (MaxKeys,
// MaxDuration); it does not depend on the machine, so FitsSchedule checks it
// too.
func (c Config) checkBounds() error {
	if c.Keys > MaxKeys && !c.KeyPerClient { // then Keys is Clients, which checkLimits bounds
		return fmt.Errorf("harness: %d keys: a run names and watches every key before it starts, and takes at most %d (a billion took 22 GB before the first acquire; a client touches one key an acquire)", c.Keys, MaxKeys)
	}
	if c.TTL > MaxDuration/3 {
		// The liveness bound (3×TTL) and the delayed restarts (1.5×TTL) are
		// multiples of it.
		return fmt.Errorf("harness: ttl %s: at most %s, a third of the longest run (%s), as the liveness bound defaults to 3×TTL", c.TTL, MaxDuration/3, MaxDuration)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"duration", c.Duration}, {"hold", c.Hold}, {"acquire timeout", c.AcquireTimeout},
		{"extend every", c.ExtendEvery}, {"nemesis interval", c.NemesisInterval}, {"restart delay", c.RestartDelay}, {"liveness bound", c.LivenessBound},
	} {
		if d.v > MaxDuration {
			return fmt.Errorf("harness: %s %s: at most %s (a run of the default workload writes about 10 GB of history a day, which the check reads whole; a longer %s is one no run sees end)", d.name, d.v, MaxDuration, d.name)
		}
	}
	return nil
}
