// Package lazyfs is a FUSE file system, in memory, that keeps apart what
// was written but not yet fsynced and can drop it, as a power loss drops
// the operating system's page cache and a disk's volatile cache: Jepsen's
// lazyfs, for one folder, in Go (github.com/hanwen/go-fuse/v2).
//
// Every regular file holds two versions of its bytes: what reads see
// (every write lands there at once) and what survives a power loss (the
// file as of its last fsync or fdatasync). Drop turns every file back to
// its last synced version. Names are durable at once: a file created,
// renamed or removed stays so across Drop, as on a journalled file
// system, with the bytes it had at its last sync (none, for a file never
// synced). Directory fsyncs succeed and do nothing more. Files are
// opened with direct I/O, so the kernel caches none of their pages and
// each read is answered from the current version.
//
// Mount mounts an FS on a folder (as root with the mount system call,
// otherwise with fusermount) and Unmount unmounts it; nothing is written
// anywhere else, and the data is gone once unmounted. A mount whose
// process died without unmounting is left behind by the kernel; Mount
// first detaches every such mount of a process of this machine that is
// no longer running (RemoveStale). Available says whether this machine
// lets this process mount one at all, and if not, why.
//
// It imports go-fuse, internal/procstat and the standard library.
package lazyfs
