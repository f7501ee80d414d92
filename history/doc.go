// Package history owns the record of a run: one JSON object per line,
// Jepsen's vocabulary (each operation is an "invoke" followed by "ok",
// "fail" or "info"), stamped in nanoseconds from one monotonic base shared
// by every client and the nemesis.
//
// Events are streamed to disk as they happen ([Writer]), so a run that is
// killed leaves a prefix that can still be read ([Read]) and checked. The
// format is documented in the README and kept stable: a history written by
// hand or by another tool is read the same way.
//
// This package imports the standard library only.
package history
