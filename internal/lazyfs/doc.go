// Package lazyfs is Jepsen's lazyfs for one folder, in Go (go-fuse): an
// in-memory FUSE file system that keeps apart what was written but not
// yet fsynced, and can drop it as a power loss drops the page cache and
// a disk's volatile cache.
//
// Each regular file holds what reads see (every write lands there) and
// what survives a power loss (its bytes at its last fsync or fdatasync);
// Drop turns every file back to the latter. Names are durable at once,
// as on a journalled file system; directory fsyncs do nothing more.
// Files are opened with direct I/O, so every read is answered here.
//
// Mount (as root with mount(2), else with fusermount) first detaches the
// mounts of processes of this machine that died without unmounting
// (RemoveStale); nothing is written anywhere else, and the data is gone
// once unmounted. Available says whether this process may mount one, and
// if not, why.
//
// It imports go-fuse, internal/procstat and the standard library.
package lazyfs
