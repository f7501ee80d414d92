package harness

import "github.com/locktorture/locktorture/history"

// WithStop calls fn with every event once it is in the history, from the
// goroutine that recorded it, so fn must be safe for concurrent use and
// quick (it holds up that client or the nemesis). Once fn returns true the
// run ends as at its Duration: no new cycle starts, cycles under way
// finish, the active fault heals, and Summary.Stopped is set.
//
// fn sees each client's events in the order they happened, and an event
// that caused another before it: a release's invoke is recorded, and seen,
// before the release is sent, hence before the acquire ok of the client
// that gets the lock next. It is meant for a watcher that ends a run at
// its first violation; the verdict is still the checker's, on the whole
// history. By default nothing watches and a run lasts Duration.
func WithStop(fn func(history.Event) bool) Option {
	return func(o *runOptions) { o.stop = fn }
}
