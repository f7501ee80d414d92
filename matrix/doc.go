// Package matrix runs the comparison matrix: every lock × every fault it
// can take × fencing on and off, each cell over several seeds, and
// compares each cell's outcome with what the literature predicts (the
// table in cells.go, each row citing its source).
//
// A matrix can be split into shards that several machines run (Shard,
// Plan: a deterministic share of the runs, balanced by expected time),
// and Merge joins their outputs into the whole matrix's, judging each
// cell by the same function as Run.
//
// It wires harness (to run), checker (to judge) and report (to write);
// the release gate (`make torture`) is its quick profile.
package matrix
