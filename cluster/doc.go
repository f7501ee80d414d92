// Package cluster starts and owns the Redis nodes a run talks to, or
// connects to nodes someone else runs; for the etcd lock it starts etcd
// members instead (StartEtcd, Spec.Server "etcd": Debian's etcd binary
// as child processes, never the etcd server linked in).
//
// Open opens the cluster a Spec describes (a backend, a topology, the
// nodes) with Options saying how (its folder, its proxy groups, the clock
// shim); it is the one place that switches on the backend and the
// topology, and what the harness calls. Spec.WithDefaults checks a Spec,
// Spec.CheckPrograms the programs it needs, and Spec.Abilities (then
// Cluster.Abilities) says what fault kinds can do to its nodes: kill and
// pause them, shift their clocks, fault their network.
//
// Three backends give the same *Cluster and *Node:
//
//   - Start, the process backend, spawns redis-server processes bound to
//     127.0.0.1 on free ports, in their own process group and killed when
//     this process dies.
//   - StartDocker, the docker backend, runs one container per node
//     through the ContainerEngine that package cluster/docker registers
//     when a program imports it (testcontainers-go, its reaper disabled:
//     it removes its own labelled containers on Close, on a cancelled
//     context, and in the next StartDocker after a crash); a program
//     built without it gets ErrNoDockerBackend. Ports are published on
//     127.0.0.1 and kept across restarts. BuildImage (make redis-image)
//     builds DefaultImage FROM scratch out of this host's redis-server,
//     its libraries and the clock shim: nothing is pulled.
//   - Connect, the external backend, drives nodes that run elsewhere; only
//     the addresses given are contacted. Their proxies, if any, live on a
//     toxiproxy server someone else runs (WithToxiproxy), driven through
//     toxiproxy's HTTP client. Kill, Restart, Pause, Resume and clock
//     shifts return errors: the cluster does not run those nodes, unless
//     every node is a container of this machine's Docker engine, found
//     by its address (the compose cluster of deploy/compose): then they
//     are docker kill, docker start, docker pause and unpause of its
//     container, and the clock shim's offset file bind-mounted into it
//     (see adopt.go); Close leaves the containers running, as it found
//     them.
//
// Nodes the cluster runs have no persistence unless asked, a random
// requirepass per cluster and each node's log kept. The password is never
// on a command line (every local user can read /proc/PID/cmdline): each
// node reads it from the redis.conf in its folder. Node and sentinel
// folders are 0700 and every file in them 0600, also those Redis writes
// itself: processes run under umask 077, and in Docker, whose containers
// have umask 022, a watcher narrows what the containers create (see
// keeper in private.go). Every node is reached
// through its own toxiproxy proxy, run in-process (remote for Connect), so
// faults can cut or slow any node (see Link); with WithProxyGroups each
// node has one proxy per client group, so a fault can cut one group of
// clients off a node and not another. The package can also kill (SIGKILL,
// docker kill), restart (same port), pause (SIGSTOP, docker pause) and
// resume a node. Close and a cancelled context stop every process and
// remove every container the package started.
//
// Node.Observe starts an Observer of a node's keyspace notifications
// on a connection to its direct address, outside its proxies: it
// sets notify-keyspace-events (KeyEvents) on every connection it makes,
// so again after a restart, and reports every set, del, expire, expired
// and evicted of the keys it is told to keep.
//
// WithClockShim preloads a small C shim (clockshim.c, built with gcc on
// first use; carried by DefaultImage) into every node, so
// Node.SetClockOffset can shift the node's wall clock, which Redis expires
// keys by, while its monotonic clock runs on.
//
// StartFailover starts the failover topology instead (Cluster.Failover):
// a primary, its
// asynchronous replica and three Redis Sentinels, with two proxies per
// node, one for clients and one for the replica and the sentinels, so a
// fault can isolate the primary from its replica and the sentinels while
// clients still write to it (see Failover); StartDockerFailover runs it
// in containers on a private Docker network.
//
// StartRedisCluster starts the cluster topology (Cluster.RedisCluster):
// Redis Cluster, N masters each with one replica, the slots split evenly,
// on the process backend. The nodes announce the addresses of fronts in
// this process, which the redirections name (RedisCluster.AddrMap maps
// them to the client proxies), and make their own connections from
// addresses of their own, so RedisCluster.Cut and CutReplication can cut
// two nodes apart (the replication stream, the cluster bus) while the
// clients reach both.
//
// StartEtcd starts etcd members (Spec.Server ServerEtcd) on the process
// backend: one Raft group of 1, 3 or 5 processes of the etcd program on
// the PATH, each member's client port behind its toxiproxy proxies like a
// Redis node's, its peer port behind a front of this process that knows
// each Raft connection's member from the X-PeerURLs header etcd sends,
// so CutPeers can cut members apart (kind partition does, beside the
// clients). Kill, Restart, Pause and Resume act on a member's process;
// Abilities has no Clock (a Go program's clock is out of the shim's
// reach), no PowerLoss and no Redis, so the kinds that need them are
// refused in one line.
//
// WithLazyFS runs each node's data folder on lazyfs (internal/lazyfs), a
// FUSE file system that keeps what the node wrote but did not fsync
// apart, so Node.DropUnsynced can drop it as a power loss would; the
// mounts are made as the nodes start and unmounted by Close.
//
// It imports go-redis (to wait for PING), toxiproxy (server and client)
// and fsnotify (see keeper in private.go), and of this module only
// internal/redisopt (the go-redis options, a leaf shared with locks) and
// internal/lazyfs. It must not import the Docker client: cluster/docker
// does, and only the programs that run the docker backend import
// cluster/docker.
package cluster
