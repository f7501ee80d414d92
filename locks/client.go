package locks

import (
	"context"
	"time"

	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
)

// PoolSize is the most connections each lock of this package keeps per
// node: enough for the harness's many concurrent clients sharing one Lock
// without queueing for a connection, and the bound by which the harness
// reckons the file descriptors of a run.
const PoolSize = 64

// ClientOptions returns the go-redis options with which every lock of this
// package reaches the node at addr, for cfg as New hands it to Spec.New
// (its defaults set). A lock written elsewhere and registered with
// Register should build its clients the same way (NewClient,
// NewSingleClient), or its verdicts measure go-redis's defaults rather
// than the lock:
//
//   - MaxRetries -1 (no retries: with go-redis's 3, a SET NX retried after
//     a read timeout came back false while the key held the client's own
//     token, and an INCR was applied twice), ContextTimeoutEnabled (else a
//     deadline is ignored until the 5 s read timeout), one dial attempt,
//     RESP2 without CLIENT SETINFO and without maintenance notifications
//     (one round trip on connect instead of four), go-redis's logger
//     silenced: see internal/redisopt, their one definition, for the
//     measurements;
//   - dial, read and write timeouts and the pool wait are cfg.Timeout, the
//     per-node bound, so that no call hangs longer than the lock expects
//     even when a caller's ctx has no deadline (go-redis's defaults when
//     cfg.Timeout is 0);
//   - PoolSize 64 (see PoolSize).
//
// Callers still wrap every per-node call in context.WithTimeout(ctx,
// cfg.Timeout) (see nodeCtx).
//
// Beware a go-redis circuit breaker these options cannot turn off: after
// PoolSize failed dials (counted over the client's life, not in a row)
// the pool fails every dial at once with the last dial error and probes
// the node once a second in the background until a dial succeeds. A node
// that comes back may therefore look down for up to about a second.
func ClientOptions(addr string, cfg Config) *redis.Options {
	o := redisopt.Options(addr, cfg.Password)
	if cfg.Timeout > 0 {
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = cfg.Timeout, cfg.Timeout, cfg.Timeout, cfg.Timeout
	}
	o.PoolSize = PoolSize
	return o
}

// NewClient returns a go-redis client of the node at addr with
// ClientOptions(addr, cfg).
func NewClient(addr string, cfg Config) *redis.Client {
	return redis.NewClient(ClientOptions(addr, cfg))
}

// nodeCtx bounds one call to one node by cfg.Timeout.
func nodeCtx(ctx context.Context, cfg Config) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, cfg.Timeout)
}

// cleanupCtx is for best-effort clean-up (unlocking partial grants): it
// keeps ctx's values but not its cancellation, so a caller that gave up
// still cleans up, bounded by cfg.Timeout.
func cleanupCtx(ctx context.Context, cfg Config) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout)
}

// Drift is the allowance for clock drift between the client and the
// nodes: 1% of the TTL plus 2 ms, the factor the RedLock description
// suggests (the 2 ms covers the milliseconds resolution of PX). A lease's
// validity ends Drift before the key's expiry as measured on the
// client's clock from before the SET was sent.
func Drift(ttl time.Duration) time.Duration {
	return ttl/100 + 2*time.Millisecond
}

// ctxErr returns ctx.Err(), or context.DeadlineExceeded once ctx's
// deadline has passed even if ctx's timer has not fired yet: go-redis
// sets the socket deadline to the context's, and the resulting i/o
// timeout can beat the timer, which would make a caller's deadline look
// like a node failure.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
