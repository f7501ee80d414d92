// Command bench measures the harness and writes BENCHMARKS.md (`make
// bench`): how fast it drives, how fast it checks, how surely it finds
// violations:
//
//  1. workload: lock cycles per second of harness.Run (setnx, 50 clients
//     on their own keys, hold 0, recording on) through the node's proxy
//     and straight to it, next to a raw go-redis loop of the same two
//     commands both ways, against one redis-server, and redis-benchmark's
//     SET figure; with CPU per cycle and a CPU profile of the harness;
//  2. checker: time and peak memory (of a child process, `bench
//     check-one`) to check generated histories of 10⁴, 10⁵ and 10⁶
//     operations, valid and with a late violation, streamed
//     (checker.CheckDecoder) and, for reference, whole in memory;
//  3. detection: for every expected-violation cell of the matrix, the
//     share of seeds whose run finds the violation and the median time to
//     the first one; for every expected-safe cell, the false alarms;
//  4. start-up: how long cluster.Start takes for 5 nodes and proxies;
//  5. adapter: the process adapter's pipe round trip (p50, p99), what a
//     Python client process costs (start, memory), and lock cycles per
//     second of the example client and redis-py-lock next to setnx on
//     part 1's run shape, with 10 clients and with 1;
//  6. evidence: harness.Run of setnx (1 node) and redlock (5 nodes) with
//     and without recording the per-node evidence, on part 1's run shape
//     straight to redis-server: cycles per second, CPU and history bytes
//     per cycle;
//
// and runs the Go benchmarks of the hot paths (go test -bench in history,
// harness and checker). A -budget (default 14 minutes) bounds the whole
// run: detection runs that would end after it are skipped and counted.
//
// `bench gen <path> <ops> valid|violation` writes one generated history.
//
// It imports harness, trial (to run and judge), checker, history,
// cluster, locks, nemesis, matrix, report and internal/cli (its main), and
// go-redis for the raw loop; nothing imports it.
package main
