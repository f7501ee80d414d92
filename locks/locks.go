package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors that say the outcome of a call is known; any other error from a
// Lock leaves it unknown (the command may or may not have taken effect).
var (
	// ErrNotAcquired: the client must not act as the holder (another
	// holds it, or a quorum was missed and the partial grants released).
	ErrNotAcquired = errors.New("locks: not acquired")
	// ErrNotHeld: the key no longer holds this lease's token.
	ErrNotHeld = errors.New("locks: lease not held")
)

// Lease is what a successful Acquire or Extend hands to the client.
type Lease struct {
	Key   string
	Token string // non-empty and unique to the lease
	// Fence is the fencing token, or 0 when the lock issues none.
	Fence int64
	// Validity is the deadline until which the client may act as the
	// holder, from time.Now (so with a monotonic reading, immune to
	// wall-clock jumps). A lock that claims none sets it [UntilRelease]
	// ahead.
	Validity time.Time
	// Lost tells the holder that a lock renewing the lease by itself lost
	// it (a renewal refused, or none succeeded within the last validity).
	// Release never tells. Nil for a lock that never tells.
	Lost *Notice
}

// Notice is a lock's notice to a holder that it lost its lease: Done is
// closed when it comes, and Err says why. Make one with NewNotice; a nil
// *Notice never comes.
type Notice struct {
	done chan struct{}
	once sync.Once
	err  error     // set before done is closed
	at   time.Time // likewise
}

// NewNotice returns a notice that has not come.
func NewNotice() *Notice { return &Notice{done: make(chan struct{})} }

// Tell gives the notice, once (the first why is kept), at time.Now.
func (n *Notice) Tell(why error) {
	n.once.Do(func() {
		n.err, n.at = why, time.Now()
		close(n.done)
	})
}

// At returns when the notice was given, once Done is closed; else zero.
func (n *Notice) At() time.Time {
	if !n.came() {
		return time.Time{}
	}
	return n.at
}

func (n *Notice) came() bool {
	select {
	case <-n.Done():
		return true
	default:
		return false
	}
}

// Done returns a channel closed when the notice comes; nil for a nil n.
func (n *Notice) Done() <-chan struct{} {
	if n == nil {
		return nil
	}
	return n.done
}

// Err says why the lease was lost, once Done is closed; nil before.
func (n *Notice) Err() error {
	if !n.came() {
		return nil
	}
	return n.err
}

// Valid reports whether the lease is inside its validity at now and not
// Told.
func (l Lease) Valid(now time.Time) bool { return now.Before(l.Validity) && !l.Told() }

// Told reports whether the lease's Notice came.
func (l Lease) Told() bool { return l.Lost.came() }

type callerKey struct{}

// WithCaller returns ctx carrying the caller's identity, as a thread's id
// is to Redisson's lock: the harness puts its client number in every
// acquire, and a lock whose token is fixed per client
// (Promises.ClientToken) builds it from Caller.
func WithCaller(ctx context.Context, caller int) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// Caller returns the identity WithCaller put in ctx, if any.
func Caller(ctx context.Context) (int, bool) {
	c, ok := ctx.Value(callerKey{}).(int)
	return c, ok
}

// wrap prefixes *err, if any, with the lock's name, the call and its key.
func wrap(err *error, name, op, key string) {
	if *err != nil {
		*err = fmt.Errorf("%s: %s %q: %w", name, op, key, *err)
	}
}

// Lock is the interface every system under test implements, safe for
// concurrent use (each goroutine plays one client).
//
// The lease of a successful Acquire or Extend carries the Key given to
// Acquire, a Token unique to the lease, and a Validity taken from
// time.Now (so with a monotonic reading) no later than the keys expire.
// The harness stops a run at the first lease that lacks a token, names
// another key, or has a zero or non-monotonic validity: nothing checked
// about such a lock would mean anything.
type Lock interface {
	// Acquire tries to take key. ErrNotAcquired (wrapped) means the caller
	// definitely does not hold it; any other error leaves it unknown.
	Acquire(ctx context.Context, key string) (Lease, error)
	// Release gives the lease up; ErrNotHeld (wrapped): the key no longer
	// held its token.
	Release(ctx context.Context, l Lease) error
	// Extend pushes the lease's expiry one TTL ahead and returns it with
	// its new validity; ErrNotHeld (wrapped): the lease was lost.
	Extend(ctx context.Context, l Lease) (Lease, error)
	Close() error
}

// Config is what every implementation is built from.
type Config struct {
	// Addrs are the Redis nodes: single-instance locks use Addrs[0],
	// RedLock every one as an independent master. May be empty with
	// Sentinels.
	Addrs []string
	// Sentinels monitor a primary called MasterName, which
	// single-instance locks then reach (NewSingleClient). RedLock refuses
	// it.
	Sentinels []string
	// SentinelPassword is the Sentinels' own requirepass, not the nodes'.
	SentinelPassword string
	// MasterName is the monitored primary's name; required with Sentinels.
	MasterName string
	// Cluster: Addrs are nodes of a Redis Cluster, and the locks that take
	// their client from NewUniversalClient (setnx, redislock) use
	// go-redis's cluster client (slot masters, MOVED and ASK).
	Cluster bool
	// AddrMap maps a node address, as Sentinels or Cluster report it, to
	// the address dialed instead, for topologies in which they and the
	// clients reach the nodes by different paths
	// (cluster.Failover.AddrMap, cluster.RedisCluster.AddrMap).
	AddrMap map[string]string
	// Password is sent with AUTH on every connection; empty for none.
	Password string
	// TTL is the lock's time to live. Default 10s.
	TTL time.Duration
	// Fencing asks for a fencing token with every lease.
	Fencing bool
	// Timeout bounds every call to one node. Default TTL/10, at most 1s.
	Timeout time.Duration
	// Tries is how many attempts one Acquire makes. Default 3.
	Tries int
	// RetryDelay bounds the back-off between two attempts, drawn from
	// [RetryDelay/2, RetryDelay). Default 50ms.
	RetryDelay time.Duration
	// EqualRetry makes every back-off RetryDelay: clients that fail
	// together retry in step, as the RedLock page's jitter prevents.
	EqualRetry bool
	// Seed seeds the back-off jitter (tokens come from crypto/rand).
	Seed int64
	// Quorum is how many of Addrs must grant a redlock: more than half, at
	// most all. Default ⌊N/2⌋+1, the Redis page's majority; the seed
	// article's ⌈N/2⌉+1 is one more for an odd N, which costs
	// availability, never safety. Other locks refuse it.
	Quorum int
	// WaitReplicas makes setnx (with Sentinels or Cluster: WAIT needs a
	// replica) send WAIT after every granted SET, bounded by Timeout/2,
	// and hold only if that many replicas acknowledged; else it deletes
	// the key (best effort) and reports ErrNotAcquired. The Redis page
	// says WAIT narrows the failover window, not closes it. Other locks
	// refuse it.
	WaitReplicas int
	// ClientEnv is added to the environment of the lock's client
	// processes (Spec.Process), e.g. the clock shim of a client-clock
	// fault (cluster.ClientClock.Env); Go locks ignore it.
	ClientEnv []string
}

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
	Name    string // selects the implementation, e.g. "setnx"
	Summary string // one line; for a mutant it names the bug
	Mutant  bool   // deliberately broken; Bugs says where
	// Bugs are a mutant's bugs, each the row of the literature table (the
	// cell name after the lock's, e.g. "+extend/client-pause") on which
	// the matrix expects its property violated. The mutant's promises
	// (those of the lock it mutates) must select every row named.
	Bugs []Bug
	// MultiNode: the lock uses every address in Config.Addrs, not the first.
	MultiNode bool
	Fencing   bool // it can issue fencing tokens
	Quorum    bool // it takes Config.Quorum
	Wait      bool // it takes Config.WaitReplicas
	Cluster   bool // it takes Config.Cluster (NewUniversalClient)
	// Nodes a run starts when none is asked for. Default 5 with
	// MultiNode, else 1.
	Nodes int
	// Server is what the nodes run: "" for redis-server, "etcd" for etcd
	// members (cluster.ServerEtcd).
	Server string
	// Language is for the results table. Default "Go".
	Language string
	// Process: the clients run as processes of their own (the process
	// adapter), which Config.ClientEnv reaches.
	Process bool
	// Check, when set, names in one line what the lock needs that is
	// missing (an interpreter, a library), before a run starts anything.
	Check func() error
	// Promises is what the lock declares, from which the release gate
	// derives its cells; nil: the gate refuses it.
	Promises *Promises
	New      func(Config) (Lock, error)
}

// Bug is one deliberate bug of a mutant (Spec.Bugs).
type Bug struct {
	Row string // the literature table's row that exposes it
	// Property is what breaks there: "lease" (two holds overlap),
	// "resource" (an update is lost) or "liveness" (a free key is never
	// acquired again).
	Property string
	// Also are further properties broken there: "answers" (the lock
	// replies ok where the nodes show otherwise).
	Also []string
	Why  string // how, in a sentence
}

// Traits are the words the literature table selects s's rows by: p's
// (Promises.Traits), then "mutant", "process", "wait" and "quorum-size"
// for Mutant, Process, Wait and Quorum.
func (s Spec) Traits(p Promises) []string {
	return appendWords(p.Traits(), word{s.Mutant, "mutant"}, word{s.Process, "process"}, word{s.Wait, "wait"}, word{s.Quorum, "quorum-size"})
}

type word struct {
	on bool
	w  string
}

func appendWords(t []string, words ...word) []string {
	for _, b := range words {
		if b.on {
			t = append(t, b.w)
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

// ErrUnknownLock: Lookup and New found no such name.
var ErrUnknownLock = errors.New("locks: unknown lock")

// New builds the implementation called name from cfg.
func New(name string, cfg Config) (Lock, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return s.Build(cfg)
}

// Build applies Config's defaults, refuses what s does not take
// (Fencing, Quorum, WaitReplicas) and calls s.New.
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
