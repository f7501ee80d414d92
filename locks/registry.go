package locks

// registry lists every implementation in a fixed order: the two real
// locks first, then the mutants (mutants.go), each a real lock with one
// deliberate bug.
var registry = []Spec{
	{
		Name:    "setnx",
		Summary: "single instance: SET key token NX PX ttl, Lua compare-and-delete release",
		Fencing: true,
		New:     newSetNXLock,
	},
	{
		Name:      "redlock",
		Summary:   "RedLock: SET NX PX on N independent masters, quorum N/2+1, validity TTL − elapsed − drift",
		MultiNode: true,
		Fencing:   true,
		New:       newRedLockLock,
	},
	{
		Name:    "setnx-plain-del",
		Summary: "mutant of setnx: release is a plain DEL, so an expired holder deletes the next holder's lock",
		Mutant:  true,
		New:     newSetNXPlainDel,
	},
	{
		Name:    "setnx-get-set",
		Summary: "mutant of setnx: acquire is GET then SET without NX, so concurrent clients all acquire",
		Mutant:  true,
		New:     newSetNXGetSet,
	},
	{
		Name:    "setnx-no-ttl",
		Summary: "mutant of setnx: SET NX without expiry, so a crashed holder blocks the key for ever",
		Mutant:  true,
		New:     newSetNXNoTTL,
	},
	{
		Name:      "redlock-no-quorum",
		Summary:   "mutant of redlock: one granting node is enough, so clients on different nodes all acquire",
		Mutant:    true,
		MultiNode: true,
		New:       newRedLockNoQuorum,
	},
	{
		Name:      "redlock-no-elapsed",
		Summary:   "mutant of redlock: validity ignores the time spent acquiring, so a slow acquire over-claims",
		Mutant:    true,
		MultiNode: true,
		New:       newRedLockNoElapsed,
	},
}

// newSetNXLock builds "setnx" (see setnx).
func newSetNXLock(cfg Config) (Lock, error) { return setnxLock("setnx", cfg, setnxBug{}) }

// newRedLockLock builds "redlock" (see redlock).
func newRedLockLock(cfg Config) (Lock, error) { return redlockLock("redlock", cfg, redlockBug{}) }

// setnxLock builds a setnx as a Lock (a nil Lock on error, not a nil
// *setnx in a non-nil interface).
func setnxLock(name string, cfg Config, bug setnxBug) (Lock, error) {
	l, err := newSetNX(name, cfg, bug)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// redlockLock builds a redlock as a Lock (a nil Lock on error).
func redlockLock(name string, cfg Config, bug redlockBug) (Lock, error) {
	l, err := newRedLock(name, cfg, bug)
	if err != nil {
		return nil, err
	}
	return l, nil
}
