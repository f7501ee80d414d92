// Package cluster starts and owns the nodes a run talks to (Redis, or
// etcd members for the etcd lock), or connects to nodes someone else runs.
//
// Open opens the cluster a Spec describes with Options saying how; it is
// the one place that switches on backend and topology. Spec.WithDefaults
// checks a Spec, Spec.CheckPrograms the programs it needs, and
// Spec.Abilities (then Cluster.Abilities) what fault kinds can do to its
// nodes. Three backends give the same *Cluster and *Node:
//
//   - Start (process): redis-server processes on free ports of 127.0.0.1,
//     in their own process group, killed when this process dies.
//   - StartDocker (docker): one container per node, run by the
//     ContainerEngine that cluster/docker registers when imported
//     (ErrNoDockerBackend without it). BuildImage builds DefaultImage FROM
//     scratch from this host's redis-server and the clock shim: nothing is
//     pulled.
//   - Connect (external): nodes run elsewhere; only the given addresses
//     (and WithToxiproxy's server) are contacted. Nodes that are all
//     containers of this machine's Docker engine (deploy/compose) are
//     adopted: Kill, Restart, Pause and clock shifts act on their
//     containers (adopt.go), and Close leaves them running.
//
// Nodes the cluster runs share a random requirepass, never on a command
// line (every local user can read /proc/PID/cmdline): each node reads it
// from the redis.conf in its folder. Folders are 0700 and files 0600, also
// those Redis writes: processes run under umask 077, and in Docker a
// watcher narrows what containers create (keeper, private.go). Every node
// is reached through its own toxiproxy proxy, one per client group
// (WithProxyGroups), so faults can cut or slow it (Link).
//
// Node.Observe follows a node's keyspace notifications. WithClockShim
// preloads clockshim.c so Node.SetClockOffset shifts a node's wall clock.
// WithLazyFS puts each node's data folder on lazyfs, so Node.DropUnsynced
// can drop what it did not fsync, as a power loss would.
//
// Topologies: StartFailover and StartDockerFailover (Failover: a primary,
// its replica and three sentinels), StartRedisCluster (RedisCluster, on
// the process backend) and StartEtcd (one Raft group of etcd processes,
// whose peer links CutPeers cuts).
//
// It imports go-redis (to wait for PING), toxiproxy (server and client)
// and fsnotify (keeper), and of this module only internal/redisopt (the
// go-redis options, a leaf shared with locks) and internal/lazyfs. It must
// not import the Docker client: cluster/docker does, and only programs
// that run the docker backend import it.
package cluster
