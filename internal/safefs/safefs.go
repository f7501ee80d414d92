package safefs

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

var (
	// ErrLink is wrapped by the error for a symbolic link where a file or
	// folder was wanted.
	ErrLink = errors.New("is a symbolic link")
	// ErrNotRegular is wrapped by the error for what is not a regular file
	// (or, on the way to one, a folder): a named pipe, a device, a socket.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrNotLocal is wrapped by the error for a path that is not local.
	ErrNotLocal = errors.New("is not a path inside its folder")
	// ErrTooLarge is wrapped by ReadFile's error for a file above MaxFile.
	ErrTooLarge = errors.New("is too large")
	// ErrNotEmpty is wrapped by WriteDir's error for a folder that holds
	// something.
	ErrNotEmpty = errors.New("exists and is not empty")
)

// MaxFile is the largest file ReadFile reads: 256 MiB, about a thousand times
// the largest summary.json (252 KB for 99 cells on 3 seeds) and two thousand
// times the largest results.json (101 KB).
const MaxFile = 256 << 20

// Local returns nil when path names something inside its folder: not empty,
// absolute or the folder itself, and without a ".." element (even "a/../b": a
// name a tool wrote never needs one). The error wraps ErrNotLocal.
func Local(path string) error {
	if !filepath.IsLocal(path) || filepath.Clean(path) == "." || slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return fmt.Errorf("%q %w", path, ErrNotLocal)
	}
	return nil
}

// Open opens the file name for reading, refusing a symbolic link (ErrLink: to
// a file, a folder, or dangling) and anything but a regular file
// (ErrNotRegular: a folder, a named pipe, without waiting for a writer,
// /dev/zero, a socket). Only name's last element is checked (see OpenIn), in
// an os.Root of its folder.
func Open(name string) (*os.File, error) {
	r, err := os.OpenRoot(filepath.Dir(name))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return openRegular(r, filepath.Base(name), name)
}

// RefusedError is the error for a name that is a symbolic link (ErrLink) or
// not a regular file (ErrNotRegular).
type RefusedError struct {
	// Name is the name refused.
	Name string
	// Mode is what Lstat or Stat found there.
	Mode fs.FileMode
}

func (e *RefusedError) Error() string {
	if e.Mode&fs.ModeSymlink != 0 {
		return e.Name + " " + ErrLink.Error()
	}
	return fmt.Sprintf("%s %s (%s)", e.Name, ErrNotRegular, kind(e.Mode))
}

// Unwrap returns ErrLink or ErrNotRegular.
func (e *RefusedError) Unwrap() error {
	if e.Mode&fs.ModeSymlink != 0 {
		return ErrLink
	}
	return ErrNotRegular
}

// regular returns nil for a regular file's mode, else a *RefusedError for
// name.
func regular(name string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return &RefusedError{Name: name, Mode: m}
}

// Kind names what a file that is not a regular one is ("a folder", "a named
// pipe", ...), "" for a mode it has no name for.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return ""
}

// kind is Kind, or the mode itself for one Kind has no name for.
func kind(m fs.FileMode) string {
	if k := Kind(m); k != "" {
		return k
	}
	return "mode " + m.String()
}

// ReadFile reads the file name whole, opened as Open does; above MaxFile an
// error wraps ErrTooLarge.
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	return readAll(name, f, err)
}

// readAll reads f, opened with err, whole and closes it.
func readAll(name string, f *os.File, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFile {
		return nil, fmt.Errorf("%s %w: %d bytes, more than %d", name, ErrTooLarge, st.Size(), MaxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1)) // the file may grow meanwhile
	switch {
	case err != nil:
		return nil, err
	case len(b) > MaxFile:
		return nil, fmt.Errorf("%s %w: more than %d bytes", name, ErrTooLarge, MaxFile)
	}
	return b, nil
}

// OpenIn opens root/rel as Open does, rel Local, refusing a symbolic link at
// every step of rel (ErrLink), not only at its end (root itself is the
// caller's). Each step is opened in an os.Root from the one before, so ".."
// or a link cannot lead out of root even when a folder changes meanwhile; the
// file opened must be the one checked (os.SameFile).
func OpenIn(root, rel string) (*os.File, error) {
	if err := Local(rel); err != nil {
		return nil, err
	}
	dir, name := filepath.Split(filepath.Clean(rel))
	r, err := rootIn(root, dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return openRegular(r, name, filepath.Join(root, rel))
}

// ReadFileIn reads root/rel whole, opened as OpenIn does, bounded as ReadFile
// is.
func ReadFileIn(root, rel string) ([]byte, error) {
	f, err := OpenIn(root, rel)
	return readAll(filepath.Join(root, rel), f, err)
}

// rootIn opens root/dir as an os.Root one folder at a time, each refused when
// a link (Lstat) and opened from the one before; dir may be empty.
func rootIn(root, dir string) (*os.Root, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	cur := root
	for _, el := range strings.FieldsFunc(filepath.ToSlash(dir), func(c rune) bool { return c == '/' }) {
		cur = filepath.Join(cur, el)
		next, err := subRoot(r, el, cur)
		r.Close()
		if err != nil {
			return nil, err
		}
		r = next
	}
	return r, nil
}

// subRoot opens the folder el of r, which Lstat finds a folder, not a link,
// and must still be that folder once opened; path names it in errors.
func subRoot(r *os.Root, el, path string) (*os.Root, error) {
	st, err := r.Lstat(el)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", path, ErrLink)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder (%s)", path, kind(st.Mode()))
	}
	next, err := r.OpenRoot(el)
	if err != nil {
		return nil, err
	}
	if now, err := next.Stat("."); err != nil || !os.SameFile(st, now) {
		next.Close()
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	return next, nil
}

// openRegular opens name, one element of r, for reading: a link or anything
// but a regular file is refused before the open, and the file opened must be
// the one checked; path names it in errors.
func openRegular(r *os.Root, name, path string) (*os.File, error) {
	st, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st.Mode()); err != nil {
		return nil, err
	}
	f, err := r.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(st, now) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	return f, nil
}

// CopyTree copies the folder root/rel, reached as OpenIn reaches a file, to
// dst/rel, creating rel's folders under dst. Only folders and regular files
// are copied: a symbolic link is an error wrapping ErrLink, anything else one
// wrapping ErrNotRegular, each naming its path. Files are created with
// O_EXCL, so nothing under dst, a link least of all, is written through; they
// keep their read and write permissions, never execute ones: nothing copied
// is meant to run.
func CopyTree(dst, root, rel string) error {
	if err := Local(rel); err != nil {
		return err
	}
	r, err := rootIn(root, rel)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o700); err != nil {
		return err
	}
	return copyDir(r, filepath.Join(root, rel), filepath.Join(dst, rel))
}

// copyDir copies the folder r (at src) to the new folder dst.
func copyDir(r *os.Root, src, dst string) error {
	st, err := r.Stat(".")
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, st.Mode().Perm()|0o700); err != nil {
		return err
	}
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		path, target := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s %w", path, ErrLink)
		case t.IsDir():
			sub, err := subRoot(r, e.Name(), path)
			if err != nil {
				return err
			}
			err = copyDir(sub, path, target)
			sub.Close()
			if err != nil {
				return err
			}
		case t.IsRegular():
			if err := copyFile(r, e.Name(), path, target); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s %w (%s)", path, ErrNotRegular, kind(t))
		}
	}
	return nil
}

// copyFile copies the regular file name of r (at path) to dst, which must not
// exist.
func copyFile(r *os.Root, name, path, dst string) (err error) {
	in, err := openRegular(r, name, path)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()&0o666|0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

// WriteFile writes data with permissions perm to a temporary file in name's
// folder (O_EXCL, in an os.Root of it), synced, then renamed onto name: a
// reader sees the old content or the new, and a symbolic link at name is
// replaced, never written through. A folder at name is an error.
func WriteFile(name string, data []byte, perm fs.FileMode) (err error) {
	r, err := os.OpenRoot(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer r.Close()
	base := filepath.Base(name)
	if st, err := r.Lstat(base); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder", name)
	}
	tmp := "." + base + ".tmp-" + rand.Text()
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			r.Remove(tmp)
		}
	}()
	if err = writeSynced(f, data, perm); err != nil {
		return err
	}
	return r.Rename(tmp, base)
}

// writeSynced writes data to the new file f, sets perm, syncs and closes it
// (whatever the error).
func writeSynced(f *os.File, data []byte, perm fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteDir creates the folder dir, with permissions perm, filled by fill in a
// temporary folder beside it (its parent created when missing) that is
// renamed to dir when fill returns nil. dir may be an empty folder (then
// replaced); one that holds something is refused (ErrNotEmpty), a link too
// (ErrLink), before fill runs. When anything fails, the temporary folder and
// the parents WriteDir created are removed: dir is left as it was.
func WriteDir(dir string, perm fs.FileMode, fill func(tmp string) error) (err error) {
	existed := false
	switch st, err := os.Lstat(dir); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w", dir, ErrLink)
	case !st.IsDir():
		return fmt.Errorf("%s exists and is not a folder", dir)
	default:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			return fmt.Errorf("%s %w", dir, ErrNotEmpty)
		}
		existed = true
	}
	parent := filepath.Dir(dir)
	created, err := mkdirAll(parent)
	defer func() {
		if err != nil {
			for _, d := range created { // deepest first
				os.Remove(d)
			}
		}
	}()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	// Another command may have filled dir meanwhile: rename(2) never replaces
	// a folder that holds something, and this one is refused as if it had
	// found it at the start.
	taken := func(err error) error {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return fmt.Errorf("%s %w: another command wrote it meanwhile", dir, ErrNotEmpty)
		}
		return err
	}
	if existed {
		// os.Rename refuses any folder in the way; Remove removes only an
		// empty one.
		if err := os.Remove(dir); err != nil {
			return taken(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if existed {
			os.Mkdir(dir, perm)
		}
		return taken(err)
	}
	return nil
}

// mkdirAll creates dir and its missing parents, mode 0700, and returns those
// it created, deepest first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil {
			return created, err
		}
		created = append([]string{missing[i]}, created...)
	}
	return created, nil
}

// Inside reports whether inner is the folder outer or inside it, once both
// are absolute and the links of their existing parts resolved ("out" inside a
// link to a shard is inside the shard).
func Inside(inner, outer string) (bool, error) {
	in, err := realPath(inner)
	if err != nil {
		return false, err
	}
	out, err := realPath(outer)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(out, in)
	if err != nil {
		return false, nil
	}
	return rel == "." || filepath.IsLocal(rel), nil
}

// realPath is path made absolute, the links of its longest existing prefix
// resolved.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// Fresh creates a folder of its own under out (created, mode 0700, when
// missing): base, or base-1, base-2, … when another command took it first
// (two started in the same second with one --out). Each is one mkdir, which
// fails on a name that exists, so two commands never mix their histories. It
// returns the folder's name and path.
func Fresh(out, base string) (name, dir string, err error) {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", "", err
	}
	name, err = fresh(base, "", func(name string) error {
		dir = filepath.Join(out, name)
		return os.Mkdir(dir, 0o700)
	})
	if err != nil {
		return "", "", err
	}
	return name, dir, nil
}

// WriteFresh writes data, with permissions perm, to a file of its own in dir:
// base+ext, or base-1+ext, … when that name is taken (an earlier result, a
// command beside it, a link). It is written whole under a temporary name and
// hard-linked to its name, which fails on any name that exists: nothing is
// replaced or written through, and no reader sees a part. It returns the
// file's path.
func WriteFresh(dir, base, ext string, data []byte, perm fs.FileMode) (path string, err error) {
	f, err := os.CreateTemp(dir, "."+base+ext+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err = writeSynced(f, data, perm); err != nil {
		return "", err
	}
	name, err := fresh(base, ext, func(name string) error {
		path = filepath.Join(dir, name)
		return os.Link(tmp, path)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// maxFresh bounds the names fresh tries: a thousand results of one base name
// were made on purpose.
const maxFresh = 1000

// fresh calls try with base+ext, base-1+ext, … until it succeeds or fails
// otherwise than on a name that exists, and returns the name made.
func fresh(base, ext string, try func(name string) error) (string, error) {
	for i := range maxFresh {
		name := base + ext
		if i > 0 {
			name = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		err := try(name)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s%s: %d names of it taken already", base, ext, maxFresh)
}
