package locks

import (
	"context"
	"errors"
	"fmt"
)

// newSetNXSeed builds "setnx-seed" (#16): the single-instance lock exactly
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
	return setnxMutant("setnx-seed", cfg, setnxBug{untilRelease: true})
}

// newSetNXWait builds "setnx-wait" (#16): setnx on the primary of a
// failover topology, which after a granted SET sends WAIT 1 (bounded by
// half of Config.Timeout) and holds only if the replica acknowledged the
// key. If none did in time, it deletes its key (compare-and-delete, best
// effort) and reports ErrNotAcquired; a failed WAIT leaves the outcome
// unknown. The Redis page names WAIT as what narrows the failover window
// of the single-instance lock without closing it: the replica's copy
// expires by the replica's clock, a replica restarted empty forgets it,
// and the sentinels may promote a replica that has not yet acknowledged
// a later grant. It needs the replica: Config.Sentinels, refused without.
// No fencing tokens.
func newSetNXWait(cfg Config) (Lock, error) {
	if len(cfg.Sentinels) == 0 {
		return nil, errors.New("locks: setnx-wait needs a primary with a replica, found through Sentinels (topology failover)")
	}
	return setnxMutant("setnx-wait", cfg, setnxBug{waitReplica: true})
}

// waitReplica sends WAIT 1 after attempt's granted SET of key: nil if a
// replica acknowledged it; else, having deleted the key (best effort),
// ErrNotAcquired, or the WAIT's error (outcome unknown).
func (l *setnx) waitReplica(ctx context.Context, attempt int, key, token string) error {
	wctx, cancel := nodeCtx(ctx, l.cfg)
	n, err := l.client.Wait(wctx, 1, l.cfg.Timeout/2).Result()
	cancel()
	if err == nil && n >= 1 {
		return nil
	}
	l.cleanup(ctx, attempt, key, token)
	if err != nil {
		return fmt.Errorf("WAIT 1: %w", err)
	}
	return fmt.Errorf("WAIT 1: no replica acknowledged the SET within %v: %w", l.cfg.Timeout/2, ErrNotAcquired)
}
