// Package redisopt is the one definition of the go-redis options with
// which this module talks to Redis: the lock clients (locks.ClientOptions,
// which adds the lock's own timeouts and pool size), the cluster's
// administration and health-check clients and its sentinel clients, and
// the benchmarks' raw loop. Every option departs from a go-redis v9.23.0
// default for a reason measured under faults (FACTS.md):
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
//     403 ms).
//   - Protocol 2, DisableIdentity, maintenance notifications disabled:
//     by default each new connection sends HELLO 3, CLIENT
//     MAINT_NOTIFICATIONS and two CLIENT SETINFO before the first command,
//     four round trips under a latency toxic; these leave one (HELLO 2,
//     which also authenticates).
//
// go-redis logs to stderr (dial failures, pool events), which would
// interleave with a run's output under faults; the first call to Options
// installs a silent logger for the whole process.
//
// It lives under internal/ and imports go-redis only, so that locks and
// cluster, which import nothing else of this module, can share it.
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
