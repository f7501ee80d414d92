// Package nemesis injects faults into a running test: partitions and
// latency through toxiproxy, kill/restart and pause/resume of Redis nodes,
// wall-clock jumps, stalls of lock-holding clients and failovers. Each
// fault kind has a start and a heal; every start and heal is an event in
// the history, on the same clock as the operations.
//
// It imports history, cluster and internal/wait; never locks, checker or
// harness.
package nemesis
