package locks

import (
	"context"
	"time"

	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
)

// PoolSize is the most connections a lock keeps per node: enough for the
// harness's concurrent clients not to queue, and the bound by which it
// reckons a run's file descriptors.
const PoolSize = 64

// ClientOptions returns the go-redis options with which every lock of this
// package reaches the node at addr, for cfg with its defaults. A lock
// registered from elsewhere should build its clients the same way
// (NewClient, NewSingleClient), or its verdicts measure go-redis's
// defaults rather than the lock: internal/redisopt's options (no retries,
// ContextTimeoutEnabled, one dial attempt, RESP2, no maintenance
// notifications; the measurements are there), every timeout and the pool
// wait cfg.Timeout, so that no call outlasts the per-node bound even
// without a deadline, and PoolSize. Callers still bound each call by
// nodeCtx.
//
// Beware a go-redis circuit breaker these options cannot turn off: after
// PoolSize failed dials over the client's life the pool fails every dial
// at once and probes the node once a second, so a node that comes back
// may look down for up to a second.
func ClientOptions(addr string, cfg Config) *redis.Options {
	o := redisopt.Options(addr, cfg.Password)
	if cfg.Timeout > 0 {
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = cfg.Timeout, cfg.Timeout, cfg.Timeout, cfg.Timeout
	}
	o.PoolSize = PoolSize
	return o
}

// NewClient returns a client of addr with ClientOptions(addr, cfg).
func NewClient(addr string, cfg Config) *redis.Client {
	return redis.NewClient(ClientOptions(addr, cfg))
}

func nodeCtx(ctx context.Context, cfg Config) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, cfg.Timeout)
}

// cleanupCtx bounds a best-effort clean-up by cfg.Timeout, without ctx's
// cancellation: a caller that gave up still cleans up.
func cleanupCtx(ctx context.Context, cfg Config) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout)
}

// Drift is the allowance for clock drift between client and nodes: 1% of
// the TTL, the RedLock description's factor, plus 2 ms for PX's
// millisecond resolution. A validity ends Drift before the key's expiry
// counted from before the SET.
func Drift(ttl time.Duration) time.Duration {
	return ttl/100 + 2*time.Millisecond
}

// ctxErr returns ctx.Err(), or DeadlineExceeded once the deadline passed
// before ctx's timer fired: go-redis's socket deadline is the context's,
// and its i/o timeout beating the timer would look like a node failure.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
