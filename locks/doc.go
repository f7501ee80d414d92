// Package locks holds the systems under test: Redis lock implementations
// behind one small interface, [Lock].
//
// The two locks the project is about are the single-instance lock
// ("setnx": SET key token NX PX ttl, released by a Lua compare-and-delete)
// and RedLock ("redlock": the same SET on N independent masters, a
// majority quorum, validity = ttl − elapsed − drift). Beside them live
// deliberately broken variants ("mutants"), each with one documented bug,
// which prove that the checkers see what they claim to see. The
// single-instance locks can find their primary through Redis Sentinel
// (Config.Sentinels); a lease the primary did not replicate before a
// failover is then silently lost, which the failover topology shows.
//
// Two lock libraries that Go services use run behind thin adapters that
// change no command: "redsync" ([NewRedsync]) and "redislock"
// ([NewRedislock]). Locks in any language run behind [ProcessLock]: client
// processes speaking a JSON-lines protocol (clients/PROTOCOL.md), all
// killed on every exit path through a supervisor process (supervise.go).
// Two Python clients are built in, "redis-py-lock" and "redlock-py"; a
// name "exec:COMMAND" runs any other ([ExecSpec]). [Serve] and
// [AsProcess] run a Go lock of the registry in client processes of its
// own, so that a whole client can be stopped.
//
// Locks that renew themselves ("setnx-watchdog", "rueidislock") claim no
// validity ([UntilRelease]) and tell a holder of a loss through
// Lease.Lost ([Notice]). "etcd-mutex" lives in package locks/etcdlock,
// which registers it ([Register]) when imported, so that a program that
// imports this package alone compiles neither the etcd client nor gRPC.
//
// A caller that wants per-node evidence puts an [Evidence] in the call's
// context ([WithEvidence]); every lock of this package reports into it
// (evidence.go says why the context). Every implementation is listed in
// the registry ([Specs], [Lookup], [New]) with its [Promises], from which
// the release gate derives the cells it is tested on.
//
// This package knows nothing of faults, histories or the harness: it
// imports go-redis, the three lock libraries (and rueidis, which
// rueidislock runs on), google/shlex (to split an exec: command line),
// and of this module only three leaves under internal/ that import
// nothing of it: wait (the interruptible sleep), redisopt (the go-redis
// options; see ClientOptions) and suggest (the name meant by a misspelt
// lock).
package locks
