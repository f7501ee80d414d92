// Package locks holds the systems under test: Redis lock implementations
// behind one small interface, [Lock].
//
// The two locks the project is about are the single-instance lock
// ("setnx": SET key token NX PX ttl, released by a Lua compare-and-delete)
// and RedLock ("redlock": the same SET on N independent masters, a
// majority quorum, validity = ttl − elapsed − drift). Beside them live
// deliberately broken variants ("mutants"), each with one documented bug,
// which prove that the checkers see what they claim to see.
//
// The single-instance locks can also find their primary through Redis
// Sentinel (Config.Sentinels), with go-redis's failover client; a lease
// that the primary granted but did not replicate before a failover is then
// silently lost, which the harness's failover topology shows.
//
// Beside the reference locks, two lock libraries that Go services use are
// put through the same faults, each behind a thin adapter that maps its
// results to [Lock] without changing a command: "redsync"
// (github.com/go-redsync/redsync/v4, a RedLock; [NewRedsync]) and
// "redislock" (github.com/bsm/redislock, a single-instance lock;
// [NewRedislock]). Their docs say where each differs from the reference.
//
// Locks in any language run behind [ProcessLock], the process adapter: it
// starts client processes that speak a JSON-lines protocol on their
// standard input and output (clients/PROTOCOL.md), one per concurrent
// caller, kills every one of them, and every process they start, on
// every exit path (through a supervisor process: this binary re-executed
// in a hidden mode, see supervise.go), and maps the validity each client
// reports onto this process's clock. Two Python
// clients are built in, embedded from clients/python/: "redis-py-lock"
// (redis-py's Lock) and "redlock-py" (RedLock from the Redis page's
// description); a name "exec:COMMAND" runs any other ([ExecSpec]).
//
// Locks that renew themselves: "setnx-watchdog" (setnx with Redisson's
// watchdog, renewed every TTL/3 while held) and "rueidislock"
// (github.com/redis/rueidis/rueidislock, which extends its keys by itself
// and cancels its holder's context on a loss) claim no
// validity (Lease.Validity is UntilRelease ahead): the holder holds until
// it releases or the lock tells it, through the lease's [Notice]
// (Lease.Lost), that it lost the lease. Beside them, the mutant
// "setnx-watchdog-no-notice", which never tells, and "setnx-client-token",
// a test lock whose token is fixed per client ([WithCaller]).
//
// The consensus side of the argument, "etcd-mutex" (etcd's
// concurrency.Mutex on etcd members, Spec.Server "etcd"), lives in
// package locks/etcdlock, which registers it ([Register]) when a program
// imports it: the torture binary does, and a program that imports this
// package alone (a lock's gate) compiles neither the etcd client nor
// gRPC.
//
// Any Go lock of the registry can also run in client processes of its
// own: [Serve] answers the protocol for it (`torture client --lock
// NAME`), and [AsProcess] makes its Spec start them, so that a whole
// client can be stopped (SIGSTOP: [ProcessLock.StopLease]). A client
// process tells of a lost lease with a "lost" event (protocol version 2).
//
// Per-node evidence: a caller that wants to know which nodes granted,
// refused or did not answer each call puts an [Evidence] in the call's
// context ([WithEvidence]); every lock of this package reports into it
// ([NodeReporter], [Report]): the reference locks and the mutants from
// their own code, the library adapters through a go-redis hook on each
// node's client (they cannot change the library), the process adapter
// from its client's replies when the client offers them. A lock that
// reports nothing still works; its evidence is "not reported".
//
// Why the context, as net/http/httptrace does, and not a second set of
// methods on an optional interface (toxiproxy's style): the library
// adapters cannot change their library, but the library sends every
// go-redis command with the caller's context, so a hook on each node's
// client sees the command, its reply and the call's Evidence without the
// library's help; a wrapper around a Lock passes the evidence on for
// free; and Lock stays as it is. The one named interface, NodeReporter,
// only declares that a lock reports.
//
// Every implementation is listed, in a fixed order, in the registry
// ([Specs], [Lookup], [New]) and is selected by name. [Register] adds a
// lock written elsewhere, so that the harness can torture it without a
// fork of this module.
//
// Beside its registration every lock declares what it promises
// ([Promises]: one instance or a quorum, validity counted from before the
// request, fencing and whether it is sound, extends, the persistence and
// topologies it assumes, faults it claims to survive). The release gate
// derives the cells a lock is tested on from them; a mutant declares what
// the lock it mutates claims, which is how it fails.
//
// This package knows nothing of faults, histories or the harness: it
// imports go-redis, the three lock libraries (and rueidis, which
// rueidislock runs on), google/shlex (to split an exec: command line),
// and of this module only three leaves under internal/ that import
// nothing of it: wait (the interruptible sleep), redisopt (the go-redis
// options; see ClientOptions) and suggest (the name meant by a misspelt
// lock).
package locks
