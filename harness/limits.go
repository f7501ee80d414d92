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

// The most a run may ask of the machine. A run within them starts; what
// it then achieves (perhaps no acquire at all: 100,000 clients on two
// keys, or RedLock on 25 nodes with a 1 s TTL, whose per-node timeout of
// TTL/10 every round misses) is for the verdicts to say, as unknown with
// its reason. Beyond them the machine cannot run the test, and the run is
// refused before anything starts.
//
// Measured on the project's 2-core, 24 GB machine (README, "Limits"):
//
//   - Nodes: the process backend starts its nodes in parallel and gives
//     each 10 s to answer PING. 100 nodes started in 2.1 s, 200 in 3.6 s,
//     300 in 6.7 s, 500 in 7.2 s on a quiet machine; of 1000, some gave no
//     PONG within the 10 s. 100 leaves a margin of about 5 for a loaded
//     machine. The docker backend started 100 containers in 43 s with the
//     machine loaded (load average 8–12), 10 in 4.3 s.
//   - Clients: each is a goroutine; they share the lock's connections (at
//     most locks.PoolSize per node), so Redis's maxclients (10,000) is
//     never reached. A 3 s setnx run with 100,000 clients took 6.9 s and
//     a peak of 460 MB (10,000: 3.7 s, 210 MB); none of its acquires
//     succeeded.
//   - File descriptors: this process holds three per connection to a
//     node (the client's socket and both ends of the node's in-process
//     proxy: 1,660 descriptors for 50 nodes × 10 clients), one for an
//     external node without a proxy; see openFiles.
//   - Client processes: a lock served by client processes (Spec.Process:
//     exec: and the built-in Python locks) starts one per client, so
//     MaxClients does not bound them: see maxProcessClients.
//   - Keys: the run names every key before it starts (k0, k1, ...) and
//     watches each; a billion keys took 22 GB of memory before the first
//     acquire and never started. A run's clients touch at most one key
//     per acquire, so more keys than MaxClients test nothing that
//     MaxClients keys do not.
//   - Durations: the history grows with the run (the default workload
//     writes about 1,000 events, 115 kB, a second: 10 GB a day), and the
//     check reads it whole; a TTL, hold, timeout or interval longer than
//     the longest run is one no run sees end. MaxDuration bounds each.
const (
	MaxNodes    = 100
	MaxClients  = 100_000
	MaxKeys     = MaxClients
	MaxDuration = 24 * time.Hour
)

// What one client process costs, measured on the project's 2-core
// machine with the built-in clients after a few acquires (Python 3.11):
//
//   - CPU at start: 0.10–0.16 s of CPU to start an interpreter and
//     answer the hello (the example, redis-py-lock and redlock-py alike;
//     the interpreter dominates). The harness starts every client before
//     the run, in parallel, and each must answer its hello within the
//     start bound (the process adapter's 20 s): with half of it to
//     spare on a loaded machine, 20 s / 0.16 s / 2 ≈ 62 starts per core,
//     hence processClientsPerCore.
//   - Memory: 18.7 MB resident for the example (standard library only;
//     8.6 MB of it its own, the rest shared), 26 MB for redis-py-lock and
//     redlock-py (16 MB their own). processClientMemory rounds the larger
//     up; the clients may take half of the memory available when the run
//     is planned, the rest being the nodes', this process's and the
//     machine's.
//   - File descriptors in this process: one end of each of the three
//     pipes of the client's standard input, output and error once it
//     runs (5.2 per client measured with one node, the proxy's two
//     included), but both ends of each and the script's pipe (a built-in
//     client's) while it starts, 8, and every client starts at once;
//     plus, per node, both ends of the node's in-process proxy for the
//     client's own connection. See processFiles. (Each lock's client
//     supervisor, one process per client group, adds about 17 MB
//     resident, 9 MB its own, and three descriptors here: within the
//     base.)
const (
	processClientsPerCore = 64
	processClientMemory   = 32 << 20
	processClientFiles    = 8
)

// openFileLimit returns how many files this process may open (Go raises
// the soft RLIMIT_NOFILE to the hard one at start-up), or 0 if unknown.
// A variable so tests can lower it.
var openFileLimit = func() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur, 1<<30))
}

// machine returns this machine's cores and the memory available now
// (MemAvailable of /proc/meminfo, in bytes; 0 if unknown). A variable so
// tests can set them.
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

// proxyFiles is the descriptors this process holds per connection
// through a node's in-process proxy (its accepted socket and its socket
// to the node); 0 where the nodes are reached without one.
func (c Config) proxyFiles() int {
	if !cluster.Spec(c.Cluster).RunsNodes() {
		return 0 // no in-process proxy; a remote toxiproxy holds the rest
	}
	return 2
}

// baseFiles is the descriptors the run holds whatever its clients: a few
// per node and client group (proxy listeners, logs) and a base for the
// process.
func (c Config) baseFiles(groups int) int {
	return c.Nodes*(2*groups+4) + 64
}

// openFiles estimates the file descriptors the run holds at its busiest:
// per node, each client group's lock keeps up to locks.PoolSize
// connections (one per client of the group that waits on the node at
// once), each three descriptors through an in-process proxy (the client's
// socket and the proxy's two); plus baseFiles.
func (c Config) openFiles(groups int) int {
	perGroup := min((c.Clients+groups-1)/groups, locks.PoolSize)
	return c.Nodes*groups*perGroup*(1+c.proxyFiles()) + c.baseFiles(groups)
}

// processFiles is the descriptors this process holds per client process:
// processClientFiles, and the proxy's two for the client's connection to
// each node (each process has its own; locks.PoolSize does not bound
// them).
func (c Config) processFiles() int {
	return processClientFiles + c.Nodes*c.proxyFiles()
}

// processLimit is the most client processes a run may start on this
// machine, the least of three bounds (see processClientsPerCore and the
// figures beside it): by cores, processClientsPerCore each; by memory,
// processClientMemory each in half of the memory available; by open
// files, processFiles each in what this process may open beyond
// baseFiles. why says each bound, in a few words. A bound this machine
// does not tell (memory, open files) is left out.
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

// checkLimits refuses what the machine cannot run: see MaxNodes,
// MaxClients, openFiles, and for a lock served by client processes
// (process), processLimit.
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

// checkBounds refuses, in one line that says the bound and why, a value
// beyond what any run can use (MaxKeys, MaxDuration): unlike checkLimits
// these do not depend on the machine, so FitsSchedule checks them too,
// before a key is named or a schedule drawn.
func (c Config) checkBounds() error {
	if c.Keys > MaxKeys && !c.KeyPerClient { // then Keys is Clients, which checkLimits bounds
		return fmt.Errorf("harness: %d keys: a run names and watches every key before it starts, and takes at most %d (a billion took 22 GB before the first acquire; a client touches one key an acquire)", c.Keys, MaxKeys)
	}
	if c.TTL > MaxDuration/3 {
		// The liveness bound (3×TTL) and the delayed restarts (1.5×TTL)
		// default to multiples of it.
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
