// Command bench measures the harness and writes BENCHMARKS.md and
// BENCHMARKS.json (`make bench`): how fast it drives, how fast it checks,
// how surely it finds violations. Each part is a section with its figures
// in BENCHMARKS.json and a stamp (date, commit, load averages, the
// command that measures it again); `bench -only PART[,PART]` measures
// those parts again and rewrites only their sections, keeping the others
// from BENCHMARKS.json. The parts, in the file's order:
//
//  1. workload: lock cycles per second of harness.Run (setnx, 50 clients
//     on their own keys, hold 0) through the node's proxy and straight to
//     it, beside a raw go-redis loop of the same two commands both ways
//     and redis-benchmark's SET figure; CPU per cycle, a CPU profile;
//  2. checker: time and peak memory (of a child, `bench check-one`) to
//     check generated histories of 10⁴, 10⁵ and 10⁶ operations, valid and
//     with a late violation;
//  3. detect: per expected-violation cell of the quick profile
//     (-detect-full: the whole matrix) the share of seeds finding the
//     violation and the median time to it; per expected-safe cell the
//     false alarms;
//  4. startup: how long cluster.Start takes for 5 nodes and proxies;
//  5. adapter: the process adapter's pipe round trip, what a Python client
//     process costs, and cycles per second of the example client and
//     redis-py-lock beside setnx on part 1's run shape;
//  6. evidence: harness.Run of setnx and redlock with and without the
//     per-node evidence;
//  7. gate: `torture gate --lock L` for a few locks, idle and beside CPU
//     hogs, and `torture matrix --quick` at several --jobs;
//  8. targeted: cells of the targeted kinds beside their random twins
//     (nemesis.Kind.Twin), and their expected-safe controls;
//  9. onepass: `torture run`'s check and report against `torture check`,
//     in time and peak RSS, on a generated history of 10⁶ operations;
//  10. clock: clock faults on the client (libfaketime) and slewed heals
//     of a node's clock, per property and liveness;
//  11. gobench: the Go benchmarks of history, harness and checker.
//
// -budget bounds each part that runs cells: runs that would end after it
// are skipped and counted. `bench gen <path> <ops> valid|violation`
// writes one generated history.
//
// It imports harness, trial (to run and judge), checker, history,
// cluster, locks, nemesis, matrix, report, gate (to read a gate.json) and
// internal/cli (its main), and go-redis for the raw loop; nothing imports
// it. The gate part builds ./cmd/torture and runs it as a lock author
// would.
package main
