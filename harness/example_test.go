package harness_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// myLock stands for a lock written in another module. Any type with the
// four methods of locks.Lock will do; this one delegates to the built-in
// setnx and counts the leases it grants, to show where the user's own
// code goes. The contract to keep: ErrNotAcquired (wrapped) only when the
// caller certainly does not hold the lock, ErrNotHeld when the lease is
// certainly lost, any other error for an unknown outcome, and a
// Lease.Validity from time.Now (monotonic) that the keys outlive.
type myLock struct {
	inner   locks.Lock
	granted atomic.Int64
}

var _ locks.Lock = (*myLock)(nil)

func newMyLock(cfg locks.Config) (locks.Lock, error) {
	inner, err := locks.New("setnx", cfg)
	if err != nil {
		return nil, err
	}
	return &myLock{inner: inner}, nil
}

func (l *myLock) Acquire(ctx context.Context, key string) (locks.Lease, error) {
	lease, err := l.inner.Acquire(ctx, key)
	if err == nil {
		l.granted.Add(1)
	}
	return lease, err
}

func (l *myLock) Release(ctx context.Context, lease locks.Lease) error {
	return l.inner.Release(ctx, lease)
}

func (l *myLock) Extend(ctx context.Context, lease locks.Lease) (locks.Lease, error) {
	return l.inner.Extend(ctx, lease)
}

func (l *myLock) Close() error { return l.inner.Close() }

// Example registers a lock of one's own and tortures it for a second
// with the harness, against a real redis-server (which must be on the
// PATH), then checks the recorded history.
func Example() {
	err := locks.Register(locks.Spec{
		Name:    "my-lock",
		Summary: "my own lock (here: setnx in disguise)",
		New:     newMyLock,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "my-lock-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	sum, err := harness.Run(context.Background(), harness.Config{
		Workload: harness.Workload{Lock: "my-lock", Duration: time.Second},
		Output:   harness.Output{Dir: dir},
		// Faults: harness.Faults{Nemesis: []string{"client-pause"}}, to add faults.
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	events, err := history.ReadFile(sum.HistoryPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := checker.Check(events, checker.Options{Timeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lease", res.Lease)
	fmt.Println("resource", res.Resource)
	// Output:
	// lease valid
	// resource valid
}
