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
// Config.Sentinels name (NewSingleClient):
//
//   - Acquire: SET key token NX PX ttl with a fresh 128-bit token (with
//     Fencing, one script that also INCRs key+":fence", the token).
//   - Release: a Lua compare-and-delete; Extend: a compare-and-pexpire,
//     ErrNotHeld at once past the lease's validity.
//
// A lease is valid until start + TTL − drift, start taken before the
// command was sent (the server set the key no earlier).
//
// Acquire makes up to Config.Tries attempts with one token. A failed
// attempt (timeout, lost connection) may have landed: if the last one
// failed, its error is returned (outcome unknown); a later "no", maybe to
// this call's own SET, is still ErrNotAcquired: the caller does not know
// it holds. After any unknown outcome Acquire compare-and-deletes its
// token (best effort, even with ctx done); a failed clean-up costs
// liveness, never safety.
//
// Evidence: node 0's (in a Cluster, the slot master's) answer to each
// attempt (setnx-get-set's GET of a held key is a refusal) and to the
// clean-up, of the last attempt.
type setnx struct {
	base
	reports
	client redis.UniversalClient
	bug    setnxBug
	// clientToken makes the token fixed per client (setnx-client-token).
	clientToken string
}

// setnxBug selects a setnx mutant's bug (mutants.go); zero: none.
type setnxBug struct {
	plainDel   bool // release is DEL key
	getThenSet bool // acquire is GET, then SET without NX
	// noTTL: SET NX without expiry; the client still believes in TTL −
	// drift, and Extend only checks the token.
	noTTL bool
	// untilRelease is not a bug of the code but of the pattern: the seed
	// article's lock ("setnx-seed") tells the client no validity, so it
	// holds from its SET until its release however long that takes, the
	// TTL protecting liveness, not safety. Beside setnx it shows what the
	// validity buys. Extend, which the article lacks, is setnx's.
	untilRelease bool
	// bareExtend extends with PEXPIRE key ttl, as a renewal timer sends
	// it: no token or validity check (the extends behind redsync issue 72
	// and node-redlock issue 296).
	bareExtend bool
}

// newSetNX builds the lock called name from cfg.
func newSetNX(name string, cfg Config, bug setnxBug) (*setnx, error) {
	b, err := newBase(name, cfg)
	if err != nil {
		return nil, err
	}
	cfg = b.cfg
	switch {
	case cfg.WaitReplicas < 0:
		return nil, fmt.Errorf("locks: %s: WaitReplicas %d is negative", name, cfg.WaitReplicas)
	case cfg.WaitReplicas > 0 && len(cfg.Sentinels) == 0 && !cfg.Cluster:
		return nil, fmt.Errorf("locks: %s: WAIT needs a primary with replicas, found through Sentinels (topology failover) or a Redis Cluster (topology cluster)", name)
	}
	return &setnx{base: b, client: NewUniversalClient(cfg), bug: bug}, nil
}

// base is what every Redis lock of this package holds: its name, for
// errors, its Config with the defaults, its drift and its back-off.
type base struct {
	name    string
	cfg     Config
	drift   time.Duration
	backoff *Backoff
}

// newBase applies cfg's defaults and checks what every lock needs.
func newBase(name string, cfg Config) (base, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return base{}, err
	}
	d := Drift(cfg.TTL)
	if cfg.TTL <= d {
		return base{}, fmt.Errorf("locks: %s: TTL %v is not longer than the drift allowance %v", name, cfg.TTL, d)
	}
	if cfg.Timeout < 0 || cfg.RetryDelay < 0 {
		return base{}, fmt.Errorf("locks: %s: negative Timeout %v or RetryDelay %v", name, cfg.Timeout, cfg.RetryDelay)
	}
	cfg.Tries = max(cfg.Tries, 1)
	return base{name: name, cfg: cfg, drift: d, backoff: NewBackoff(cfg)}, nil
}

// independent refuses Sentinels to a lock of independent masters.
func independent(name string, cfg Config) error {
	if len(cfg.Sentinels) > 0 {
		return fmt.Errorf("locks: %s needs independent masters in Addrs, not a primary found through Sentinels", name)
	}
	return nil
}

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

// set makes one acquire attempt; fence is 0 without fencing.
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
		// The bug: another client may set the key in between.
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

// token is an acquire's token: fresh, or clientToken and the caller's
// number (0 for none).
func (l *setnx) token(ctx context.Context) string {
	if l.clientToken == "" {
		return newToken()
	}
	c, _ := Caller(ctx)
	return fmt.Sprintf("%s:%d", l.clientToken, c)
}

// cleanup is attempt's compare-and-delete, best effort, even if ctx is
// done.
func (l *setnx) cleanup(ctx context.Context, attempt int, key, token string) {
	ev := ContextEvidence(ctx)
	ctx, cancel := cleanupCtx(ctx, l.cfg)
	defer cancel()
	n, err := releaseScript.Run(ctx, l.client, []string{key}, token).Int64() // best effort: an error leaves the key to its TTL
	ev.add(NodeAnswer{Node: l.node(ctx, key), Attempt: attempt, Cleanup: true, Answer: answerOf(n > 0, err), Err: err})
}

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
	return l.answer(ctx, "release", lease.Key, n, err)
}

// answer reports node's answer n to a Release or Extend and returns its
// error: err, ErrNotHeld for 0, else nil.
func (l *setnx) answer(ctx context.Context, op, key string, n int64, err error) error {
	Report(ctx, NodeAnswer{Node: l.node(ctx, key), Attempt: 1, Answer: answerOf(n > 0, err), Err: err})
	if err == nil && n == 0 {
		err = ErrNotHeld
	}
	if err != nil {
		return fmt.Errorf("%s: %s %q: %w", l.name, op, key, err)
	}
	return nil
}

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
	if err := l.answer(ctx, "extend", lease.Key, n, err); err != nil {
		return Lease{}, err
	}
	lease.Validity = start.Add(l.validity())
	return lease, nil
}

// validity is how long after a command's start the lease is valid.
func (l *setnx) validity() time.Duration {
	if l.bug.untilRelease {
		return UntilRelease
	}
	return l.cfg.TTL - l.drift
}

// node is the index in Config.Addrs of the node that serves key: in a
// Redis Cluster the master of its slot in the client's map, else 0.
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

// refreshSlots reloads a cluster client's slots after CLUSTERDOWN: a
// master cut off the majority says so while the majority promoted its
// replica, which go-redis (reloading on MOVED and ASK, else every few
// seconds) would not find soon.
func (l *setnx) refreshSlots(err error) {
	if cc, ok := l.client.(*redis.ClusterClient); ok && err != nil && strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		cc.ReloadState(context.Background())
	}
}

// fenceKey is key's fencing counter; in a Redis Cluster key is its hash
// tag, so both are in the one slot a script needs.
func (l *setnx) fenceKey(key string) string {
	if l.cfg.Cluster {
		return "{" + key + "}:fence"
	}
	return fenceKey(key)
}

func (l *setnx) Close() error { return l.client.Close() }
