// Package cluster starts and owns the Redis nodes a run talks to.
//
// The process backend spawns redis-server processes bound to 127.0.0.1 on
// free ports, with no persistence unless asked, a random requirepass per
// cluster and each node's log kept. Every node is reached through its own
// toxiproxy proxy, run in-process, so faults can cut or slow any node; with
// WithProxyGroups each node has one proxy per client group, so a fault can
// cut one group of clients off a node and not another. The package can also
// kill (SIGKILL), restart (same port), pause (SIGSTOP) and resume (SIGCONT)
// a node. Close, a cancelled context and the death of the parent process
// all stop every process the package started.
//
// WithClockShim preloads a small C shim (clockshim.c, built with gcc on
// first use) into every node, so Node.SetClockOffset can shift the node's
// wall clock, which Redis expires keys by, while its monotonic clock runs on.
//
// StartFailover starts the failover topology instead: a primary, its
// asynchronous replica and three Redis Sentinels, with two proxies per
// node, one for clients and one for the replica and the sentinels, so a
// fault can isolate the primary from its replica and the sentinels while
// clients still write to it (see Failover).
//
// It imports go-redis (to wait for PING) and toxiproxy, nothing of this
// module.
package cluster
