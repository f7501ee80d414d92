package lazyfs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is one mounted lazyfs. Its methods are safe for concurrent use.
type FS struct {
	dir    string
	server *fuse.Server

	mu      sync.Mutex
	files   map[*file]struct{} // every regular file with a name
	mounted bool
}

// Name is the file system type's name: mounts show as "fuse.lazyfs".
const Name = "lazyfs"

// sourcePrefix begins the source of every mount, followed by the owner
// (see owner): how RemoveStale tells its mounts from anyone else's.
const sourcePrefix = "locktorture-lazyfs:"

// Mount mounts a new, empty lazyfs on dir, an existing empty folder, after
// RemoveStale. Its files are this process's user's; only this user (and root)
// may enter it.
func Mount(dir string) (*FS, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	if _, err := RemoveStale(); err != nil {
		return nil, err
	}
	return mount(dir)
}

// mount is Mount without RemoveStale (for Available's probe: what is stale is
// left to whoever mounts next, who can say what it removed); dir is absolute.
func mount(dir string) (*FS, error) {
	f := &FS{dir: dir, files: make(map[*file]struct{})}
	root := &directory{lfs: f, attrs: attrs{0o700, uint32(os.Getuid()), uint32(os.Getgid())}}
	zero := time.Duration(0)
	opts := &fs.Options{
		// Nothing cached by the kernel: every look-up and size is asked here,
		// as Drop changes them.
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:      sourcePrefix + owner(os.Getpid()),
			Name:        Name,
			DirectMount: os.Geteuid() == 0,
			// Each write is its own request, whatever its size.
			MaxWrite:      1 << 20,
			DisableXAttrs: true,
		},
	}
	direct := opts.MountOptions.DirectMount
	if direct {
		// go-fuse's direct mount opens /dev/fuse without O_CLOEXEC: a node's
		// redis-server inherited its own disk's FUSE device, and when torture
		// was killed it hung for ever in its exit, flushing to a server that
		// could not answer. So the device is opened under ForkLock (strict:
		// no fallback to fusermount, which forks) and marked close-on-exec
		// before the lock is let go.
		opts.MountOptions.DirectMountStrict = true
		syscall.ForkLock.RLock()
	}
	srv, err := fs.Mount(dir, root, opts)
	if direct {
		closeFuseOnExec()
		syscall.ForkLock.RUnlock()
	}
	if err != nil {
		return nil, fmt.Errorf("lazyfs: mount %s: %w", dir, err)
	}
	f.server, f.mounted = srv, true
	return f, nil
}

// closeFuseOnExec marks every /dev/fuse this process holds close-on-exec.
func closeFuseOnExec() {
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target == "/dev/fuse" {
			syscall.CloseOnExec(fd)
		}
	}
}

// Dir is where the file system is mounted.
func (f *FS) Dir() string { return f.dir }

// Drop turns every file back to its last synced bytes, as a power loss would,
// and returns how many files and bytes it changed. Call it while nothing
// writes.
func (f *FS) Drop() (files int, bytes int64) {
	var changed []*file
	for _, fl := range f.named() {
		if n := fl.drop(); n > 0 {
			files++
			bytes += n
			changed = append(changed, fl)
		}
	}
	for _, fl := range changed {
		// The kernel forgets the size and pages it had (ENOENT for a file it
		// no longer knows: no matter).
		fl.NotifyContent(0, 0)
	}
	return files, bytes
}

// Unsynced is how many bytes differ from the synced versions (an upper bound:
// ranges written, and bytes cut, since the last sync).
func (f *FS) Unsynced() int64 {
	var n int64
	for _, fl := range f.named() {
		fl.mu.Lock()
		n += fl.unsynced()
		fl.mu.Unlock()
	}
	return n
}

// Unmount unmounts the file system and forgets its files; a busy mount (a
// file or working folder still open in it) is detached lazily, gone from the
// folder at once. It can be called again.
func (f *FS) Unmount() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.mounted {
		return nil
	}
	err := f.server.Unmount()
	if err != nil {
		if derr := detach(f.dir); derr != nil {
			return fmt.Errorf("lazyfs: unmount %s: %v; detach: %w", f.dir, err, derr)
		}
	}
	f.mounted = false
	f.files = make(map[*file]struct{})
	return nil
}

// detach lazily unmounts dir: umount2(MNT_DETACH) as root, else fusermount -u
// -z.
func detach(dir string) error {
	if os.Geteuid() == 0 {
		return syscall.Unmount(dir, syscall.MNT_DETACH)
	}
	return fusermount("-u", "-z", dir)
}

// named returns the named files, as they are now.
func (f *FS) named() []*file {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Keys(f.files))
}

// add and remove keep the set of named files.
func (f *FS) add(fl *file) {
	f.mu.Lock()
	f.files[fl] = struct{}{}
	f.mu.Unlock()
}

func (f *FS) remove(n *fs.Inode) {
	if fl, ok := n.Operations().(*file); ok {
		f.mu.Lock()
		delete(f.files, fl)
		f.mu.Unlock()
	}
}

// span is a range of a file's bytes, [from, to).
type span struct{ from, to int64 }

// file is a regular file: what reads see (data) and what a power loss
// leaves (synced), with the ranges of data written since the last sync.
type file struct {
	fs.Inode
	lfs *FS

	mu     sync.Mutex
	data   []byte
	synced []byte
	dirty  []span // of data, written since the last sync
	attrs
	mtime time.Time
}

// attrs are a node's permission bits and owner.
type attrs struct{ mode, uid, gid uint32 }

// set sets what in sets of o; the node's mu is held.
func (o *attrs) set(in *fuse.SetAttrIn) {
	if m, ok := in.GetMode(); ok {
		o.mode = m & 0o7777
	}
	if uid, ok := in.GetUID(); ok {
		o.uid = uid
	}
	if gid, ok := in.GetGID(); ok {
		o.gid = gid
	}
}

var (
	_ fs.NodeOpener    = (*file)(nil)
	_ fs.NodeReader    = (*file)(nil)
	_ fs.NodeWriter    = (*file)(nil)
	_ fs.NodeFsyncer   = (*file)(nil)
	_ fs.NodeFlusher   = (*file)(nil)
	_ fs.NodeGetattrer = (*file)(nil)
	_ fs.NodeSetattrer = (*file)(nil)
)

// handle is an open file: whether it appends.
type handle struct{ append bool }

func (fl *file) Open(_ context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_TRUNC != 0 {
		fl.mu.Lock()
		fl.resize(0)
		fl.mu.Unlock()
	}
	return &handle{append: flags&syscall.O_APPEND != 0}, fuse.FOPEN_DIRECT_IO, fs.OK
}

func (fl *file) Read(_ context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if off >= int64(len(fl.data)) {
		return fuse.ReadResultData(nil), fs.OK
	}
	end := min(off+int64(len(dest)), int64(len(fl.data)))
	return fuse.ReadResultData(slices.Clone(fl.data[off:end])), fs.OK
}

// Write writes at off, or at the end for a file opened to append: the
// kernel computes an appending write's offset from the size it last
// knew, which Drop may have made stale.
func (fl *file) Write(_ context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if h, ok := fh.(*handle); ok && h.append {
		off = int64(len(fl.data))
	}
	end := off + int64(len(data))
	if end > int64(len(fl.data)) {
		fl.resize(end)
	}
	copy(fl.data[off:end], data)
	fl.mark(off, end)
	fl.mtime = time.Now()
	return uint32(len(data)), fs.OK
}

// Fsync makes the file's current bytes its synced ones.
func (fl *file) Fsync(context.Context, fs.FileHandle, uint32) syscall.Errno {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.sync()
	return fs.OK
}

// Flush, on every close, syncs nothing: closing a file does not make its
// bytes durable.
func (fl *file) Flush(context.Context, fs.FileHandle) syscall.Errno { return fs.OK }

func (fl *file) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.attr(&out.Attr)
	return fs.OK
}

func (fl *file) Setattr(_ context.Context, _ fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if sz, ok := in.GetSize(); ok {
		fl.resize(int64(sz))
	}
	fl.attrs.set(in)
	if mt, ok := in.GetMTime(); ok {
		fl.mtime = mt
	}
	fl.attr(&out.Attr)
	return fs.OK
}

// attr fills a with the file's attributes; fl.mu is held.
func (fl *file) attr(a *fuse.Attr) {
	a.Mode = syscall.S_IFREG | fl.mode
	a.Size = uint64(len(fl.data))
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.Nlink = 1
	a.Uid, a.Gid = fl.uid, fl.gid
	a.SetTimes(nil, &fl.mtime, &fl.mtime)
}

// resize changes the length of data to n, zero-filled when it grows, and
// marks what it grew by as written; fl.mu is held.
func (fl *file) resize(n int64) {
	old := int64(len(fl.data))
	fl.data = setLen(fl.data, n)
	if n > old {
		fl.mark(old, n)
	}
	fl.mtime = time.Now()
}

// setLen returns b with length n, what it grows by zeroed.
func setLen(b []byte, n int64) []byte {
	old := int64(len(b))
	if n <= int64(cap(b)) {
		b = b[:n]
		if n > old {
			clear(b[old:])
		}
		return b
	}
	grown := make([]byte, n, max(n, 2*old))
	copy(grown, b)
	return grown
}

// mark records [from, to) as written since the last sync; fl.mu is
// held. Writes that follow one another (an append-only file's) extend
// one span; past 64 spans they are merged into one.
func (fl *file) mark(from, to int64) {
	if k := len(fl.dirty); k > 0 && fl.dirty[k-1].to >= from && fl.dirty[k-1].from <= to {
		last := &fl.dirty[k-1]
		last.from, last.to = min(last.from, from), max(last.to, to)
		return
	}
	fl.dirty = append(fl.dirty, span{from, to})
	if len(fl.dirty) > 64 {
		all := span{fl.dirty[0].from, fl.dirty[0].to}
		for _, s := range fl.dirty[1:] {
			all.from, all.to = min(all.from, s.from), max(all.to, s.to)
		}
		fl.dirty = []span{all}
	}
}

// sync makes synced equal data, copying only the ranges written since
// the last sync; fl.mu is held.
func (fl *file) sync() {
	n := int64(len(fl.data))
	fl.synced = setLen(fl.synced, n)
	for _, s := range fl.dirty {
		from, to := min(s.from, n), min(s.to, n)
		copy(fl.synced[from:to], fl.data[from:to])
	}
	fl.dirty = fl.dirty[:0]
}

// drop turns data back into synced, and returns how many bytes it
// changed at most (0: it was in sync).
func (fl *file) drop() int64 {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	n := fl.unsynced()
	if n == 0 && len(fl.data) == len(fl.synced) {
		return 0
	}
	fl.data = slices.Clone(fl.synced)
	fl.dirty = fl.dirty[:0]
	return max(n, 1)
}

// unsynced is how many bytes the dirty spans cover, and the synced bytes
// cut since; fl.mu is held.
func (fl *file) unsynced() int64 {
	var n int64
	for _, s := range fl.dirty {
		n += s.to - s.from
	}
	if d := int64(len(fl.synced)) - int64(len(fl.data)); d > 0 {
		n += d
	}
	return n
}

// directory is a folder: its entries are the Inode's children, durable
// as soon as they change.
type directory struct {
	fs.Inode
	lfs *FS

	mu sync.Mutex
	attrs
}

var (
	_ fs.NodeGetattrer = (*directory)(nil)
	_ fs.NodeSetattrer = (*directory)(nil)
	_ fs.NodeCreater   = (*directory)(nil)
	_ fs.NodeMkdirer   = (*directory)(nil)
	_ fs.NodeUnlinker  = (*directory)(nil)
	_ fs.NodeRmdirer   = (*directory)(nil)
	_ fs.NodeRenamer   = (*directory)(nil)
	_ fs.NodeFsyncer   = (*directory)(nil)
	_ fs.NodeStatfser  = (*directory)(nil)
)

func (d *directory) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.attr(&out.Attr)
	return fs.OK
}

// attr fills a with the folder's attributes; d.mu is held.
func (d *directory) attr(a *fuse.Attr) {
	a.Mode = syscall.S_IFDIR | d.mode
	a.Nlink = 2
	a.Uid, a.Gid = d.uid, d.gid
}

func (d *directory) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	d.mu.Lock()
	d.attrs.set(in)
	d.mu.Unlock()
	return d.Getattr(ctx, fh, out)
}

// caller is who asks: the owner of what it creates.
func caller(ctx context.Context) (uid, gid uint32) {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Uid, c.Gid
	}
	return uint32(os.Getuid()), uint32(os.Getgid())
}

func (d *directory) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if d.GetChild(name) != nil {
		return nil, nil, 0, syscall.EEXIST
	}
	uid, gid := caller(ctx)
	fl := &file{lfs: d.lfs, attrs: attrs{mode & 0o7777, uid, gid}, mtime: time.Now()}
	ch := d.NewPersistentInode(ctx, fl, fs.StableAttr{Mode: syscall.S_IFREG})
	d.lfs.add(fl)
	fl.mu.Lock()
	fl.attr(&out.Attr)
	fl.mu.Unlock()
	return ch, &handle{append: flags&syscall.O_APPEND != 0}, fuse.FOPEN_DIRECT_IO, fs.OK
}

func (d *directory) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.GetChild(name) != nil {
		return nil, syscall.EEXIST
	}
	uid, gid := caller(ctx)
	sub := &directory{lfs: d.lfs, attrs: attrs{mode & 0o7777, uid, gid}}
	ch := d.NewPersistentInode(ctx, sub, fs.StableAttr{Mode: syscall.S_IFDIR})
	sub.attr(&out.Attr)
	return ch, fs.OK
}

func (d *directory) Unlink(_ context.Context, name string) syscall.Errno {
	ch := d.GetChild(name)
	switch {
	case ch == nil:
		return syscall.ENOENT
	case ch.IsDir():
		return syscall.EISDIR
	}
	d.lfs.remove(ch)
	return fs.OK
}

func (d *directory) Rmdir(_ context.Context, name string) syscall.Errno {
	ch := d.GetChild(name)
	switch {
	case ch == nil:
		return syscall.ENOENT
	case !ch.IsDir():
		return syscall.ENOTDIR
	case len(ch.Children()) > 0:
		return syscall.ENOTEMPTY
	}
	return fs.OK
}

// Rename moves a name, replacing what the new name held; exchanging two
// names is not supported.
func (d *directory) Rename(_ context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	const noReplace, exchange = 1, 2 // RENAME_NOREPLACE, RENAME_EXCHANGE
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	if flags&exchange != 0 {
		return syscall.EINVAL
	}
	old := newParent.EmbeddedInode().GetChild(newName)
	switch {
	case old == nil || old == ch:
	case flags&noReplace != 0:
		return syscall.EEXIST
	case old.IsDir() && !ch.IsDir():
		return syscall.EISDIR
	case !old.IsDir() && ch.IsDir():
		return syscall.ENOTDIR
	case old.IsDir() && len(old.Children()) > 0:
		return syscall.ENOTEMPTY
	default:
		d.lfs.remove(old)
	}
	return fs.OK
}

// Fsync of a folder succeeds: names are durable as soon as they change.
func (d *directory) Fsync(context.Context, fs.FileHandle, uint32) syscall.Errno { return fs.OK }

// Statfs reports a roomy file system, for programs that check free space.
func (d *directory) Statfs(_ context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize = 4096, 4096
	out.Blocks, out.Bfree, out.Bavail = 1<<24, 1<<24, 1<<24
	out.Files, out.Ffree = 1<<20, 1<<20
	out.NameLen = 255
	return fs.OK
}

// ErrUnavailable wraps the reason this machine refuses a lazyfs mount.
var ErrUnavailable = errors.New("lazyfs: this machine refuses a FUSE mount")

var available = sync.OnceValue(probe)

// Available returns nil when this process can mount a lazyfs, or
// ErrUnavailable wrapping the reason: it mounts one on a temporary
// folder, writes, syncs and drops there, and unmounts it, once per
// process. A machine needs the fuse kernel module (/dev/fuse), and
// either root or the fusermount (or fusermount3) program; inside a
// container, the /dev/fuse device and the SYS_ADMIN capability.
func Available() error { return available() }

func probe() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: /dev/fuse: %v (load the fuse kernel module; in a container, pass the device)", ErrUnavailable, err)
	}
	dir, err := os.MkdirTemp("", "locktorture-lazyfs-probe-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer os.Remove(dir)
	f, err := mount(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	err = func() error {
		p := filepath.Join(dir, "probe")
		if err := os.WriteFile(p, []byte("probe"), 0o600); err != nil {
			return err
		}
		if f.Drop(); fileSize(p) != 0 {
			return errors.New("an unsynced write survived a drop")
		}
		return nil
	}()
	if uerr := f.Unmount(); uerr != nil {
		err = errors.Join(err, uerr)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}
