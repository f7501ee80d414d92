// Package clients holds the lock clients that locktorture runs as
// processes, in any language, through locks.ProcessLock, and the
// conformance tests every such client must pass.
//
// The protocol is PROTOCOL.md in this folder. The clients:
//
//   - example/example_client.py: a minimal client, Python standard library
//     only (SET NX PX on one node), to copy for a lock of your own;
//   - python/redispy_lock.py: redis-py's Lock ("redis-py-lock");
//   - python/redlock.py: RedLock written in Python from the Redis page's
//     description ("redlock-py").
//
// The two Python clients are embedded in package locks, which runs them;
// testdata/ holds clients that misbehave on purpose (one that lies about
// acquiring, one that dies and hangs), which the tests use to show that
// the harness catches a lie and survives a crash.
//
// There is no Go code here besides the tests, which may import what they
// need (cluster, harness, checker); package locks imports nothing of this
// module.
package clients
