//go:build unix

package history

import (
	"os"
	"syscall"
)

// openNoFollow opens path for reading without following a link at its
// last element (O_NOFOLLOW fails on one) and without waiting for the
// writer of a named pipe (O_NONBLOCK, which a regular file ignores).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
