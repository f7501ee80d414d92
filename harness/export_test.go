package harness

import "github.com/locktorture/locktorture/nemesis"

// SetOpenFileLimit makes the run's limit of open files n until restore is
// called, for tests of the limits.
func SetOpenFileLimit(n int) (restore func()) {
	old := openFileLimit
	openFileLimit = func() int { return n }
	return func() { openFileLimit = old }
}

// CheckLease is checkLease, for tests.
var CheckLease = checkLease

// WithView hands fn the run's view (nemesis.Target.View) before its
// clients start, for tests that follow it.
func WithView(fn func(nemesis.View)) Option {
	return func(o *runOptions) { o.view = fn }
}

// SetMachine makes the run see a machine of cores cores and available
// bytes of memory available until restore is called, for tests of the
// limits.
func SetMachine(cores int, available int64) (restore func()) {
	old := machine
	machine = func() (int, int64) { return cores, available }
	return func() { machine = old }
}
