// Command gozero-reacquire is github.com/zeromicro/go-zero's RedisLock
// (core/stores/redis) at the version its go.mod pins (go.fixed.mod: the
// version that fixed the bug), served as a client process of
// locktorture's line protocol (locks/clients/PROTOCOL.md):
//
//	bin/torture gate --lock exec:bin/bugs/gozero-reacquire --cells 'extend/latency$' --seeds 1..5
//
// go-zero renews a RedisLock it holds by calling Acquire again (the lock
// script sets the key again when it holds the lock's id). From v1.2.5
// (pull request 1366) to v1.3.1 Acquire counted its calls in the process
// instead: a second Acquire on the same lock returned true without a
// command to Redis, so a renewal renewed nothing and the key expired
// under a holder that had been told it was extended (zeromicro/go-zero
// pull request 1704, "remove reentrance in redislock, timeout bug",
// v1.3.2, put the script back). docs/bugs.md has the figures.
//
// One RedisLock per acquire on the hello's first node, with go-zero's
// own Redis client (its breaker and retries included), the expiry the
// TTL rounded up to whole seconds (go-zero counts in seconds and adds
// its own tolerance), the tries and the back-off the hello gives done
// here. The validity is the TTL counted from before the call that
// succeeded (from the first request with the tries). An extend is
// Acquire on the lock the acquire made; a release is Release. A release
// or an extend goes to the process that acquired the lease; another
// process answers unknown. go-zero logs to standard output, so the
// protocol keeps a duplicate of it and descriptor 1 is pointed at
// standard error.
package main
