package explain

import "fmt"

// The families that take a node down: kill (no persistence) and power-loss
// (unsynced writes dropped).
var (
	killExpired = nodeFault{Restart, expired, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s %s the key at %s%s, after %s.", ne.name, ne.expired.Event, Secs(ne.expired.Time), ne.early, f)
	}}
	powerLossExpired = nodeFault{PowerLoss, expired, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s dropped what %s had not fsynced, the grant with it; %s came back with an older copy of the key, which it %s at %s%s, and granted it again.",
			capital(f.String()), ne.name, ne.name, ne.expired.Event, Secs(ne.expired.Time), ne.early)
	}}
	powerLost = nodeFault{PowerLoss, between, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s, %s after the lease was granted, killed %s and dropped what it had not fsynced, the grant with it; %s came back without the key and granted it again.",
			capital(f.String()), secsDelta(f.w.Start-ne.la.Start), ne.name, ne.name)
	}}
	killed = nodeFault{Restart, between, func(ne *nodeEvidence, f fault) string {
		return fmt.Sprintf("%s, %s after the lease was granted, restarted %s empty; it granted the key again.", capital(f.String()), secsDelta(f.w.Start-ne.la.Start), ne.name)
	}}
)
