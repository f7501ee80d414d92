package locks

import "fmt"

// The mutants: the real locks with one deliberate bug each (a setnxBug or
// redlockBug field, so that a mutant differs from its lock in that one
// place), described by their registry entries. None issues fencing
// tokens: a fenced resource would hide the very violation a mutant is
// there to cause.

// refuseFencing fails if cfg asks a lock that issues no fencing tokens
// for them; New checks this too, but a Spec's New may be called directly.
func refuseFencing(name string, cfg Config) error {
	if cfg.Fencing {
		return fmt.Errorf("locks: %s issues no fencing tokens", name)
	}
	return nil
}

// variant returns the New of the lock build makes with bug, called name;
// with a bug (a mutant, or setnx-seed) it issues no fencing tokens.
func variant[B comparable, L Lock](name string, bug B, build func(string, Config, B) (L, error)) func(Config) (Lock, error) {
	return func(cfg Config) (Lock, error) {
		var none B
		if bug != none {
			if err := refuseFencing(name, cfg); err != nil {
				return nil, err
			}
		}
		return asLock(build(name, cfg, bug))
	}
}

// newSetNXClientToken builds "setnx-client-token", a correct test lock:
// setnx with a token fixed per client, as Redisson's lock uses its client
// id and thread: this lock's random id and the caller's number (Caller).
// A client that finds its own token in the key holds it again (the expiry
// set anew), as Redisson's does. It shows that the checker pairs a release
// with the client's current grant of its token, not an earlier lapsed one.
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
