package explain

import "fmt"

// The families that take a node down: kill (a restart without
// persistence) and power-loss (a restart that dropped what was not
// fsynced).

// killExpired: n expired la's key after a kill of n.
func killExpired(ne *nodeEvidence) (finding, bool) {
	f, ok := ne.expiredBy(Restart)
	if !ok {
		return finding{}, false
	}
	rm := ne.expired
	return finding{cause: Restart, fault: f.num, node: ne.n, text: fmt.Sprintf("%s %s the key at %s%s, after %s.", ne.name, rm.Event, Secs(rm.Time), ne.early, f)}, true
}

// powerLossExpired: n came back from a power loss with an older copy of
// the key, which it expired.
func powerLossExpired(ne *nodeEvidence) (finding, bool) {
	f, ok := ne.expiredBy(PowerLoss)
	if !ok {
		return finding{}, false
	}
	rm := ne.expired
	return finding{cause: PowerLoss, fault: f.num, node: ne.n, text: fmt.Sprintf("%s dropped what %s had not fsynced, the grant with it; %s came back with an older copy of the key, which it %s at %s%s, and granted it again.",
		capital(f.String()), ne.name, ne.name, rm.Event, Secs(rm.Time), ne.early)}, true
}

// powerLost: a power loss of n between the two acquires dropped the
// grant.
func powerLost(ne *nodeEvidence) (finding, bool) {
	f, ok := find(ne.fs, PowerLoss, ne.n, ne.la.Invoked, ne.lb.Start)
	if !ok {
		return finding{}, false
	}
	return finding{cause: PowerLoss, fault: f.num, node: ne.n, text: fmt.Sprintf("%s, %s after the lease was granted, killed %s and dropped what it had not fsynced, the grant with it; %s came back without the key and granted it again.",
		capital(f.String()), secsDelta(f.w.Start-ne.la.Start), ne.name, ne.name)}, true
}

// killed: a kill of n between the two acquires restarted it empty.
func killed(ne *nodeEvidence) (finding, bool) {
	f, ok := find(ne.fs, Restart, ne.n, ne.la.Invoked, ne.lb.Start)
	if !ok {
		return finding{}, false
	}
	return finding{cause: Restart, fault: f.num, node: ne.n, text: fmt.Sprintf("%s, %s after the lease was granted, restarted %s empty; it granted the key again.", capital(f.String()), secsDelta(f.w.Start-ne.la.Start), ne.name)}, true
}
