package locks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// TestRedLockQuorum: with one of five nodes held by another client, the
// Redis page's majority (3, the default) still grants and the seed
// article's ⌈N/2⌉+1 (4) too, while a quorum of every node cannot; a
// quorum of half the nodes or fewer, or more than all, and a quorum for
// a lock that takes none are refused.
func TestRedLockQuorum(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	for _, tc := range []struct {
		quorum  int
		granted bool
	}{{0, true}, {3, true}, {4, true}, {5, false}} {
		cfg := config(c, 5, time.Second)
		cfg.Quorum = tc.quorum
		l := newLock(t, "redlock", cfg)
		key := testKey(t, tc.quorum)
		setOther(t, c, 0, key, "someone-else", time.Minute)
		lease, err := l.Acquire(t.Context(), key)
		switch {
		case tc.granted && err != nil:
			t.Errorf("quorum %d, 4 of 5 nodes free: %v", tc.quorum, err)
		case !tc.granted && !errors.Is(err, locks.ErrNotAcquired):
			t.Errorf("quorum %d, 4 of 5 nodes free: %v, want ErrNotAcquired", tc.quorum, err)
		case tc.granted:
			if err := l.Release(t.Context(), lease); err != nil {
				t.Errorf("quorum %d: release: %v", tc.quorum, err)
			}
		}
	}
	for _, tc := range []struct {
		lock   string
		quorum int
		want   string
	}{
		{"redlock", 2, "quorum 2 of 5 nodes"},
		{"redlock", 6, "quorum 6 of 5 nodes"},
		{"redsync", 3, "takes no quorum"},
		{"setnx", 1, "takes no quorum"},
	} {
		cfg := config(c, 5, time.Second)
		cfg.Quorum = tc.quorum
		l, err := locks.New(tc.lock, cfg)
		if err == nil {
			l.Close()
			t.Errorf("%s with quorum %d: built", tc.lock, tc.quorum)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with quorum %d: %v, want %q", tc.lock, tc.quorum, err, tc.want)
		}
	}
}
