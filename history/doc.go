// Package history owns the record of a run: one JSON object per line,
// Jepsen's vocabulary (each operation is an "invoke" followed by "ok",
// "fail" or "info"), stamped in nanoseconds from one monotonic base shared
// by every client and the nemesis.
//
// Events are streamed to disk as they happen ([Writer]), so a run that is
// killed leaves a prefix that can still be read ([Read]) and checked: a
// torn last line is skipped after at least one complete event. A history
// without one complete event (an empty file, binary data, text without a
// newline) is an error wrapping [ErrEmpty], never zero events. The
// format is documented in the README and kept stable: a history written by
// hand or by another tool is read the same way.
//
// A history may come from someone else. [Open] (and [ReadFile]) refuse a
// path that is a symbolic link or not a regular file (a named pipe, a
// device such as /dev/zero), and a [Decoder] stops at a line longer than
// [MaxLine] (16 MiB, far above any event) with an error naming the line,
// so a hostile history costs a bounded amount of memory.
//
// The JSON of an event is written and read by hand (codec.go): the
// Writer's lines are byte for byte encoding/json's, and the Decoder reads
// the lines it can with a fast path that gives exactly what encoding/json
// gives, and any other line with encoding/json. Both were most of the cost
// of recording and of re-reading a long history.
//
// This package imports safefs, which opens a history file for [Open],
// and otherwise the standard library only.
package history
