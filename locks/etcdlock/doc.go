// Package etcdlock holds "etcd-mutex", the consensus side of the argument
// this project measures: etcd's official client's Mutex
// ([go.etcd.io/etcd/client/v3/concurrency]) on a session lease, against
// etcd members the harness runs (cluster.ServerEtcd), not Redis.
//
// It is a package of its own so that only the programs that run it (the
// torture binary) compile the etcd client and gRPC: importing it
// registers the lock with [locks.Register], as a lock written outside
// this module would. Package locks and a lock's gate never import it.
//
// It imports locks, internal/wait (the back-off's sleep) and the etcd
// client (go.etcd.io/etcd/client/v3, its api/v3 errors, zap to silence
// its logger).
package etcdlock
