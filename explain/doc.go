// Package explain says, for each violation a check found, what caused
// it, from the evidence in the history alone: which nodes granted
// each lease (history.Event.Nodes), what each node did to the key
// (history.NodeKey observations) and which faults were active
// (checker.Window).
//
// It reads a checker.Analysis, the value one pass over a history
// derives, never the raw events, and names one Cause per violation:
// a clock jump on a node that granted both leases, a restart without
// persistence, a failover that promoted a replica without the key, a
// holder that stalled past its validity (resource only), an extend after
// the key had expired, a holder told too late (its lock claims no
// validity, and it learnt of the loss after the other's grant or not at
// all: its process stopped, by the node observer's expiry of the key how
// late), a grant that came back after its key expired (the lock did not
// count the time its round took), the lock's own logic (no node
// evidence of a loss:
// a node set the key over a live one, deleted it for another client, or
// two quorums that do not intersect: a mutant), or unknown. Each
// Explanation is one paragraph, times in seconds from the start of the
// run, tokens shortened, nodes named n1, n2, … as schedule.json names
// them. A reply of the lock a node contradicts (checker.Contradiction)
// is explained with the reply and the node's state side by side
// (answers.go), as a spurious loss is with the nodes' evidence
// (holds.go).
//
// A fault is read by its family (the history's fault-start records
// nemesis.Kind.Family; a history written before it was recorded is read
// by the kind its description names, legacyFamilies): faults.go holds the
// one table from family to cause. The files stand in layers: text.go
// and cause.go (the words and the causes), faults.go, evidence.go (what
// the detectors read), one file per family's detectors (clock.go,
// kill.go, failover.go, evict.go, stall.go, grant.go, notice.go; the
// lock's own logic in lock.go), detect.go (the ordered lists of
// detectors and of node detectors), and explain.go and findings.go (the
// entry points). A fault kind added to a family needs nothing here.
//
// It imports checker only (and, through it, reads history's events): like
// the checker, it can explain a saved run offline; it never imports
// nemesis.
package explain
