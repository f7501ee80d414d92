package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitReplica sends WAIT Config.WaitReplicas after attempt's granted SET
// of key: nil if enough replicas acknowledged it; else, having deleted
// the key (best effort), ErrNotAcquired, or the WAIT's error (outcome
// unknown). A promoted replica then has every key a client held; what is
// left of the failover window is a replica's own clock, and a replica
// restarted empty.
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
