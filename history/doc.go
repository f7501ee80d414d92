// Package history owns the record of a run: one JSON object per line,
// Jepsen's vocabulary (each operation is an "invoke" followed by "ok",
// "fail" or "info"), stamped in nanoseconds from one monotonic base shared
// by every client and the nemesis. The format is documented in
// docs/correctness.md and kept stable: a history written by hand or by
// another tool is read the same way.
//
// A [Writer] streams events to disk as they happen, so a killed run leaves
// a prefix that [Read] still reads: a torn last line is skipped after at
// least one complete event; a history without one is an error wrapping
// [ErrEmpty]. A history may come from someone else: [Open] refuses links
// and files that are not regular, and a [Decoder] stops at a line longer
// than [MaxLine], so a hostile history costs bounded memory.
//
// The JSON of an event is written and read by hand (codec.go), exactly as
// encoding/json does: its reflection was most of the cost of recording
// and of re-reading a long history.
//
// This package imports safefs, which opens a history file for [Open],
// and otherwise the standard library only.
package history
