// Command redsync-extend-status is github.com/go-redsync/redsync/v4 at
// the version its go.mod pins (go.fixed.mod: the version that fixed the
// bug), served as a client process of locktorture's line protocol
// (locks/clients/PROTOCOL.md), without locktorture's own redsync adapter,
// which needs a later redsync:
//
//	bin/torture gate --lock exec:bin/bugs/redsync-extend-status --cells 'extend/client-pause$' --seeds 1..5
//
// redsync v4.0.0 to v4.0.3 compared the extend script's integer reply
// with the string "ERR" and the release script's with the int 0, so
// every extend and every release that a node answered counted as a
// success, the key held or not: an extend after the lease had passed to
// another client reported the lock extended (go-redsync/redsync pull
// request 61, "Fix extend and unlock", v4.0.4). docs/bugs.md has the
// figures.
//
// One RedLock on the hello's nodes (five, as it promises; quorum ⌊N/2⌋+1, redsync's default
// drift factor of 1%), one attempt per redsync call, the tries and the
// back-off the hello gives done here so that the validity can be counted
// from the first request: TTL − drift from the start of the attempt that
// succeeded. A release or an extend goes to the process that acquired
// the lease (redsync v4.0 cannot rebuild a Mutex from a token); another
// process answers unknown.
package main
