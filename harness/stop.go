package harness

import "github.com/locktorture/locktorture/history"

// WithStop calls fn with every event once it is in the history, from the
// goroutine that recorded it (so fn must be concurrency-safe and quick). Once
// fn returns true the run ends as at its Duration, and Summary.Stopped is
// set. fn sees each client's events in order, and a cause before its effect
// (a release's invoke before the next holder's acquire ok): for a watcher
// that ends a run at its first violation; the verdict stays the checker's.
func WithStop(fn func(history.Event) bool) Option {
	return func(o *runOptions) { o.stop = fn }
}
