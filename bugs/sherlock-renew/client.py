#!/usr/bin/env python3
"""sherlock's RedisLock behind locktorture's process adapter.

Usage: client.py LIBDIR, where LIBDIR holds the `sherlock` package to run:
`make bugs` puts the version that had the bug (third_party/ here, v0.4.0) in
bin/bugs/sherlock-renew.lib and the version that fixed it (third_party/ with
fix.patch applied, byte for byte v0.4.1) in bin/bugs/sherlock-renew-fixed.lib;
bin/bugs/sherlock-renew and bin/bugs/sherlock-renew-fixed start this client
on each (through ../python.sh).

The bug (py-sherlock/sherlock issue 66, fixed in v0.4.1): RedisLock.renew()
ran the release script instead of the renew script. It deleted the key of
the lock its holder held and answered True, so a holder that renewed went
on working, told it was extended, while the next client was granted the
key at once.

Speaks the line protocol of locks/clients/PROTOCOL.md (../lineproto.py)
and uses sherlock as its documentation says:

    lock = RedisLock(name, expire=SECONDS, client=redis_client)
    lock.acquire(blocking=False)   # True / False
    lock.renew()                   # True / False
    lock.release()                 # raises LockException when not the owner

One node (addrs[0]). sherlock counts its expiry in whole seconds (EXPIRE),
so the TTL is rounded up and the validity claimed is the TTL, counted from
before the call that succeeded (from the first attempt's request with the
tries), as the key lives at least that long from when the script ran. The
tries and the back-off between them are the hello's, done here, each try
one acquire(blocking=False). The token is the lock's owner id (a UUID4).
"""

import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lineproto  # noqa: E402


def main():
    lib = lineproto.library(__file__)
    import redis
    from sherlock.lock import LockException, RedisLock

    held = {}  # token -> the RedisLock that acquired it
    cfg = {}

    def hello(req):
        refused = lineproto.refusal(req, "sherlock")
        if refused:
            return refused, True
        if req["ttl_ms"] <= 0:
            return {"result": "error", "error": "a TTL of at least 1ms"}, True
        host, port = req["addrs"][0].rsplit(":", 1)
        node_timeout = req["node_timeout_ms"] / 1000
        cfg.update(ttl_ms=req["ttl_ms"], seconds=int(math.ceil(req["ttl_ms"] / 1000)), node_timeout=node_timeout,
                   tries=max(req.get("tries", 1), 1), retry_delay=req.get("retry_delay_ms", 0) / 1000,
                   rng=random.Random("%s/%s" % (req.get("seed", 0), req.get("client", 0))),
                   r=redis.StrictRedis(host=host, port=int(port), password=req.get("password") or None,
                                       socket_timeout=node_timeout, socket_connect_timeout=node_timeout))
        return {"result": "ok", "protocol": 2, "name": "sherlock RedisLock",
                "language": "Python " + sys.version.split()[0],
                "versions": {"sherlock": lineproto.version_of(__file__, lib, "sherlock/lock.py"),
                             "redis-py": redis.__version__},
                "fencing": False, "promises": {"elapsed_from_request": True, "extends": True}}, False

    def acquire(req):
        deadline = time.monotonic() + req["timeout_ms"] / 1000 - cfg["node_timeout"] - 0.01
        first = time.monotonic()
        for i in range(cfg["tries"]):
            if i > 0:
                d = cfg["rng"].uniform(cfg["retry_delay"] / 2, cfg["retry_delay"]) if cfg["retry_delay"] > 0 else 0
                if time.monotonic() + d > deadline:
                    break
                time.sleep(d)
            lock = RedisLock(req["key"], expire=cfg["seconds"], client=cfg["r"])
            start = time.monotonic()
            if lock.acquire(blocking=False):
                token = lock._owner  # sherlock's owner id: a UUID4 per acquire
                held[token] = lock
                return {"result": "ok", "token": token, "validity_ms": (start - first) * 1000 + cfg["ttl_ms"]}
        return {"result": "not_acquired", "error": "sherlock: the key is held"}

    def release(req):
        lock = held.pop(req["token"], None)
        if lock is None:
            return {"result": "unknown", "error": "no RedisLock of this process holds that token"}
        try:
            lock.release()
        except LockException as e:
            return {"result": "not_held", "error": str(e)}
        return {"result": "ok"}

    def extend(req):
        lock = held.get(req["token"])
        if lock is None:
            return {"result": "unknown", "error": "no RedisLock of this process holds that token"}
        if not lock.renew():
            return {"result": "not_held"}
        # The TTL, counted from before the call (validity_ms).
        return {"result": "ok", "validity_ms": cfg["ttl_ms"]}

    lineproto.serve(hello, {"acquire": acquire, "release": release, "extend": extend},
                    (redis.RedisError, LockException))


if __name__ == "__main__":
    main()
