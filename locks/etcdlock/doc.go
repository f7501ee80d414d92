// Package etcdlock holds "etcd-mutex", the consensus side of the argument
// this project measures: the lock of etcd's official client
// ([go.etcd.io/etcd/client/v3/concurrency]'s Mutex on a session lease,
// its keep-alive the renewal, a lost session or an unbounded lease the
// [locks.Notice], the key's create revision the fencing token), against
// etcd members the harness runs (cluster.ServerEtcd), not Redis.
//
// It is a package of its own so that only the programs that run it
// compile the etcd client and gRPC: importing it, blank or not, registers
// the lock with [locks.Register], as a lock written outside this module
// registers itself. The torture binary (cmd/torture) imports it; package
// locks, and everything a lock's gate is built from (gate, matrix,
// harness, trial), never do.
//
// It imports locks and the etcd client (go.etcd.io/etcd/client/v3,
// its api/v3 errors, zap to silence its logger), nothing else of this
// module.
package etcdlock
