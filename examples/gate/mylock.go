package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locktorture/locktorture/locks"
)

// Release scripts: the correct compare-and-delete, and the plain DEL that
// deletes whatever lock holds the key (the bug the gate catches).
const (
	CompareAndDelete = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
	PlainDel         = `return redis.call('DEL', KEYS[1])`
	compareAndExtend = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`
)

// MyLock stands for your lock: a single-instance SET key token NX PX ttl,
// released by the Lua script Release, its validity counted from before
// the SET was sent, less a drift of 1% of the TTL and 2 ms.
type MyLock struct {
	client  *redis.Client
	ttl     time.Duration
	release *redis.Script
	extend  *redis.Script
}

var _ locks.Lock = (*MyLock)(nil)

// New builds a MyLock from the run's configuration, releasing with the
// script release. locks.NewClient gives go-redis the options a torture
// needs (no hidden retries, deadlines honoured); your own client is fine
// too, if it does not retry behind your back.
func New(cfg locks.Config, release string) *MyLock {
	return &MyLock{client: locks.NewClient(cfg.Addrs[0], cfg), ttl: cfg.TTL, release: redis.NewScript(release), extend: redis.NewScript(compareAndExtend)}
}

func (l *MyLock) validity(start time.Time) time.Time {
	return start.Add(l.ttl - l.ttl/100 - 2*time.Millisecond)
}

// Acquire sets the key if it is free. A failed SET is ErrNotAcquired; any
// other error leaves the outcome unknown.
func (l *MyLock) Acquire(ctx context.Context, key string) (locks.Lease, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return locks.Lease{}, err
	}
	token := hex.EncodeToString(b)
	start := time.Now()
	ok, err := l.client.SetNX(ctx, key, token, l.ttl).Result()
	if err != nil {
		return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, err)
	}
	if !ok {
		return locks.Lease{}, fmt.Errorf("acquire %q: %w", key, locks.ErrNotAcquired)
	}
	return locks.Lease{Key: key, Token: token, Validity: l.validity(start)}, nil
}

// Release runs the release script.
func (l *MyLock) Release(ctx context.Context, lease locks.Lease) error {
	n, err := l.release.Run(ctx, l.client, []string{lease.Key}, lease.Token).Int()
	switch {
	case err != nil:
		return fmt.Errorf("release %q: %w", lease.Key, err)
	case n == 0:
		return fmt.Errorf("release %q: %w", lease.Key, locks.ErrNotHeld)
	}
	return nil
}

// Extend pushes the key's expiry one TTL on while it still holds the
// lease's token.
func (l *MyLock) Extend(ctx context.Context, lease locks.Lease) (locks.Lease, error) {
	start := time.Now()
	n, err := l.extend.Run(ctx, l.client, []string{lease.Key}, lease.Token, l.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return locks.Lease{}, fmt.Errorf("extend %q: %w", lease.Key, err)
	case n == 0:
		return locks.Lease{}, fmt.Errorf("extend %q: %w", lease.Key, locks.ErrNotHeld)
	}
	lease.Validity = l.validity(start)
	return lease, nil
}

// Close closes the client.
func (l *MyLock) Close() error {
	if err := l.client.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return err
	}
	return nil
}

// Register registers MyLock as name, releasing with release, with the
// promises it makes: one instance, validity counted from before the
// request, extends that check the token. The gate derives its cells from
// them.
func Register(name, release string) error {
	return locks.Register(locks.Spec{
		Name:     name,
		Summary:  "my lock: SET NX PX on one node, Lua release",
		Promises: &locks.Promises{ElapsedFromRequest: true, Extends: true},
		New:      func(cfg locks.Config) (locks.Lock, error) { return New(cfg, release), nil },
	})
}
