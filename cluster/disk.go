package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locktorture/locktorture/internal/lazyfs"
)

// ErrNoLazyFS is returned by DropUnsynced without WithLazyFS.
var ErrNoLazyFS = errors.New("cluster: the node's data folder is not on lazyfs")

// diskDir is the folder in a node's folder holding its data on lazyfs;
// its configuration, log and clock offset stay on the real disk.
const diskDir = "data"

// WithLazyFS runs each node's data folder on lazyfs, in this process's
// memory (Node.DropUnsynced), unmounted by Close on every path out (a
// killed process's mounts by the next). Process backend only; see
// lazyfs.Available for what a machine needs.
func WithLazyFS() Option {
	return func(o *options) { o.lazyFS = true }
}

// dataDir is the node's data folder: its folder, or the lazyfs mount.
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

// unmountDisk unmounts the node's lazyfs, if any, after its process ended.
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

// DropUnsynced drops what the node wrote but did not fsync, as a power
// loss drops the page cache, and returns at most how many bytes. Kill the
// node first: a running one keeps writing. ErrNoLazyFS without WithLazyFS.
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

// Unsynced returns at most how many bytes the node wrote but did not
// fsync; 0 without lazyfs.
func (n *Node) Unsynced() int64 {
	n.mu.Lock()
	d := n.disk
	n.mu.Unlock()
	if d == nil {
		return 0
	}
	return d.Unsynced()
}

// lazyFSWhy says why a backend's nodes cannot run on lazyfs, or "".
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
