// Package explain names, for each violation a check found, its cause,
// from the history's evidence alone: which nodes granted each lease
// (history.Event.Nodes), what each node did to the key (history.NodeKey)
// and which faults were active (checker.Window). It reads a
// checker.Analysis, never the raw events, and names one Cause per
// violation in one paragraph (times in seconds from the run's start,
// tokens shortened, nodes n1, n2, … as schedule.json names them).
//
// A fault is read by its family (nemesis.Kind.Family, recorded on each
// fault-start; an older history's by legacyFamilies): faults.go holds the
// one table from family to cause, so a kind added to a family needs
// nothing here. The files stand in layers: text.go and cause.go, faults.go,
// evidence.go, one file per family's detectors (clock.go, kill.go,
// failover.go, evict.go, stall.go, grant.go, notice.go; the lock's own
// logic in lock.go; replies a node contradicts in answers.go, holds cut
// short in holds.go), detect.go (the ordered detectors), and explain.go
// and findings.go (the entry points).
//
// It imports checker only (and, through it, reads history's events): like
// the checker, it explains a saved run offline; it never imports nemesis.
package explain
