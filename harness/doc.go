// Package harness runs one torture test: it brings the nodes up, starts
// concurrent clients that loop acquire → critical section → release
// against a lock of package locks, records every operation in a history,
// stops everything and always cleans up.
//
// A test is a [Config], every zero field taking its default ([Defaults]).
// [NewPlan] validates it once (the lock, the cluster, the fault kinds, the
// machine's limits, the programs it starts) and draws what the seed draws
// (the fault schedule, one seed per client); [Plan.Run] runs it; [Run]
// does both. It asks package cluster for its nodes and package nemesis
// what its kinds need (nemesis.NeedsOf), so it never switches on a
// backend or a kind.
//
// A lock's per-node evidence (locks.NodeReporter) rides in each
// completion event (history.Event.Nodes); a live view of the holds is
// handed to the nemesis (nemesis.Target.View); an observer on every node,
// outside the fault proxies, records each keyspace notification of a lock
// key (history.NodeKey). With Workload.Extend a client renews its lease
// while it works (extend.go); a lock's loss notice (locks.Lease.Lost) is
// recorded as a history.Lost event; with Workload.ClientProcess the
// client-stop faults stop a holder's whole process, and its client here
// with it. The resource is a fault-free, linearizable in-process [Store]
// that, with fencing, refuses a stale token.
//
// It imports locks, nemesis, history, cluster, internal/wait and
// internal/health (how late its timers fire); never checker.
package harness
