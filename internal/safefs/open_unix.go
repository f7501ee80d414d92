//go:build unix

package safefs

import "syscall"

// openFlags are added to every open for reading: O_NOFOLLOW fails on a
// link at the last element, O_NONBLOCK never waits for the writer of a
// named pipe (a regular file ignores it).
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
