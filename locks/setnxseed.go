package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// newSetNXSeed builds "setnx-seed": the single-instance lock exactly
// as the seed article writes it — SET key token NX PX ttl to acquire, the
// Lua compare-and-delete to release — and nothing more: the article tells
// the client no validity, so the client holds from the moment its SET
// returned until it releases, however long that takes. The key's TTL
// protects liveness (a crashed holder's key expires), not safety: a
// holder paused past the TTL, or whose SET's reply came back late, still
// acts as the holder after the key expired and another client took it.
// Beside setnx (validity start + TTL − drift, counted from before the
// SET), it shows what the validity buys. The lease's Validity is
// [UntilRelease] after the SET was sent, as ProcessLock gives redis-py's
// Lock. Extend (which the article does not have) is setnx's compare-and-
// pexpire, with no validity to check. No fencing tokens.
func newSetNXSeed(cfg Config) (Lock, error) {
	return mutant("setnx-seed", cfg, setnxBug{untilRelease: true}, newSetNX)
}

// waitReplica sends WAIT Config.WaitReplicas after attempt's granted SET
// of key: nil if enough replicas acknowledged it; else, having
// deleted the key (best effort), ErrNotAcquired, or the WAIT's error
// (outcome unknown). The promoted replica of a later failover then has
// every key a client held; what is left of the failover window is a
// replica's own clock, and a replica restarted empty.
func (l *setnx) waitReplica(ctx context.Context, attempt int, key, token string) error {
	want := l.cfg.WaitReplicas
	wctx, cancel := nodeCtx(ctx, l.cfg)
	var c interface {
		Wait(ctx context.Context, numSlaves int, timeout time.Duration) *redis.IntCmd
	}
	if w, ok := l.client.(*redis.Client); ok {
		c = w
	}
	if cc, ok := l.client.(*redis.ClusterClient); ok {
		// WAIT names no key: ask the master of this one.
		m, err := cc.MasterForKey(wctx, key)
		if err != nil {
			cancel()
			l.cleanup(ctx, attempt, key, token)
			return fmt.Errorf("WAIT %d: the master of %q: %w", want, key, err)
		}
		c = m
	}
	n, err := c.Wait(wctx, want, l.cfg.Timeout/2).Result()
	cancel()
	if err == nil && n >= int64(want) {
		return nil
	}
	l.cleanup(ctx, attempt, key, token)
	if err != nil {
		return fmt.Errorf("WAIT %d: %w", want, err)
	}
	return fmt.Errorf("WAIT %d: %d replicas acknowledged the SET within %v: %w", want, n, l.cfg.Timeout/2, ErrNotAcquired)
}
