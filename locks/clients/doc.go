// Package clients holds the lock clients that locktorture runs as
// processes, in any language, through locks.ProcessLock, and the
// conformance tests every such client must pass. The protocol is
// PROTOCOL.md in this folder. The clients:
//
//   - example/example_client.py: a minimal client, Python standard library
//     only (SET NX PX on one node), to copy for a lock of your own;
//   - python/redispy_lock.py: redis-py's Lock ("redis-py-lock");
//   - python/redlock.py: RedLock from the Redis page ("redlock-py").
//
// Package locks embeds and runs the Python clients; testdata/ holds
// clients that misbehave on purpose (one lies about acquiring, one dies
// and hangs). Only the tests are Go code, and package locks imports
// nothing of this module here.
package clients
