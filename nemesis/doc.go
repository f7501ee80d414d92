// Package nemesis injects faults into a running test: partitions and
// latency through toxiproxy, kill/restart and pause/resume of Redis nodes,
// wall-clock jumps, stalls of lock-holding clients and failovers. Each
// fault has a start and a heal; every start and heal is an event in the
// history, on the same clock as the operations.
//
// # Kinds
//
// A Kind lives in its family's file, with the code the family shares
// (clock.go, kill.go for what acts on a node's process, client.go for
// what acts through the client hook, …), and has one line in kinds, the
// one ordered list (nemesis.go), so that one seed always draws the same
// faults. It declares what it needs of a run (Needs: a multi-node lock, a
// topology, what the cluster must be able to do to its nodes, client
// groups, a TTL, clients that run as processes of their own), and Check
// refuses it in one line on a run that lacks it;
// a run is set up for what its kinds need together (NeedsOf). Adding a
// kind is its code and one line: nothing else switches on kind names.
//
// A step of a schedule may hold faults of several kinds at once
// (Setup.Compose, Step.With): they start together and heal in reverse
// order, each its own fault in the history; a targeted fault is never
// composed. docs/faults.md describes the kinds of memory pressure, lost
// un-fsynced writes, server stalls, broken connections and the
// replication link.
//
// Each occurrence of a kind is a Fault (Start, Heal, String) with its
// parameters as JSON, and may have optional abilities, named interfaces
// declared beside Fault: RefusingFault checks its parameters against a
// run, LastingFault stays active longer than a schedule's interval,
// ArmedFault waits for a moment of a live hold to strike. A Target's
// Clients may likewise offer more than stalls: ClientCrasher, for the
// client-crash kind (a holder abandons its lease unreleased and a fresh
// client takes its place), and ProcessStopper, for the client-stop kinds
// (a holder's whole client process stopped, SIGSTOP, and continued after
// longer than the TTL; refused for a lock that runs in this process).
//
// # The run's live state
//
// A fault acts on a Target: the cluster, the clients' stall hook and the
// View, the run's live holds (who holds which key, with which token,
// granted by which nodes, valid until when, inside its critical section
// or not, when it last checked its validity, when each hold ended). The
// View is declared here and implemented by the harness, so that a fault
// can strike at a moment of a hold (right after a grant by a bare
// majority, right after the holder's last validity check) by following
// its changes (View.Next, WaitFor) without polling. The targeted kinds
// (kill-quorum, clock-holder, clock-minority, clock-majority,
// clock-partition, pause-holder, delay-grant, failover-unreplicated,
// power-loss-holder, client-stop, partition-holder, server-stall-holder) do;
// some first shape the moment they wait for (kill-quorum cuts the nodes
// outside a bare majority off until the others grant;
// failover-unreplicated cuts the primary from its replica right before a
// grant). Each is an ArmedFault, whose Arm waits for its
// moment before Run records its start, and which keeps its Decision
// (trigger, targets, amount) in its parameters, so that schedule.json
// says what it struck and a replay strikes the same way (targeted.go).
//
// It imports history, cluster, internal/wait, internal/safefs (a
// schedule to replay may come from someone else: a link or a special
// file is refused) and internal/suggest (the kind meant by a misspelt
// name); never locks, checker or harness.
package nemesis
