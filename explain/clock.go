package explain

import "fmt"

// The clock family: a node's clock jumped, slewed or drifted, and it expired
// a key its holder counted on.

// clockBeforeGrant: n expired a key at or before la's ok during a clock fault
// on n, and granted it again.
func clockBeforeGrant(ne *nodeEvidence) (finding, bool) {
	if ne.expired != nil || ne.before == nil {
		return finding{}, false
	}
	f, ok := find(ne.fs, ClockJump, ne.n, ne.from, ne.before.Time)
	if !ok {
		return finding{}, false
	}
	return finding{cause: ClockJump, fault: f.num, node: ne.n, text: fmt.Sprintf("%s expired the key at %s, %s after the start of %s, and granted it again.",
		ne.name, Secs(ne.before.Time), secsDelta(ne.before.Time-f.w.Start), f)}, true
}

// clockExpired: n expired la's key during a clock fault on n.
var clockExpired = nodeFault{ClockJump, expired, func(ne *nodeEvidence, f fault) string {
	return fmt.Sprintf("%s %s the key at %s%s, %s after the start of %s.",
		ne.name, ne.expired.Event, Secs(ne.expired.Time), ne.early, secsDelta(ne.expired.Time-f.w.Start), f)
}}
