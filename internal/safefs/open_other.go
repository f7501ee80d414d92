//go:build !unix

package safefs

// openFlags are added to every open for reading; elsewhere than on
// unix there are none, and the checks before and after the open (Lstat,
// os.SameFile) stand alone.
const openFlags = 0
