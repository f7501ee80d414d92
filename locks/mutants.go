package locks

import "fmt"

// The mutants: the real locks with one deliberate bug each, selected by a
// setnxBug or redlockBug field, so that a mutant differs from its lock in
// that one place only. They prove that the checkers see what they claim
// to see. None issues fencing tokens: a fenced resource would hide the
// very violation a mutant is there to cause.

// newSetNXPlainDel builds "setnx-plain-del". Bug: Release is a plain
// DEL key, without comparing the token. A client whose lease expired while
// it worked, after another client acquired the key, deletes the other
// client's lock when it releases, and a third client can then acquire
// while the second still believes it holds the lock.
func newSetNXPlainDel(cfg Config) (Lock, error) {
	return mutant("setnx-plain-del", cfg, setnxBug{plainDel: true}, newSetNX)
}

// newSetNXGetSet builds "setnx-get-set". Bug: Acquire is check-then-act,
// GET key and, if it was empty, SET key token PX ttl without NX. Clients
// that all GET before any of them SETs all see the key free, all SET it
// (the last write wins the key) and all believe they hold the lock.
func newSetNXGetSet(cfg Config) (Lock, error) {
	return mutant("setnx-get-set", cfg, setnxBug{getThenSet: true}, newSetNX)
}

// newSetNXNoTTL builds "setnx-no-ttl". Bug: Acquire is SET key token NX
// with no expiry. The client is still told a validity of TTL − drift (it
// believes in a TTL that the key does not have), and Extend only checks
// that the key holds the token. Mutual exclusion holds, liveness does
// not: a holder that crashes or forgets to release blocks the key for
// ever.
func newSetNXNoTTL(cfg Config) (Lock, error) {
	return mutant("setnx-no-ttl", cfg, setnxBug{noTTL: true}, newSetNX)
}

// newSetNXExtendNoCheck builds "setnx-extend-no-check". Bug: Extend is
// a bare PEXPIRE key ttl, as a renewal timer sends it: it checks neither
// that the key still holds the lease's token nor that the lease is still
// valid (the extends behind redsync issue 72 and node-redlock issue 296). A client
// whose lease lapsed while it worked (a pause) renews the key of whoever
// holds it now, is told it succeeded and goes on as the holder beside
// the new one.
func newSetNXExtendNoCheck(cfg Config) (Lock, error) {
	return mutant("setnx-extend-no-check", cfg, setnxBug{bareExtend: true}, newSetNX)
}

// newRedLockNoQuorum builds "redlock-no-quorum". Bug: one granting node
// is enough (also for Release and Extend). Clients that hold different
// nodes, e.g. because a partition splits them, all acquire.
func newRedLockNoQuorum(cfg Config) (Lock, error) {
	return mutant("redlock-no-quorum", cfg, redlockBug{anyGrant: true}, newRedLock)
}

// newRedLockNoElapsed builds "redlock-no-elapsed". Bug: the validity is
// TTL − drift counted from the moment Acquire (or Extend) returns,
// ignoring the time the round took (and never checked to be positive). A
// slow round, e.g. under a latency fault, makes the client believe it
// holds the lock after the keys, set at the start of the round, expired
// and another client took them.
func newRedLockNoElapsed(cfg Config) (Lock, error) {
	return mutant("redlock-no-elapsed", cfg, redlockBug{ignoreElapsed: true}, newRedLock)
}

// refuseFencing fails if cfg asks a lock that issues no fencing tokens
// for them; New checks this too, but a Spec's New may be called directly.
func refuseFencing(name string, cfg Config) error {
	if cfg.Fencing {
		return fmt.Errorf("locks: %s issues no fencing tokens", name)
	}
	return nil
}

// mutant builds the mutant name of a lock, build, with bug.
func mutant[B any, L Lock](name string, cfg Config, bug B, build func(string, Config, B) (L, error)) (Lock, error) {
	if err := refuseFencing(name, cfg); err != nil {
		return nil, err
	}
	return asLock(build(name, cfg, bug))
}

// newSetNXClientToken builds "setnx-client-token", a test lock: setnx
// with a token fixed per client instead of one per lease, as Redisson's
// lock uses its client id and thread (and a user's lock its host name):
// this lock's random id and the caller's number (Caller; the harness puts
// its client number in every acquire). A client that finds the key
// holding its own token holds it again (the expiry set anew), as
// Redisson's does. It is correct: it shows that the checker pairs a
// release with the client's current grant of its token, not with an
// earlier lapsed one. No fencing tokens.
func newSetNXClientToken(cfg Config) (Lock, error) {
	if err := refuseFencing("setnx-client-token", cfg); err != nil {
		return nil, err
	}
	if cfg.WaitReplicas != 0 {
		return nil, fmt.Errorf("locks: setnx-client-token takes no WAIT")
	}
	l, err := newSetNX("setnx-client-token", cfg, setnxBug{})
	if err != nil {
		return nil, err
	}
	l.clientToken = newToken()[:12]
	return l, nil
}
