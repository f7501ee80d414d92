package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locktorture/locktorture/internal/lazyfs"
)

// ErrNoLazyFS is returned by DropUnsynced when the node's data folder is
// not on lazyfs (the cluster was not opened WithLazyFS).
var ErrNoLazyFS = errors.New("cluster: the node's data folder is not on lazyfs")

// diskDir is the name of the folder, in a node's folder, that holds its
// data (redis-server's dir) on lazyfs. The node's configuration, log and
// clock offset stay beside it, on the real disk.
const diskDir = "data"

// WithLazyFS runs each node's data folder (redis-server's dir: its
// append-only file) on lazyfs, a FUSE file system in this process that
// keeps what the node wrote but did not fsync apart, so that
// Node.DropUnsynced can drop it as a power loss would. The mounts are
// made as the nodes start and unmounted by Close, on every path out
// (a failed start, a cancelled context); a mount left by a process that
// was killed is detached by the next one. Only the process backend
// applies it: see lazyfs.Available for what a machine needs. The data
// lives in this process's memory and is gone after Close. The default
// is the real disk.
func WithLazyFS() Option {
	return func(o *options) { o.lazyFS = true }
}

// dataDir is the node's data folder as this process sees it: its folder,
// or the lazyfs mount in it.
func (n *Node) dataDir() string {
	if n.disk != nil {
		return n.disk.Dir()
	}
	return n.dir
}

// mountDisk mounts the node's lazyfs, WithLazyFS; nothing otherwise.
func (n *Node) mountDisk() error {
	if !n.c.opts.lazyFS || n.dir == "" {
		return nil
	}
	dir := filepath.Join(n.dir, diskDir)
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cluster: %w", err)
	}
	d, err := lazyfs.Mount(dir)
	if err != nil {
		return fmt.Errorf("cluster: %s: %w", n.name, err)
	}
	n.mu.Lock()
	n.disk = d
	n.mu.Unlock()
	return nil
}

// unmountDisk unmounts the node's lazyfs, if any; Close calls it once the
// node's process has ended.
func (n *Node) unmountDisk() error {
	n.mu.Lock()
	d := n.disk
	n.mu.Unlock()
	if d == nil {
		return nil
	}
	if err := d.Unmount(); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// DropUnsynced drops what the node wrote to its data folder but did not
// fsync, as a power loss drops the page cache and the disk's volatile
// cache, and returns how many bytes that was (at most). Call it while
// the node is down (Kill first): a running node keeps writing. It returns
// ErrNoLazyFS unless the cluster was opened WithLazyFS.
func (n *Node) DropUnsynced() (int64, error) {
	n.mu.Lock()
	d, running := n.disk, n.running()
	n.mu.Unlock()
	switch {
	case d == nil:
		return 0, fmt.Errorf("%w: drop the unsynced writes of %s", ErrNoLazyFS, n.name)
	case running:
		return 0, fmt.Errorf("cluster: drop the unsynced writes of %s: it is running; kill it first", n.name)
	}
	_, bytes := d.Drop()
	return bytes, nil
}

// Unsynced returns how many bytes the node has written to its data
// folder since it last fsynced them (at most); 0 without lazyfs.
func (n *Node) Unsynced() int64 {
	n.mu.Lock()
	d := n.disk
	n.mu.Unlock()
	if d == nil {
		return 0
	}
	return d.Unsynced()
}

// lazyFSWhy says why the nodes of a backend cannot run on lazyfs, or ""
// when they can (the process backend, on a machine that mounts FUSE).
func lazyFSWhy(backend string) string {
	switch backend {
	case BackendExternal:
		return "the external backend does not run the nodes, so it cannot cut their power"
	case BackendDocker:
		return "the docker backend keeps the nodes' data on the engine's bind mounts, not on lazyfs (the process backend does)"
	}
	if err := lazyfs.Available(); err != nil {
		return "the nodes' data folders cannot be put on lazyfs: " + err.Error()
	}
	return ""
}
