package locks

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// PoolSize is the most connections each lock of this package keeps per
// node: enough for the harness's many concurrent clients sharing one Lock
// without queueing for a connection, and the bound by which the harness
// reckons the file descriptors of a run.
const PoolSize = 64

// silenceLogs makes go-redis quiet, once per process.
var silenceLogs sync.Once

// newClient builds the go-redis client this package uses for the node at
// addr. Every option below departs from a go-redis v9.23.0 default for a
// reason measured under faults (see FACTS.md):
//
//   - MaxRetries -1: no retries. With the default (3) go-redis re-sends a
//     command after a read timeout or EOF: a SET NX retried that way came
//     back false while the key held this client's own token (the client
//     believed it lost a lock it held), and an INCR was applied twice.
//     Without retries an error means "unknown outcome" and a command is
//     applied at most once.
//   - ContextTimeoutEnabled: otherwise go-redis ignores the context's
//     deadline and a call waits for the 5 s read timeout.
//   - DialerRetries 1: one dial attempt (the field counts attempts; 0
//     means the default 5, 100 ms apart, which made a dead port cost
//     403 ms, longer than the per-node timeout).
//   - Protocol 2, DisableIdentity, maintenance notifications disabled:
//     by default each new connection sends HELLO 3, CLIENT
//     MAINT_NOTIFICATIONS and two CLIENT SETINFO before the first command,
//     four round trips under a latency toxic; these leave one (HELLO 2,
//     which also authenticates).
//   - Dial, read and write timeouts and the pool wait are cfg.Timeout, the
//     per-node bound, so that no call hangs longer than the lock expects
//     even when a caller's ctx has no deadline.
//   - PoolSize 64 (see PoolSize).
//
// Callers still wrap every per-node call in context.WithTimeout(ctx,
// cfg.Timeout) (see [nodeCtx]).
//
// go-redis logs to stderr (dial failures, pool events), which would
// interleave with the harness's output under faults; the first call to
// newClient installs a silent logger for the whole process.
//
// Beware a go-redis circuit breaker this package cannot turn off: after
// PoolSize failed dials (counted over the client's life, not in a row)
// the pool fails every dial at once with the last dial error and probes
// the node once a second in the background until a dial succeeds. A node
// that comes back may therefore look down for up to about a second.
func newClient(addr string, cfg Config) *redis.Client {
	silenceLogs.Do(func() { redis.SetLogger(&logging.VoidLogger{}) })
	return redis.NewClient(&redis.Options{
		Addr:            addr,
		Password:        cfg.Password,
		Protocol:        2,
		DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialerRetries:         1,
		DialTimeout:           cfg.Timeout,
		ReadTimeout:           cfg.Timeout,
		WriteTimeout:          cfg.Timeout,
		PoolTimeout:           cfg.Timeout,
		PoolSize:              PoolSize,
	})
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

// drift is the allowance for clock drift between the client and the
// nodes: 1% of the TTL plus 2 ms, the factor the RedLock description
// suggests (the 2 ms covers the milliseconds resolution of PX). A lease's
// validity ends drift before the key's expiry as measured on the
// client's clock from before the SET was sent.
func drift(ttl time.Duration) time.Duration {
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
