// Package harness runs one torture test: it brings the Redis nodes up,
// starts concurrent clients that loop acquire → critical section →
// release against a lock from package locks, records every operation in a
// history, stops everything and always cleans up.
//
// A test is a [Config], its fields grouped by concern (Workload, Cluster,
// Faults, Output), every zero field taking its default ([Defaults]).
// [NewPlan] validates it once (the lock, the cluster, the fault kinds
// against what the cluster can do, the machine's limits, the programs it
// starts) and draws what the seed draws (the fault schedule, one seed per
// client); [Plan.Run] runs it. [Run] does both. The harness asks package
// cluster for its nodes (cluster.Open) and package nemesis what its kinds
// need (nemesis.NeedsOf), so it never switches on a backend or a kind.
//
// Every acquire, release and extend of a lock that reports per-node
// evidence (locks.NodeReporter) carries it in its completion event
// (history.Event.Nodes). While the run goes, the harness keeps a live
// view of the holds (who holds which key, granted by which nodes, valid
// until when, in its section or not) and hands it to the nemesis as
// nemesis.Target.View.
//
// An observer on every node (cluster.Node.Observe), outside the fault
// proxies, records each keyspace notification of a lock key as a
// history.NodeKey event on the run's clock: when each node set,
// deleted, extended, expired or evicted the key.
//
// With Workload.Extend a client renews its lease while it works (the
// hold worked in sections, an extend between two; see work in extend.go),
// calling the lock's Extend whatever the lease's validity, as a renewal
// timer does. The client-crash fault makes the next client to acquire
// abandon its lease unreleased, and a fresh client, with the slot's next
// process number (id + Clients), take its place.
//
// A lock that tells its holder when it lost the lease (locks.Lease.Lost:
// a watchdog's failed renewal) has the notice recorded as a history.Lost
// event of the holder, stamped when it came, until the holder invokes
// its release; a section's validity check then fails (ErrLeaseLost). With
// Workload.ClientProcess a Go lock runs in client processes of its own
// (locks.AsProcess), and the client-stop faults can stop a holder's whole
// process: the client in the harness that drives it is stopped with it,
// taking no step (a check, a write, an extend, a release) until the
// process runs again. Every acquire carries the client's number
// (locks.WithCaller), which a lock whose token is fixed per client uses.
//
// The protected resource is a fault-free, linearizable in-process store
// ([Store]) holding one integer per key; with fencing it refuses any access
// carrying a fencing token older than the newest it has seen, or, with
// Workload.Store StoreWriteOnly, any write carrying one.
//
// It imports locks, nemesis, history, cluster, internal/wait and
// internal/health (how late its timers fire); never
// checker.
package harness
