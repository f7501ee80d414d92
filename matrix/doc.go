// Package matrix runs the comparison matrix: every registered lock under
// every row of the literature table its promises select, each cell over
// several seeds, and compares each cell's outcome, property by property
// (lease, resource, liveness), with what the literature predicts.
//
// The predictions are one table, Literature (table.go): a row is a class
// of lock, selected by the traits of the promises it declares
// (locks.Promises), under one fault and workload, with its expectation per
// property, the band of rates that expectation allows, its source and the
// promise it rests on. Every cell is a row for one lock (Derive): the
// cells of the locks this project ships, a mutant's (the rows its bugs
// break), and a user's lock's release gate (CellsFor, run by package
// gate). A row's Quick puts its cells in the quick profile that `make
// torture` runs.
//
// A matrix can be split into shards that several machines run (Shard,
// Shards: a deterministic share of the runs, balanced by expected time),
// and Merge joins their outputs into the whole matrix's, judging each
// cell by the same function as Run. Shards come from elsewhere: Merge
// copies folders and regular files only, never through a link, and
// leaves its output as it was when it refuses (docs/threat-model.md).
//
// It imports harness (a cell's configuration), trial (to run and judge
// each run), checker (verdicts), report (to write the summaries), locks
// (the registry and promises), nemesis (the kinds' windows), cluster (the
// topologies), internal/safefs (to read shards and write a merge) and
// internal/health (to start runs side by side while the timers keep time).
package matrix
