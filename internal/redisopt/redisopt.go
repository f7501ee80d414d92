// Package redisopt is the one definition of the go-redis options this module
// talks to Redis with (the lock clients, through locks.ClientOptions; the
// cluster's administration, health-check and sentinel clients; the
// benchmarks). Each departs from a go-redis v9.23.0 default for a reason
// measured under faults:
//
//   - MaxRetries -1: with the default 3, a SET NX re-sent after a read
//     timeout came back false while the key held the client's own token,
//     and an INCR was applied twice. Without, an error is "unknown outcome".
//   - ContextTimeoutEnabled: else a call ignores the context's deadline and
//     waits for the 5 s read timeout.
//   - DialerRetries 1: one dial attempt (0 is the default 5, 100 ms apart:
//     a dead port cost 403 ms).
//   - Protocol 2, DisableIdentity, maintenance notifications off: else each
//     new connection sends HELLO 3, CLIENT MAINT_NOTIFICATIONS and two
//     CLIENT SETINFO, four round trips under a latency toxic, not one.
//
// The first call to Options silences go-redis's logging to stderr, which
// would interleave with a run's output.
//
// It imports go-redis only, so that locks and cluster, which import nothing
// else of this module, can share it.
package redisopt

import (
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// silenceLogs makes go-redis quiet, once per process.
var silenceLogs sync.Once

// Options returns the options of a client of the Redis server at addr,
// authenticated with password (none when empty): see the package doc for
// each one and why. Timeouts and the pool size are go-redis's defaults;
// callers set their own.
func Options(addr, password string) *redis.Options {
	silenceLogs.Do(func() { redis.SetLogger(&logging.VoidLogger{}) })
	return &redis.Options{
		Addr:                     addr,
		Password:                 password,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		MaxRetries:               -1,
		ContextTimeoutEnabled:    true,
		DialerRetries:            1,
	}
}
