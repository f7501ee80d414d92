package explain

import "fmt"

// The stall families: a node's event loop stopped (server-stall), or the
// holder stalled (client-pause).

// stallExpired: n expired la's key after a server stall on n stopped its
// event loop.
func stallExpired(ne *nodeEvidence) (finding, bool) {
	f, ok := ne.expiredBy(ServerStall)
	if !ok {
		return finding{}, false
	}
	return finding{cause: ServerStall, fault: f.num, node: ne.n, text: fmt.Sprintf("%s expired the key at %s%s, after %s stopped its event loop.",
		ne.name, Secs(ne.expired.Time), ne.early, f)}, true
}

// pauseExpired: n expired la's key while a client pause stalled the
// holder.
func pauseExpired(ne *nodeEvidence) (finding, bool) {
	if ne.expired == nil {
		return finding{}, false
	}
	f, ok := find(ne.fs, Stalled, -1, ne.la.Start, ne.lb.Start)
	if !ok {
		return finding{}, false
	}
	rm := ne.expired
	return finding{cause: Stalled, fault: f.num, node: ne.n, text: fmt.Sprintf("%s %s the key at %s%s, while %s stalled the holder.", ne.name, rm.Event, Secs(rm.Time), ne.early, f)}, true
}
