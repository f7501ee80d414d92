package harness

import (
	"fmt"
	"syscall"

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
const (
	MaxNodes   = 100
	MaxClients = 100_000
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

// openFiles estimates the file descriptors the run holds at its busiest:
// per node, each client group's lock keeps up to locks.PoolSize
// connections (one per client of the group that waits on the node at
// once), each three descriptors through an in-process proxy; plus a few
// per node (proxy listeners, logs) and a base for the process.
func (c Config) openFiles(groups int) int {
	perConn := 3
	if !cluster.Spec(c.Cluster).RunsNodes() {
		perConn = 1 // no in-process proxy; a remote toxiproxy holds the rest
	}
	perGroup := min((c.Clients+groups-1)/groups, locks.PoolSize)
	return c.Nodes*(groups*perGroup*perConn+2*groups+4) + 64
}

// checkLimits refuses what the machine cannot run: see MaxNodes,
// MaxClients and openFiles.
func (c Config) checkLimits(groups int) error {
	switch {
	case c.Nodes > MaxNodes && cluster.Spec(c.Cluster).RunsNodes():
		return fmt.Errorf("harness: %d nodes: a run starts at most %d (on a 2-core machine, of 1000 redis-server processes some did not answer within the 10 s start-up time; 100 start in about 2 s)", c.Nodes, MaxNodes)
	case c.Clients > MaxClients:
		return fmt.Errorf("harness: %d clients: a run drives at most %d (100,000 took 460 MB and twice the run's time to drive on a 2-core machine)", c.Clients, MaxClients)
	}
	if limit, need := openFileLimit(), c.openFiles(groups); limit > 0 && need > limit {
		return fmt.Errorf("harness: %d nodes with %d clients need about %d open files, more than this process may open (%d, ulimit -n): use fewer nodes or clients, or raise the limit",
			c.Nodes, c.Clients, need, limit)
	}
	return nil
}
