package explain

import "fmt"

// The stall families: server-stall (a node's event loop) and client-pause
// (the holder).
var (
	stallExpired = nodeFault{ServerStall, expired, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s expired the key at %s%s, after %s stopped its event loop.", ne.name, Secs(ne.expired.Time), ne.early, f)
	}}
	pauseExpired = nodeFault{Stalled, stalled, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s %s the key at %s%s, while %s stalled the holder.", ne.name, ne.expired.Event, Secs(ne.expired.Time), ne.early, f)
	}}
)
