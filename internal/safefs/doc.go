// Package safefs reads and writes files that may come from someone else:
// the shards that torture matrix merge joins, the run folders and
// summaries that publish packs, the results.json files and histories
// that readers open. Its one rule: a symbolic link is never followed and
// never written through, and only regular files are read.
//
//   - [Open] and [ReadFile] refuse a name that is a symbolic link (to a
//     file, to a folder, or dangling: [ErrLink]) and anything that is not
//     a regular file (a folder, a named pipe, a device such as /dev/zero:
//     [ErrNotRegular]); they never block on a named pipe. [ReadFile]
//     refuses a file larger than [MaxFile].
//   - [Local] refuses a path that is not local: empty, absolute, or with
//     a ".." that leaves its folder ([ErrNotLocal]). [OpenIn], [ReadFileIn]
//     and [CopyTree] take such a path in an [os.Root] of its folder, one
//     step at a time, each folder opened from the one before, and refuse
//     a link at every step of it, not only at its end (os.Root alone
//     would follow a link that stays inside the root); the file or
//     folder opened must be the one checked ([os.SameFile]).
//   - [WriteFile] writes through a temporary file in the same folder and a
//     rename, so a reader sees the old content or the new, and a link at
//     the name is replaced, never followed. [WriteDir] does the same for a
//     whole folder: it is filled under a temporary name beside it and
//     renamed into place, so a refusal half way leaves nothing behind.
//   - [Fresh] makes a folder of its own and [WriteFresh] a file of its
//     own: a name that is taken (by another command started in the same
//     second, an earlier result, a link) is never shared nor replaced;
//     the next free name, base-1, base-2, …, is taken instead.
//   - [Inside] tells whether one path is inside another once both are
//     absolute and their links resolved: an output folder must not be in
//     its input.
//
// The checks are made on the files as they are when read: they guard
// against a folder that was built hostile (a downloaded artifact, an
// unpacked bundle), not against a local process that swaps a file for a
// link between a check and the open that follows it.
//
// This package imports the standard library only.
package safefs
