package locks

import (
	"errors"
	"testing"

	"github.com/go-redsync/redsync/v4"
	"github.com/redis/go-redis/v9"
)

// TestRedsyncTally: the per-node errors that redsync joins are counted
// whichever way they are nested, and the count decides between ErrNotHeld
// and an unknown outcome as the reference redlock does (5 nodes, quorum
// 3: unknown when the nodes that succeeded plus those that failed could
// make 3).
func TestRedsyncTally(t *testing.T) {
	failed := func(node int) error { return &redsync.RedisError{Node: node, Err: errors.New("i/o timeout")} }
	taken := func(node int) error { return &redsync.ErrNodeTaken{Node: node} }
	// redsync builds its error as errors.Join(errors.Join(…), next).
	chain := func(errs ...error) error {
		var err error
		for _, e := range errs {
			err = errors.Join(err, e)
		}
		return err
	}
	l := &redsyncLock{clients: make([]*redis.Client, 5)}
	for _, tc := range []struct {
		name    string
		err     error
		want    redsyncErrors
		unknown bool
	}{
		{"all expired", chain(redsync.ErrLockAlreadyExpired, redsync.ErrLockAlreadyExpired, redsync.ErrLockAlreadyExpired,
			redsync.ErrLockAlreadyExpired, redsync.ErrLockAlreadyExpired), redsyncErrors{expired: 5}, false},
		{"quorum taken", &redsync.ErrTaken{Nodes: []int{0, 1, 2}}, redsyncErrors{taken: 3, quorumTaken: true}, false},
		{"2 ok, 3 failed", chain(failed(0), failed(1), failed(2)), redsyncErrors{failed: 3}, true},
		{"2 ok, 1 failed, 2 taken", chain(failed(0), taken(1), taken(2)), redsyncErrors{failed: 1, taken: 2}, true},
		{"1 ok, 1 failed, 3 gone", chain(failed(0), taken(1), redsync.ErrLockAlreadyExpired, taken(2)),
			redsyncErrors{failed: 1, taken: 2, expired: 1}, false},
		{"0 ok, 2 failed, 3 gone", chain(failed(0), failed(1), redsync.ErrLockAlreadyExpired,
			redsync.ErrLockAlreadyExpired, redsync.ErrLockAlreadyExpired), redsyncErrors{failed: 2, expired: 3}, false},
	} {
		got := redsyncTally(tc.err)
		if got != tc.want {
			t.Errorf("%s: redsyncTally = %+v, want %+v", tc.name, got, tc.want)
		}
		if u := l.couldHaveSucceeded(got); u != tc.unknown {
			t.Errorf("%s: couldHaveSucceeded = %v, want %v", tc.name, u, tc.unknown)
		}
	}
}
