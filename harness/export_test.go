package harness

// SetOpenFileLimit makes the run's limit of open files n until restore is
// called, for tests of the limits.
func SetOpenFileLimit(n int) (restore func()) {
	old := openFileLimit
	openFileLimit = func() int { return n }
	return func() { openFileLimit = old }
}

// CheckLease is checkLease, for tests.
var CheckLease = checkLease
