// Package matrix runs the comparison matrix: every lock × every fault it
// can take × fencing on and off, each cell over several seeds, and
// compares each cell's outcome with what the literature predicts.
//
// The predictions are one table, Literature (expect.go): for a class of
// lock, selected by the traits of the promises it declares
// (locks.Promises), under one fault, the expected outcome, its source and
// the promise it rests on. The matrix's cells for the locks this project
// ships are derived from it (cells.go; the mutants' cells and controls
// are written by hand), and so are the cells of any registered lock's
// release gate (CellsFor, run by package gate).
//
// A matrix can be split into shards that several machines run (Shard,
// Plan: a deterministic share of the runs, balanced by expected time),
// and Merge joins their outputs into the whole matrix's, judging each
// cell by the same function as Run. Shards come from elsewhere: Merge
// copies folders and regular files only, never through a link, and
// leaves its output as it was when it refuses (docs/threat-model.md).
//
// It wires harness (to run), checker (to judge) and report (to write);
// the release gate (`make torture`) is its quick profile.
package matrix
