// Command bench measures the harness and writes BENCHMARKS.md and
// BENCHMARKS.json (`make bench`): how fast it drives, how fast it checks,
// how surely it finds violations. Each part is a section of its own, with
// its figures in BENCHMARKS.json and a stamp (date, commit, load averages,
// the command that measures it again); `bench -only PART[,PART]` measures
// those parts again and rewrites only their sections, keeping the others
// from BENCHMARKS.json, so the whole file is always this command's output.
// The parts, in the file's order:
//
//  1. workload: lock cycles per second of harness.Run (setnx, 50 clients
//     on their own keys, hold 0, recording on) through the node's proxy
//     and straight to it, next to a raw go-redis loop of the same two
//     commands both ways, against one redis-server, and redis-benchmark's
//     SET figure; with CPU per cycle and a CPU profile of the harness;
//  2. checker: time and peak memory (of a child process, `bench
//     check-one`) to check generated histories of 10⁴, 10⁵ and 10⁶
//     operations, valid and with a late violation;
//  3. detect: for every expected-violation cell of the quick profile
//     (-detect-full: of the whole matrix), the share of seeds whose run
//     finds the violation and the median time to the first one; for every
//     expected-safe cell, the false alarms;
//  4. startup: how long cluster.Start takes for 5 nodes and proxies;
//  5. adapter: the process adapter's pipe round trip (p50, p99), what a
//     Python client process costs (start, memory), and lock cycles per
//     second of the example client and redis-py-lock next to setnx on
//     part 1's run shape, with 10 clients and with 1;
//  6. evidence: harness.Run of setnx (1 node) and redlock (5 nodes) with
//     and without recording the per-node evidence;
//  7. gate: `torture gate --lock L` with its defaults for a few locks,
//     idle and beside busy CPU hogs: wall time, verdict, trials a minute
//     of the promise cells, those short of the power target, CPU, peak
//     RSS; and `torture matrix --quick` at several --jobs: wall time and
//     cells matching;
//  8. targeted: cells of the targeted kinds beside their random twins
//     (the same cell with the random kind): share of seeds finding the
//     violation, time from the fault to it, and the false alarms of the
//     expected-safe controls;
//  9. onepass: what `torture run` does after its run (check, analysis,
//     results.json, report.html) against `torture check` alone, in time
//     and peak RSS, on a generated history of 10⁶ operations;
//  10. clock: clock faults on the client (libfaketime) and slewed heals of
//     a node's clock: violations per property, liveness, and whether each
//     cell's runs match its expectation;
//  11. gobench: the Go benchmarks of the hot paths (go test -bench in
//     history, harness and checker).
//
// -budget bounds each part that runs cells: runs that would end after it
// are skipped and counted.
//
// `bench gen <path> <ops> valid|violation` writes one generated history.
//
// It imports harness, trial (to run and judge), checker, history,
// cluster, locks, nemesis, matrix, report and internal/cli (its main), and
// go-redis for the raw loop; nothing imports it. The gate part builds
// ./cmd/torture and runs it as a lock author would.
package main
