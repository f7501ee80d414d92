//go:build !unix

package history

import (
	"errors"
	"io/fs"
	"os"
)

// openNoFollow opens path for reading when it is a regular file and not
// a link: without O_NOFOLLOW, it checks with Lstat first, then that the
// file opened is the one checked.
func openNoFollow(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		f.Close()
		return nil, errors.New("the file changed while it was opened")
	}
	return f, nil
}
