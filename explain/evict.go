package explain

import "fmt"

// The evict family: memory pressure under an evicting policy.

// evictedKey: n evicted la's key; by an evict fault on n if one was active,
// else by a maxmemory set outside the faults.
func evictedKey(ne *nodeEvidence) (finding, bool) {
	rm := ne.expired
	if rm == nil || rm.Event != "evicted" {
		return finding{}, false
	}
	if f, ok := find(ne.fs, Evicted, ne.n, ne.la.Invoked, rm.Time); ok {
		return finding{cause: Evicted, fault: f.num, node: ne.n, text: fmt.Sprintf("%s evicted the key at %s%s, %s after the start of %s, and granted it again.",
			ne.name, Secs(rm.Time), ne.early, secsDelta(rm.Time-f.w.Start), f)}, true
	}
	return finding{cause: Evicted, node: ne.n, text: fmt.Sprintf("%s evicted the key at %s%s (maxmemory under an evicting policy, set outside the run's faults), and granted it again.", ne.name, Secs(rm.Time), ne.early)}, true
}
