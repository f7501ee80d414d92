//go:build unix

package safefs

import (
	"os"
	"syscall"
)

// openFlags are added to every open for reading: O_NOFOLLOW fails on a
// link at the last element, O_NONBLOCK never waits for the writer of a
// named pipe (a regular file ignores it).
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// openNoFollow opens name for reading without following a link at its
// last element and without waiting for the writer of a named pipe.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|openFlags, 0)
}
