// Package nemesis injects faults into a running test: partitions and
// latency through toxiproxy, kill/restart and pause/resume of Redis nodes,
// wall-clock jumps, stalls of lock-holding clients, failovers, and the
// catalogue of docs/faults.md. Every start and heal is an event in the
// history, on the same clock as the operations.
//
// A Kind lives in its family's file, with the code the family shares,
// and has one line in kinds (nemesis.go), the one ordered list, so that
// one seed always draws the same faults. It declares what it needs of a
// run (Needs), which Check refuses in one line on a run that lacks it; a
// run is set up for what its kinds need together (NeedsOf). Nothing else
// switches on kind names. A step of a schedule may hold faults of several
// kinds at once (Setup.Compose, Step.With): they start together and heal
// in reverse order; a targeted fault is never composed.
//
// Each occurrence of a kind is a Fault with its parameters as JSON, and
// may have optional abilities, interfaces declared beside Fault
// (RefusingFault, LastingFault, EndingFault, ArmedFault); a Target's
// Clients likewise (HoldStaller, ClientCrasher, ProcessStopper).
//
// A fault acts on a Target: the cluster, the clients' hook and the View,
// the run's live holds, declared here and implemented by the harness, at
// a moment of which a targeted kind strikes, keeping its Decision in its
// parameters so that a replay strikes the same way (targeted.go). nodes.go
// is the one vocabulary of the nodes a fault takes.
//
// It imports history, cluster, internal/wait, internal/safefs (a
// schedule to replay may come from someone else: a link or a special
// file is refused) and internal/suggest (the kind meant by a misspelt
// name); never locks, checker or harness.
package nemesis
