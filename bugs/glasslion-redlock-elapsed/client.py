#!/usr/bin/env python3
"""glasslion/redlock (PyPI "redlock") behind locktorture's process adapter.

Usage: client.py LIBDIR, where LIBDIR holds the `redlock` package to run:
`make bugs` puts the version that had the bug (third_party/ here, 1.0.0) in
bin/bugs/glasslion-redlock-elapsed.lib and the next release (third_party/ with
fix.patch applied, byte for byte 1.1.0) in
bin/bugs/glasslion-redlock-elapsed-fixed.lib; bin/bugs/glasslion-redlock-elapsed
and …-fixed start this client on each (through ../python.sh).

The bug (glasslion/redlock pull request 2, "Correct elapsed_milliseconds
calculation", commit 69c6c16, released in 1.1.0): acquire() measured the
time its round of SETs took as timedelta.microseconds // 1000, the
sub-second part alone. A round that took 1.2 s counted as 200 ms, so an
acquire whose replies came back after the TTL still said True: the key it
set had expired, and another client could hold it.

Speaks the line protocol of locks/clients/PROTOCOL.md (../lineproto.py)
and uses redlock as its README says:

    factory = RedLockFactory(connection_details=[{...}, ...])
    lock = factory.create_lock(key, ttl=TTL_MS)
    lock.acquire()     # True / False, after retry_times rounds
    lock.release()     # a compare-and-delete on every node

on every node of the hello, a majority to win. The connection details are
host, port and password, with no socket timeout: the library sets none and
its README passes none. redlock keeps no validity and offers none, like
threading.Lock, whose API it copies: its user believes they hold the lock
until they release it, and the client says so ("until_release"). The
library's rounds (retry_times) and its back-off (retry_delay, in ms) are
the hello's tries and retry delay. The token is the library's lock_key.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lineproto  # noqa: E402


def main():
    lib = lineproto.library(__file__)
    import redis
    from redlock import RedLockFactory

    held = {}  # token -> the RedLock that acquired it
    cfg = {}

    def hello(req):
        refused = lineproto.refusal(req, "redlock")
        if refused:
            return refused, True
        nodes = []
        for addr in req["addrs"]:
            host, port = addr.rsplit(":", 1)
            nodes.append({"host": host, "port": int(port), "password": req.get("password") or None})
        cfg.update(factory=RedLockFactory(nodes), ttl=int(req["ttl_ms"]), tries=max(req.get("tries", 1), 1),
                   retry_delay=int(req.get("retry_delay_ms", 0)))
        return {"result": "ok", "protocol": 2, "name": "glasslion redlock",
                "language": "Python " + sys.version.split()[0],
                "versions": {"redlock": lineproto.version_of(__file__, lib, "redlock/lock.py"),
                             "redis-py": redis.__version__},
                "fencing": False}, False

    def acquire(req):
        lock = cfg["factory"].create_lock(req["key"], retry_times=cfg["tries"], retry_delay=cfg["retry_delay"], ttl=cfg["ttl"])
        if not lock.acquire():
            return {"result": "not_acquired", "error": "redlock: no majority within its rounds"}
        held[lock.lock_key] = lock
        return {"result": "ok", "token": lock.lock_key, "until_release": True}

    def release(req):
        lock = held.pop(req["token"], None)
        if lock is None:
            return {"result": "unknown", "error": "no RedLock of this process holds that token"}
        lock.release()  # says nothing of whether it still held the key
        return {"result": "ok"}

    lineproto.serve(hello, {"acquire": acquire, "release": release}, (redis.RedisError,))


if __name__ == "__main__":
    main()
