// Package safefs reads and writes files that may come from someone else:
// the shards torture matrix merge joins, the run folders and summaries
// publish packs, the results.json files and histories readers open. Its
// one rule: a symbolic link is never followed nor written through, and
// only regular files are read (never blocking on a named pipe).
//
// [Open] and [ReadFile] check a name's last element; [OpenIn],
// [ReadFileIn] and [CopyTree] take a [Local] path in an [os.Root], one
// folder at a time, refusing a link at every step (os.Root alone would
// follow one that stays inside). [WriteFile] and [WriteDir] write under a
// temporary name and rename into place; [Fresh] and [WriteFresh] take a
// name of their own, never sharing nor replacing one; [Inside] tells
// whether one path is inside another, links resolved.
//
// The checks guard against a folder built hostile (a downloaded artifact,
// an unpacked bundle), not against a local process that swaps a file for
// a link between a check and the open that follows it.
//
// This package imports the standard library only.
package safefs
