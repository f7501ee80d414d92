package locks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/internal/wait"
	"github.com/redis/go-redis/v9"
)

// setnx is the single-instance lock on Config.Addrs[0], or on the primary
// that Config.Sentinels name (see NewSingleClient):
//
//   - Acquire: SET key token NX PX ttl, with a fresh 128-bit random token
//     per call. With Config.Fencing one Lua script does the SET and, only
//     if it succeeded, INCR of key+":fence", and the counter is the lease's
//     fencing token.
//   - Release: a Lua compare-and-delete; ErrNotHeld if the key did not
//     hold the token.
//   - Extend: a Lua compare-and-pexpire; ErrNotHeld if the key did not
//     hold the token, or at once, without asking, if the lease's validity
//     has already passed.
//
// Validity. A lease is valid until start + TTL − drift, where start is
// the time.Now taken before the command was sent: the client cannot know
// when the server set the key, only that it was not earlier, so measuring
// from before the send is the safe side; drift is TTL×1% + 2 ms, the same
// allowance as RedLock's (see drift). The time spent waiting for the
// reply therefore comes off the validity the caller sees.
//
// Retries and unknown outcomes. Acquire makes up to Config.Tries attempts,
// all with the same token, sleeping a random back-off from
// [RetryDelay/2, RetryDelay) between them. An attempt whose command failed
// (timeout, lost connection) has an unknown outcome: its SET may have
// landed. If the last attempt failed that way, Acquire returns its error
// as is (wrapped): outcome unknown. If a later attempt got a definite "no"
// after an earlier unknown one, the "no" may have been caused by this
// call's own earlier SET; Acquire still returns ErrNotAcquired, which is
// honest about what the caller may do: it does not know that it holds the
// lock, so it must not act as the holder. Either way, whenever some
// attempt's outcome was unknown, Acquire first tries a compare-and-delete
// of its token (best effort, with its own timeout, even when ctx was
// cancelled), so that a SET that landed unseen does not block the key
// until its TTL ends; if that clean-up fails too, the key may hold the
// token until then, which costs liveness, never safety. A cancelled ctx
// ends the loop with ctx.Err(), wrapped.
//
// Evidence ([NodeReporter]): node 0's answer (in a Redis Cluster, the
// answer of the master of the key's slot, see node) to each attempt's command
// (the GET of setnx-get-set counts as a refusal when the key is held) and
// to the clean-up, whose attempt is the last one made.
//
// setnxBug turns the lock into one of the setnx mutants.
type setnx struct {
	name    string
	cfg     Config
	drift   time.Duration
	client  redis.UniversalClient
	backoff *Backoff
	bug     setnxBug
	// clientToken, when set, makes the token fixed per client: this
	// lock's clientToken and the caller's number (setnx-client-token).
	clientToken string
}

// setnxBug selects the deliberate bug of a setnx mutant (mutants.go); the
// zero value is the correct lock.
type setnxBug struct {
	// plainDel releases with DEL key, without comparing the token.
	plainDel bool
	// getThenSet acquires with GET key and, if it was empty, SET key
	// token PX ttl (no NX): check-then-act.
	getThenSet bool
	// noTTL acquires with SET key token NX and no expiry; Extend only
	// checks that the key still holds the token.
	noTTL bool
	// untilRelease is not a bug of the code but of the pattern: the lock
	// as the seed article writes it (setnxseed.go), which tells the
	// client no validity, so that it holds from acquire until release.
	untilRelease bool
	// bareExtend extends with PEXPIRE key ttl: no token check, and no
	// check of the lease's validity either.
	bareExtend bool
}

var (
	_ Lock         = (*setnx)(nil)
	_ NodeReporter = (*setnx)(nil)
)

// ReportsNodes implements [NodeReporter]: node 0's every answer.
func (l *setnx) ReportsNodes() bool { return true }

// newSetNX builds the lock called name (for error messages) from cfg.
func newSetNX(name string, cfg Config, bug setnxBug) (*setnx, error) {
	cfg, err := validConfig(name, cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.WaitReplicas < 0:
		return nil, fmt.Errorf("locks: %s: WaitReplicas %d is negative", name, cfg.WaitReplicas)
	case cfg.WaitReplicas > 0 && len(cfg.Sentinels) == 0 && !cfg.Cluster:
		return nil, fmt.Errorf("locks: %s: WAIT needs a primary with replicas, found through Sentinels (topology failover) or a Redis Cluster (topology cluster)", name)
	}
	return &setnx{
		name:    name,
		cfg:     cfg,
		drift:   Drift(cfg.TTL),
		client:  NewUniversalClient(cfg),
		backoff: NewBackoff(cfg),
		bug:     bug,
	}, nil
}

// validConfig applies the defaults to cfg and checks what every lock of
// this package needs.
func validConfig(name string, cfg Config) (Config, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return cfg, err
	}
	if d := Drift(cfg.TTL); cfg.TTL <= d {
		return cfg, fmt.Errorf("locks: %s: TTL %v is not longer than the drift allowance %v", name, cfg.TTL, d)
	}
	if cfg.Timeout < 0 || cfg.RetryDelay < 0 {
		return cfg, fmt.Errorf("locks: %s: negative Timeout %v or RetryDelay %v", name, cfg.Timeout, cfg.RetryDelay)
	}
	cfg.Tries = max(cfg.Tries, 1)
	return cfg, nil
}

// Acquire implements [Lock].
func (l *setnx) Acquire(ctx context.Context, key string) (Lease, error) {
	token := l.token(ctx)
	ev := ContextEvidence(ctx)
	unknown := false // some attempt's SET may have landed unseen
	var last error   // the last attempt's error; nil after a definite "no"
	attempts := 0
	for try := range l.cfg.Tries {
		if try > 0 {
			if err := wait.Sleep(ctx, l.backoff.Next()); err != nil {
				last = err
				break
			}
		}
		start := time.Now()
		granted, fence, err := l.set(ctx, key, token)
		l.refreshSlots(err)
		attempts = try + 1
		ev.add(NodeAnswer{Node: l.node(ctx, key), Attempt: attempts, Answer: answerOf(granted, err), Err: err})
		if err == nil && granted && l.cfg.WaitReplicas > 0 {
			err = l.waitReplica(ctx, attempts, key, token)
			if err != nil {
				return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, err)
			}
		}
		if err == nil && granted {
			return Lease{Key: key, Token: token, Fence: fence, Validity: start.Add(l.validity())}, nil
		}
		last = err
		if err != nil {
			unknown = true
			if ctxErr(ctx) != nil {
				break
			}
		}
	}
	if unknown {
		l.cleanup(ctx, attempts, key, token)
	}
	// A done ctx first, then the last attempt's error, else a definite no.
	return Lease{}, fmt.Errorf("%s: acquire %q: %w", l.name, key, cmp.Or(ctxErr(ctx), last, ErrNotAcquired))
}

// set makes one acquire attempt: granted reports whether this call set
// the key; fence is the fencing token (0 without fencing).
func (l *setnx) set(ctx context.Context, key, token string) (granted bool, fence int64, err error) {
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	ttl := l.cfg.TTL.Milliseconds()
	switch {
	case l.bug.getThenSet:
		err := l.client.Get(ctx, key).Err()
		if err == nil {
			return false, 0, nil // held by someone
		}
		if !errors.Is(err, redis.Nil) {
			return false, 0, err
		}
		// The bug: another client may set the key between the GET and
		// this SET, which overwrites it.
		if err := l.client.Do(ctx, "SET", key, token, "PX", ttl).Err(); err != nil {
			return false, 0, err
		}
		return true, 0, nil
	case l.clientToken != "":
		n, err := acquireOwnScript.Run(ctx, l.client, []string{key}, token, ttl).Int64()
		return n > 0, 0, err
	case l.cfg.Fencing:
		n, err := acquireFencedScript.Run(ctx, l.client, []string{key, l.fenceKey(key)}, token, ttl).Int64()
		if err != nil {
			return false, 0, err
		}
		return n > 0, n, nil
	default:
		args := []any{"SET", key, token, "NX", "PX", ttl}
		if l.bug.noTTL {
			args = args[:4] // the bug: no expiry
		}
		err := l.client.Do(ctx, args...).Err()
		if errors.Is(err, redis.Nil) {
			return false, 0, nil
		}
		return err == nil, 0, err
	}
}

// token is the token of an acquire: 128 fresh random bits, or, for a
// token fixed per client, the lock's clientToken and the caller's number
// (Caller; 0 when ctx names none).
func (l *setnx) token(ctx context.Context) string {
	if l.clientToken == "" {
		return newToken()
	}
	c, _ := Caller(ctx)
	return fmt.Sprintf("%s:%d", l.clientToken, c)
}

// cleanup deletes key if it holds token, best effort, even if ctx is
// done; it is the clean-up after attempt.
func (l *setnx) cleanup(ctx context.Context, attempt int, key, token string) {
	ev := ContextEvidence(ctx)
	ctx, cancel := cleanupCtx(ctx, l.cfg)
	defer cancel()
	n, err := releaseScript.Run(ctx, l.client, []string{key}, token).Int64() // best effort: an error leaves the key to its TTL
	ev.add(NodeAnswer{Node: l.node(ctx, key), Attempt: attempt, Cleanup: true, Answer: answerOf(n > 0, err), Err: err})
}

// Release implements [Lock].
func (l *setnx) Release(ctx context.Context, lease Lease) error {
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	var (
		n   int64
		err error
	)
	if l.bug.plainDel {
		n, err = l.client.Del(ctx, lease.Key).Result() // the bug: no token check
	} else {
		n, err = releaseScript.Run(ctx, l.client, []string{lease.Key}, lease.Token).Int64()
	}
	Report(ctx, NodeAnswer{Node: l.node(ctx, lease.Key), Attempt: 1, Answer: answerOf(n > 0, err), Err: err})
	if err != nil {
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: release %q: %w", l.name, lease.Key, ErrNotHeld)
	}
	return nil
}

// Extend implements [Lock].
func (l *setnx) Extend(ctx context.Context, lease Lease) (Lease, error) {
	start := time.Now()
	if !lease.Valid(start) && !l.bug.bareExtend {
		return Lease{}, fmt.Errorf("%s: extend %q: validity ended %v ago: %w", l.name, lease.Key, start.Sub(lease.Validity), ErrNotHeld)
	}
	ctx, cancel := nodeCtx(ctx, l.cfg)
	defer cancel()
	var n int64
	var err error
	if l.bug.bareExtend {
		var ok bool
		ok, err = l.client.PExpire(ctx, lease.Key, l.cfg.TTL).Result()
		if ok {
			n = 1
		}
	} else {
		script := extendScript
		if l.bug.noTTL {
			script = checkScript
		}
		n, err = script.Run(ctx, l.client, []string{lease.Key}, lease.Token, l.cfg.TTL.Milliseconds()).Int64()
	}
	Report(ctx, NodeAnswer{Node: l.node(ctx, lease.Key), Attempt: 1, Answer: answerOf(n > 0, err), Err: err})
	if err != nil {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, err)
	}
	if n == 0 {
		return Lease{}, fmt.Errorf("%s: extend %q: %w", l.name, lease.Key, ErrNotHeld)
	}
	lease.Validity = start.Add(l.validity())
	return lease, nil
}

// validity is how long after the start of a successful command the
// lease is valid: TTL − drift, or UntilRelease for setnx-seed.
func (l *setnx) validity() time.Duration {
	if l.bug.untilRelease {
		return UntilRelease
	}
	return l.cfg.TTL - l.drift
}

// node is the index in Config.Addrs of the node that serves key: 0 but
// in a Redis Cluster, where it is the master of key's slot as the
// cluster client's map of the slots says (its last CLUSTER SLOTS; a
// MOVED reply updates it); 0 when the map names no node of Addrs.
func (l *setnx) node(ctx context.Context, key string) int {
	cc, ok := l.client.(*redis.ClusterClient)
	if !ok {
		return 0
	}
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return 0
	}
	addr := m.Options().Addr
	if to, ok := l.cfg.AddrMap[addr]; ok {
		addr = to
	}
	if i := slices.Index(l.cfg.Addrs, addr); i >= 0 {
		return i
	}
	return 0
}

// refreshSlots has a cluster client reload its map of the slots after a
// CLUSTERDOWN reply: a master cut off the majority says so once it notices,
// while the majority has promoted its replica, which a client that never
// asks again would not find (go-redis reloads on MOVED and ASK, and
// otherwise only every few seconds).
func (l *setnx) refreshSlots(err error) {
	if cc, ok := l.client.(*redis.ClusterClient); ok && err != nil && strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		cc.ReloadState(context.Background())
	}
}

// fenceKey is the key of key's fencing counter: in a Redis Cluster, with
// key as its hash tag, so that both are in one slot, as one script needs.
func (l *setnx) fenceKey(key string) string {
	if l.cfg.Cluster {
		return "{" + key + "}:fence"
	}
	return fenceKey(key)
}

// Close implements [Lock].
func (l *setnx) Close() error { return l.client.Close() }
