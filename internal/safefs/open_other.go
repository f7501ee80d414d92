//go:build !unix

package safefs

import (
	"fmt"
	"io/fs"
	"os"
)

// openFlags are added to every open for reading; elsewhere than on
// unix there are none, and the checks before and after the open stand
// alone.
const openFlags = 0

// openNoFollow opens name for reading when it is a regular file and not
// a link: without O_NOFOLLOW, it checks with Lstat first, then that the
// file opened is the one checked.
func openNoFollow(name string) (*os.File, error) {
	st, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return sameOpened(f, st, name)
}
