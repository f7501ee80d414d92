package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors that say the outcome of a call is known. Any other error from a
// Lock (a timeout, a refused connection, a cancelled context) means the
// outcome is unknown: the command may or may not have taken effect.
var (
	// ErrNotAcquired: the lock was not acquired and the client must not
	// act as its holder (another client holds it, or a quorum was missed
	// and the partial grants were released).
	ErrNotAcquired = errors.New("locks: not acquired")
	// ErrNotHeld: a release or extend found that the key no longer holds
	// this lease's token (it expired, or another client holds it).
	ErrNotHeld = errors.New("locks: lease not held")
)

// Lease is what a successful Acquire or Extend hands to the client.
type Lease struct {
	// Key is the locked key.
	Key string
	// Token is the random value that identifies this holder: non-empty
	// and unique to the lease.
	Token string
	// Fence is the fencing token issued with the lease, or 0 when the lock
	// issues none (history.Event.Fence records it).
	Fence int64
	// Validity is the deadline until which the client may act as the
	// holder, computed on the client's own clock. It carries a monotonic
	// clock reading (it comes from time.Now), so comparing it with
	// time.Now is immune to wall-clock jumps on the client. A lock that
	// claims no validity (it renews the lease by itself, or its users
	// hold until they release) sets it [UntilRelease] ahead.
	Validity time.Time
	// Lost is how the lock tells its holder that it no longer holds the
	// lease: a lock that renews the lease by itself (a watchdog) tells
	// when a renewal is refused, or when none succeeded within the
	// lease's last validity, as Redisson's watchdog and rueidislock's
	// cancelled context tell theirs. Release never tells. Nil for a lock
	// that never tells.
	Lost *Notice
}

// Notice is a lock's notice to the holder of a lease that it lost it:
// Done is closed when it comes, and Err says why. The zero value is not
// usable; NewNotice makes one. A nil *Notice never comes.
type Notice struct {
	done chan struct{}
	once sync.Once
	err  error     // set before done is closed
	at   time.Time // likewise
}

// NewNotice returns a notice that has not come.
func NewNotice() *Notice { return &Notice{done: make(chan struct{})} }

// Tell gives the notice, once, with why (the first why is kept), at
// time.Now.
func (n *Notice) Tell(why error) {
	n.once.Do(func() {
		n.err, n.at = why, time.Now()
		close(n.done)
	})
}

// At returns when the notice was given (with a monotonic reading), once
// Done is closed; the zero time before.
func (n *Notice) At() time.Time {
	select {
	case <-n.Done():
		return n.at
	default:
		return time.Time{}
	}
}

// Done returns a channel closed when the notice comes; nil for a nil
// Notice (it never fires).
func (n *Notice) Done() <-chan struct{} {
	if n == nil {
		return nil
	}
	return n.done
}

// Err says why the lease was lost, once Done is closed; nil before.
func (n *Notice) Err() error {
	select {
	case <-n.Done():
		return n.err
	default:
		return nil
	}
}

// Valid reports whether the lease is still inside its validity at now
// and its lock has not told the holder it lost it.
func (l Lease) Valid(now time.Time) bool { return now.Before(l.Validity) && !l.Told() }

// Told reports whether the lock has told the holder it lost the lease
// (its Notice came).
func (l Lease) Told() bool {
	select {
	case <-l.Lost.Done():
		return true
	default:
		return false
	}
}

// callerKey is the context key of WithCaller.
type callerKey struct{}

// WithCaller returns ctx carrying the caller's identity: the client on
// whose behalf a call runs, as a thread's id is to Redisson's lock. The
// harness puts its client number in every acquire; a lock whose token is
// fixed per client (Promises.ClientToken) builds it from Caller.
func WithCaller(ctx context.Context, caller int) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// Caller returns the caller's identity that WithCaller put in ctx, and
// whether there is one.
func Caller(ctx context.Context) (int, bool) {
	c, ok := ctx.Value(callerKey{}).(int)
	return c, ok
}

// Lock is the interface every system under test implements. A Lock is
// safe for concurrent use by many goroutines; each goroutine plays one
// client.
//
// The lease of a successful Acquire (and of an Extend) must carry:
//   - Key: the key it locks, as given to Acquire;
//   - Token: a non-empty token unique to this lease, by which Release and
//     Extend find it and the checkers tell holders apart;
//   - Validity: the end of the validity, taken from time.Now (plus or
//     minus durations), so that it carries a monotonic clock reading, and
//     no later than the keys that grant the lock expire.
//
// The harness stops a run with an error at the first acquire whose lease
// lacks a token, names another key, or has a validity that is zero or
// carries no monotonic reading: nothing checked about such a lock would
// mean anything.
type Lock interface {
	// Acquire tries to take key. On success the lease says until when the
	// caller may act as the holder; see Lock for what it must carry.
	// ErrNotAcquired (wrapped) means the caller definitely does not hold
	// the lock; any other error leaves the outcome unknown.
	Acquire(ctx context.Context, key string) (Lease, error)
	// Release gives the lease up. ErrNotHeld (wrapped) means the key no
	// longer held this lease's token.
	Release(ctx context.Context, l Lease) error
	// Extend pushes the lease's expiry one TTL into the future and returns
	// the lease with its new validity. ErrNotHeld (wrapped) means the
	// lease was lost.
	Extend(ctx context.Context, l Lease) (Lease, error)
	// Close releases the connections of the lock.
	Close() error
}

// Config is what every implementation is built from.
type Config struct {
	// Addrs are the Redis nodes. Single-instance locks use Addrs[0] only;
	// RedLock uses every address as an independent master. Ignored, and
	// may be empty, when Sentinels is set.
	Addrs []string
	// Sentinels, when set, are the addresses of Redis Sentinels that
	// monitor a primary called MasterName: single-instance locks (setnx
	// and its mutants) then use go-redis's failover client, which asks the
	// sentinels for the current primary on every new connection and drops
	// its connections when they announce a failover (+switch-master).
	// RedLock refuses it. The sentinels are dialed with SentinelPassword.
	// Default none: the lock talks to Addrs.
	Sentinels []string
	// SentinelPassword is the Sentinels' own password (their
	// requirepass), sent with AUTH on every connection to a sentinel; it
	// is not the nodes' Password. Empty for none, the default. Only with
	// Sentinels.
	SentinelPassword string
	// MasterName is the name under which the Sentinels monitor the
	// primary; required with Sentinels.
	MasterName string
	// Cluster: Addrs are nodes of a Redis Cluster (the harness's cluster
	// topology), and the single-instance locks that take their client
	// from NewUniversalClient (setnx, redislock) use go-redis's cluster
	// client, which sends each key's commands to the master of its slot
	// and follows MOVED and ASK. Default false.
	Cluster bool
	// AddrMap maps a node address, as the Sentinels report it, to the
	// address dialed instead; other addresses are dialed as reported. It is
	// for topologies in which the sentinels and the clients reach the nodes
	// by different paths (cluster.Failover.AddrMap,
	// cluster.RedisCluster.AddrMap). Only with Sentinels or Cluster.
	// Default none.
	AddrMap map[string]string
	// Password is sent with AUTH on every connection; empty for none.
	Password string
	// TTL is the lock's time to live. Default 10s.
	TTL time.Duration
	// Fencing asks the lock to issue a fencing token with every lease.
	Fencing bool
	// Timeout bounds every call to one node. Default TTL/10, at most 1s.
	Timeout time.Duration
	// Tries is how many attempts one Acquire makes before it gives up
	// with ErrNotAcquired. Default 3.
	Tries int
	// RetryDelay is the upper bound of the random back-off between two
	// attempts (drawn uniformly from [RetryDelay/2, RetryDelay)). Default
	// 50ms.
	RetryDelay time.Duration
	// EqualRetry makes every back-off exactly RetryDelay, with no jitter:
	// clients that fail together retry together, the in-step retries the
	// RedLock page's random delay is there to prevent. Default false.
	EqualRetry bool
	// Seed seeds the lock's back-off jitter, so that one seed gives one
	// sequence of delays. Tokens are drawn from crypto/rand regardless.
	Seed int64
	// Quorum is how many of Addrs must grant a RedLock (redlock): more
	// than half of them, at most all. Default 0: ⌊N/2⌋+1, the majority of
	// the Redis page. The seed article writes ⌈N/2⌉+1, one more for an
	// odd N (4 of 5, 3 of 3: every node), the same for an even N; a
	// larger quorum costs availability, never safety. Other locks
	// refuse it.
	Quorum int
	// WaitReplicas, for setnx on a primary found through Sentinels, sends
	// WAIT WaitReplicas after every granted SET (bounded by Timeout/2) and
	// holds only if that many replicas acknowledged the key; else it
	// deletes the key (best effort) and reports ErrNotAcquired. The Redis
	// page names WAIT as narrowing the failover window of the single-
	// instance lock, not closing it. Default 0: no WAIT. Other locks, and
	// setnx without Sentinels, refuse it (WAIT needs a replica).
	WaitReplicas int
	// ClientEnv is added to the environment of the lock's client
	// processes (the process adapter: Spec.Process), e.g. the clock shim
	// of a client-clock fault (cluster.ClientClock.Env). Go locks, which
	// run in this process, ignore it. Default none.
	ClientEnv []string
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() (Config, error) {
	switch {
	case len(c.Addrs) == 0 && len(c.Sentinels) == 0:
		return c, errors.New("locks: no Redis address")
	case len(c.Sentinels) > 0 && c.MasterName == "":
		return c, errors.New("locks: Sentinels without a MasterName")
	case len(c.AddrMap) > 0 && len(c.Sentinels) == 0 && !c.Cluster:
		return c, errors.New("locks: AddrMap is only for Sentinels or a Redis Cluster")
	case c.Cluster && len(c.Sentinels) > 0:
		return c, errors.New("locks: a Redis Cluster has no Sentinels")
	case c.SentinelPassword != "" && len(c.Sentinels) == 0:
		return c, errors.New("locks: SentinelPassword is only for Sentinels")
	}
	if c.TTL == 0 {
		c.TTL = 10 * time.Second
	}
	if c.TTL < 0 {
		return c, fmt.Errorf("locks: negative TTL %v", c.TTL)
	}
	if c.Timeout == 0 {
		c.Timeout = min(c.TTL/10, time.Second)
	}
	if c.Tries == 0 {
		c.Tries = 3
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = 50 * time.Millisecond
	}
	return c, nil
}

// Spec describes one registered implementation.
type Spec struct {
	// Name selects the implementation, e.g. "setnx".
	Name string
	// Summary is a one-line description; for a mutant it names the bug.
	Summary string
	// Mutant marks a deliberately broken implementation; Bugs says where
	// its bug shows.
	Mutant bool
	// Bugs are a mutant's deliberate bugs, each as the row of the
	// literature table (the cell name after the lock's, e.g.
	// "client-pause", "+extend/client-pause") whose promise it breaks and
	// the property that shows it: the matrix runs a mutant on those rows
	// and expects the property violated there. Its promises (those of the
	// lock it mutates) must select every row named.
	Bugs []Bug
	// MultiNode is true when the lock uses every address in Config.Addrs
	// (RedLock); otherwise only the first.
	MultiNode bool
	// Fencing is true when the lock can issue fencing tokens.
	Fencing bool
	// Quorum is true when the lock takes Config.Quorum (RedLock).
	Quorum bool
	// Wait is true when the lock takes Config.WaitReplicas (setnx).
	Wait bool
	// Cluster is true when the lock takes Config.Cluster: it speaks
	// Redis Cluster (setnx and redislock, through NewUniversalClient).
	Cluster bool
	// Nodes is the number of nodes a run starts for the lock when none
	// is asked for. Default: 5 with MultiNode, else 1.
	Nodes int
	// Server is what the lock's nodes run: "" for redis-server, "etcd"
	// for etcd members (cluster.ServerEtcd), which the harness then
	// starts instead. Default "".
	Server string
	// Language is what the lock is written in, for the results table.
	// Default "Go".
	Language string
	// Process is true when the lock's clients run as processes of their
	// own (the process adapter), so that an environment (Config.ClientEnv)
	// such as the clock shim reaches them; a Go lock runs in this process.
	Process bool
	// Check, when set, says what the lock needs that is missing (an
	// interpreter, a library), in one line, before a run starts
	// anything. Default none.
	Check func() error
	// Promises is what the lock declares of itself (see Promises), from
	// which the release gate derives its cells and expectations; nil: it
	// declares nothing, and the gate refuses it.
	Promises *Promises
	// New builds the lock.
	New func(Config) (Lock, error)
}

// Bug is one deliberate bug of a mutant (Spec.Bugs).
type Bug struct {
	// Row is the row of the literature table that exposes it.
	Row string
	// Property is what breaks there: "lease" (two holds overlap),
	// "resource" (an update is lost) or "liveness" (a free key is never
	// acquired again).
	Property string
	// Also are further properties the bug breaks there: "answers" (the
	// lock replies ok where the nodes show otherwise).
	Also []string
	// Why says how the bug breaks it, in a sentence.
	Why string
}

// Traits are the words the literature table selects s's rows by: the
// traits of its declared promises p (Promises.Traits), then what the
// Spec itself is: "mutant" for a mutant, "process" for a lock whose
// clients run as processes, "wait" for a lock that takes WaitReplicas,
// "quorum-size" for one that takes a Quorum.
func (s Spec) Traits(p Promises) []string {
	t := p.Traits()
	for _, b := range []struct {
		on   bool
		word string
	}{{s.Mutant, "mutant"}, {s.Process, "process"}, {s.Wait, "wait"}, {s.Quorum, "quorum-size"}} {
		if b.on {
			t = append(t, b.word)
		}
	}
	return t
}

// DefaultNodes returns s.Nodes, or its default.
func (s Spec) DefaultNodes() int {
	switch {
	case s.Nodes > 0:
		return s.Nodes
	case s.MultiNode:
		return 5
	}
	return 1
}

// Lang returns s.Language, or "Go".
func (s Spec) Lang() string {
	if s.Language == "" {
		return "Go"
	}
	return s.Language
}

// ErrUnknownLock is returned by Lookup and New for a name not in the
// registry.
var ErrUnknownLock = errors.New("locks: unknown lock")

// New builds the implementation called name from cfg.
func New(name string, cfg Config) (Lock, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return s.Build(cfg)
}

// Build builds the implementation s describes from cfg, as New does once
// it has looked s up: it applies Config's defaults, refuses Fencing unless
// s.Fencing, and calls s.New.
func (s Spec) Build(cfg Config) (Lock, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Fencing && !s.Fencing {
		return nil, fmt.Errorf("locks: %s issues no fencing tokens", s.Name)
	}
	if cfg.Quorum != 0 && !s.Quorum {
		return nil, fmt.Errorf("locks: %s takes no quorum", s.Name)
	}
	if cfg.WaitReplicas != 0 && !s.Wait {
		return nil, fmt.Errorf("locks: %s takes no WAIT", s.Name)
	}
	return s.New(cfg)
}
