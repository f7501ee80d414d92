package locks

import (
	"github.com/locktorture/locktorture/internal/suggest"

	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// registry lists every implementation in a fixed order: the reference
// locks, the libraries, the mutants, the Python clients, the seed
// article's lock, the locks that renew themselves and a test lock; then
// what Register added, in order (etcd-mutex, with locks/etcdlock).
var (
	registryMu sync.RWMutex
	registry   = []Spec{
		{
			Name:     "setnx",
			Summary:  "single instance: SET key token NX PX ttl, Lua compare-and-delete release",
			Fencing:  true,
			Wait:     true, // WAIT after the SET, on the failover and cluster topologies
			Cluster:  true,
			Promises: &Promises{ElapsedFromRequest: true, Fences: true, FenceSound: true, Extends: true, Persistence: PersistDelayedRestart, Topologies: []string{"failover", "cluster"}, ReportsNodes: true},
			New:      variant("setnx", setnxBug{}, newSetNX),
		},
		{
			Name:      "redlock",
			Summary:   "RedLock: SET NX PX on N independent masters, quorum N/2+1, validity TTL − elapsed − drift",
			MultiNode: true,
			Fencing:   true,
			Quorum:    true, // a quorum other than a bare majority
			Promises:  &Promises{Quorum: 5, ElapsedFromRequest: true, Fences: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true},
			New:       variant("redlock", redlockBug{}, newRedLock),
		},
		{
			Name:      "redsync",
			Summary:   "library github.com/go-redsync/redsync/v4: RedLock on N masters, validity = Until() (TTL − elapsed − TTL×1%)",
			MultiNode: true,
			Promises:  &Promises{Quorum: 5, ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true},
			New:       newRedsyncLock,
		},
		{
			Name:     "redislock",
			Summary:  "library github.com/bsm/redislock: SET NX PX on one node, validity = start + TTL (no drift allowance)",
			Cluster:  true,
			Promises: &Promises{ElapsedFromRequest: true, Extends: true, ReportsNodes: true},
			New:      NewRedislock,
		},
		{
			Name:     "setnx-plain-del",
			Summary:  "mutant of setnx: release is a plain DEL, so an expired holder deletes the next holder's lock",
			Mutant:   true,
			Bugs:     []Bug{{Row: "client-pause", Property: "lease", Why: "a late plain DEL removes the next holder's lock"}},
			Promises: mutantOfSetNX,
			New:      variant("setnx-plain-del", setnxBug{plainDel: true}, newSetNX),
		},
		{
			Name:     "setnx-get-set",
			Summary:  "mutant of setnx: acquire is GET then SET without NX, so concurrent clients all acquire",
			Mutant:   true,
			Bugs:     []Bug{{Row: "none", Property: "lease", Why: "GET then SET without NX is a check-then-act race: clients that read the key free at once all set it"}},
			Promises: mutantOfSetNX,
			New:      variant("setnx-get-set", setnxBug{getThenSet: true}, newSetNX),
		},
		{
			Name:     "setnx-no-ttl",
			Summary:  "mutant of setnx: SET NX without expiry, so a crashed holder blocks the key for ever",
			Mutant:   true,
			Bugs:     []Bug{{Row: "client-crash", Property: "liveness", Why: "mutual exclusion holds, but a crashed holder's key never expires: no one acquires it again"}},
			Promises: mutantOfSetNX,
			New:      variant("setnx-no-ttl", setnxBug{noTTL: true}, newSetNX),
		},
		{
			Name:    "setnx-extend-no-check",
			Summary: "mutant of setnx: extend is a bare PEXPIRE (no token or validity check), so a lapsed holder renews the next holder's key",
			Mutant:  true,
			Bugs: []Bug{{Row: "+extend/client-pause", Property: "lease", Also: []string{"answers"},
				Why: "a bare PEXPIRE renews the key of whoever holds it now: the paused holder's late extend succeeds beside the new holder, an ok for a token its key had lost"}},
			Promises: mutantOfSetNX,
			New:      variant("setnx-extend-no-check", setnxBug{bareExtend: true}, newSetNX),
		},
		{
			Name:      "redlock-no-quorum",
			Summary:   "mutant of redlock: one granting node is enough, so clients on different nodes all acquire",
			Mutant:    true,
			Bugs:      []Bug{{Row: "none", Property: "lease", Why: "one grant out of five is not a majority: clients granted by different nodes all hold"}},
			MultiNode: true,
			Promises:  mutantOfRedLock,
			New:       variant("redlock-no-quorum", redlockBug{anyGrant: true}, newRedLock),
		},
		{
			Name:    "redlock-no-elapsed",
			Summary: "mutant of redlock: validity ignores the time spent acquiring, so a slow acquire over-claims",
			Mutant:  true,
			Bugs: []Bug{
				{Row: "latency-hold950", Property: "lease", Why: "counting validity from the reply, not from before the request, overstates it by the round's time: a hold of 0.95 TTL outlives the keys"},
				{Row: "delay-grant", Property: "lease", Why: "counting validity from the reply over-claims by the held reply's delay: the holder counts on its lease after its keys expired and the next holder took them"},
			},
			MultiNode: true,
			Promises:  mutantOfRedLock,
			New:       variant("redlock-no-elapsed", redlockBug{ignoreElapsed: true}, newRedLock),
		},
		{
			Name:     "redis-py-lock",
			Summary:  "library redis-py (Python), Redis.lock through the process adapter: SET NX PX on one node; its users hold until they release (no validity)",
			Language: "Python",
			Process:  true,
			Check:    pythonCheck,
			Promises: &Promises{},
			New:      pythonLock("redis-py-lock", redisPyLockScript),
		},
		{
			Name:      "redlock-py",
			Summary:   "RedLock written in Python over redis-py from the Redis description, through the process adapter: SET NX PX on N masters in turn, quorum N/2+1, validity TTL − elapsed − drift",
			MultiNode: true,
			Language:  "Python",
			Process:   true,
			Check:     pythonCheck,
			Promises:  &Promises{Quorum: 5, ElapsedFromRequest: true, MonotonicClock: true, Persistence: PersistDelayedRestart, ReportsNodes: true},
			New:       pythonLock("redlock-py", redLockPyScript),
		},
		{
			Name:     "setnx-seed",
			Summary:  "the seed article's single-instance lock as written: SET NX PX, Lua compare-and-delete release, no client-side validity (held from acquire until release)",
			Promises: &Promises{Extends: true, Persistence: PersistDelayedRestart},
			New:      variant("setnx-seed", setnxBug{untilRelease: true}, newSetNX),
		},
		{
			Name:      "redlock-py-wall",
			Summary:   "mutant of redlock-py, as the redlock-py library (SPSCommerce) counts: the time elapsed in a round on time.time(), the wall clock, so a backward jump of the client's clock during an acquire over-claims validity",
			Mutant:    true,
			Bugs:      []Bug{{Row: "client-clock-hold750", Property: "lease", Why: "a backward jump of the client's wall clock during a round makes the elapsed time come out smaller, and the validity over-claims by the jump"}},
			MultiNode: true,
			Language:  "Python",
			Process:   true,
			Check:     pythonCheck,
			Promises:  &Promises{Quorum: 5, ElapsedFromRequest: true, MonotonicClock: true, Persistence: PersistDelayedRestart},
			New:       pythonLock("redlock-py-wall", redLockPyScript, "--wall"),
		},
		{
			Name:     "setnx-watchdog",
			Summary:  "setnx with Redisson's watchdog: renewed every TTL/3 while held, no validity; the holder is told (Lease.Lost) when a renewal is refused or none succeeded within the lease's last validity",
			Fencing:  true,
			Promises: &Promises{Renews: true, NoticeInTime: true, Fences: true, FenceSound: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true},
			New:      watchdogLock("setnx-watchdog", false),
		},
		{
			Name:     "rueidislock",
			Summary:  "library github.com/redis/rueidis/rueidislock: a majority of 3 keys on one node, extended every TTL/2 by the library, no validity; the holder is told when the library cancels its context",
			Promises: &Promises{Renews: true},
			New:      newRueidisLock,
		},
		{
			Name:     "setnx-watchdog-no-notice",
			Summary:  "mutant of setnx-watchdog: failed renewals are ignored, so the holder is never told it lost the lock",
			Mutant:   true,
			Bugs:     []Bug{{Row: "partition-holder", Property: "lease", Why: "its watchdog ignores failed renewals: a holder cut off its node is never told, and counts on the lease after the key expired and another client took it"}},
			Promises: &Promises{Renews: true, NoticeInTime: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true},
			New:      watchdogLock("setnx-watchdog-no-notice", true),
		},
		{
			Name:     "setnx-client-token",
			Summary:  "test lock: setnx with a token fixed per client (the lock's id and the caller's number, as Redisson's client id and thread), taken again by its own client",
			Promises: &Promises{ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true, ClientToken: true},
			New:      newSetNXClientToken,
		},
	}
)

// Errors of Register.
var (
	ErrDuplicateLock = errors.New("locks: duplicate lock name")
	// ErrBadSpec: no name, not a plain word, no New, bad promises.
	ErrBadSpec = errors.New("locks: bad spec")
)

// Register adds s after every lock already there, so that New, Lookup and
// the harness find it by s.Name: how a lock written outside this module
// is tortured without a fork (the README's "Torture your own lock").
// s.Name is ASCII letters, digits and "-_." (it names run directories),
// not registered yet (names are never replaced: one name, one lock for
// the process's life); s.New is set; s.Promises must not contradict
// itself or s. It is safe for concurrent use; there is no Unregister.
func Register(s Spec) error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	if s.New == nil {
		return fmt.Errorf("%w: %q has no New", ErrBadSpec, s.Name)
	}
	if err := checkPromises(s); err != nil {
		return err
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if slices.ContainsFunc(registry, func(r Spec) bool { return r.Name == s.Name }) {
		return fmt.Errorf("%w: %q", ErrDuplicateLock, s.Name)
	}
	registry = append(registry, s)
	return nil
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrBadSpec)
	}
	for _, r := range name {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '_', r == '.':
		default:
			return fmt.Errorf("%w: name %q has %q; use ASCII letters, digits and -_. only", ErrBadSpec, name, r)
		}
	}
	return nil
}

// Specs returns every registered implementation, in a fixed order.
func Specs() []Spec {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return append([]Spec(nil), registry...)
}

// Names returns the names of every registered implementation, in order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return names()
}

// names is Names with registryMu held.
func names() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.Name
	}
	return names
}

// Lookup returns the implementation called name, registered or ExecSpec's.
func Lookup(name string) (Spec, error) {
	if strings.HasPrefix(name, ExecPrefix) {
		return ExecSpec(name)
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	if i := slices.IndexFunc(registry, func(s Spec) bool { return s.Name == name }); i >= 0 {
		return registry[i], nil
	}
	known := names()
	return Spec{}, fmt.Errorf("%w %q%s (known: %s)", ErrUnknownLock, name, suggest.DidYouMean(name, known), strings.Join(known, ", "))
}

// newRedsyncLock builds "redsync" with the default options.
func newRedsyncLock(cfg Config) (Lock, error) { return NewRedsync(cfg) }

// asLock returns l as a Lock, nil (not a nil pointer) on error.
func asLock[L Lock](l L, err error) (Lock, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
