// Package cluster starts and owns the Redis nodes a run talks to.
//
// The process backend spawns redis-server processes bound to 127.0.0.1 on
// free ports, with no persistence unless asked, a random requirepass per
// cluster and each node's log kept. Every node is reached through its own
// toxiproxy proxy, run in-process, so faults can cut or slow any node; the
// package can also kill (SIGKILL), restart (same port), pause (SIGSTOP) and
// resume (SIGCONT) a node. Close, a cancelled context and the death of the
// parent process all stop every process the package started.
//
// It imports go-redis (to wait for PING) and toxiproxy, nothing of this
// module.
package cluster
