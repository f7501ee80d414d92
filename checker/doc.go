// Package checker decides, from a recorded history alone, whether mutual
// exclusion held.
//
// It reads histories, never a live system: it imports package history and
// porcupine and nothing that talks to Redis, so a saved run can be
// re-checked offline years later. Two porcupine models, partitioned per
// key, give the verdicts: lease safety (no two clients inside their
// validity at once) and resource safety (the lock-protected
// read-modify-write never loses an update; with fencing, a refused stale
// access is legal). An independent sweep cross-checks the lease verdict on
// every history; a disagreement is a bug and is reported as such. A
// porcupine timeout gives [Unknown], never a pass. Liveness and latency
// statistics come from the same history.
package checker
