#!/usr/bin/env python3
"""sherlock's RedisLock behind locktorture's process adapter.

Usage: client.py LIBDIR, where LIBDIR holds the `sherlock` package to run:
`make bugs` puts the version that had the bug (lib/ here, v0.4.0) in
bin/bugs/sherlock-renew.lib and the version that fixed it (lib/ with
fix.patch applied, byte for byte v0.4.1) in bin/bugs/sherlock-renew-fixed.lib;
bin/bugs/sherlock-renew and bin/bugs/sherlock-renew-fixed start this client
on each.

The bug (py-sherlock/sherlock issue 66, fixed in v0.4.1): RedisLock.renew()
ran the release script instead of the renew script. It deleted the key of
the lock its holder held and answered True, so a holder that renewed went
on working, told it was extended, while the next client was granted the
key at once.

Speaks the line protocol of locks/clients/PROTOCOL.md on stdin/stdout and
uses sherlock as its documentation says:

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

The version that ran is told by the git blob id of the lock.py it loaded
(VERSIONS), so a run's results.json records it under client:sherlock.

Run with an interpreter that can `import redis` (Debian: python3-redis).
"""

import hashlib
import json
import math
import os
import random
import sys
import time


def blob_id(path):
    """The git blob id of the file at path (git hash-object)."""
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def version_of(lib):
    """sherlock's version in lib, from VERSIONS beside this script."""
    blob = blob_id(os.path.join(lib, "sherlock", "lock.py"))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "VERSIONS")) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 4 and fields[2] == "sherlock/lock.py" and fields[3] == blob:
                return fields[0]
    return "unknown (lock.py blob %s)" % blob


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: client.py LIBDIR (the folder holding the sherlock package)\n")
        sys.exit(2)
    lib = os.path.abspath(sys.argv[1])
    sys.path.insert(0, lib)

    import redis
    from sherlock.lock import LockException, RedisLock

    proto = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol

    def send(reply):
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    hello = json.loads(sys.stdin.readline())
    if hello.get("sentinels"):
        send({"id": hello["id"], "result": "error", "error": "sherlock's RedisLock talks to one node, not through sentinels"})
        return
    if hello.get("fencing"):
        send({"id": hello["id"], "result": "error", "error": "sherlock issues no fencing tokens"})
        return
    ttl_ms = hello["ttl_ms"]
    if ttl_ms <= 0:
        send({"id": hello["id"], "result": "error", "error": "a TTL of at least 1ms"})
        return
    seconds = int(math.ceil(ttl_ms / 1000))
    host, port = hello["addrs"][0].rsplit(":", 1)
    node_timeout = hello["node_timeout_ms"] / 1000
    tries = max(hello.get("tries", 1), 1)
    retry_delay = hello.get("retry_delay_ms", 0) / 1000
    rng = random.Random("%s/%s" % (hello.get("seed", 0), hello.get("client", 0)))
    r = redis.StrictRedis(host=host, port=int(port), password=hello.get("password") or None,
                          socket_timeout=node_timeout, socket_connect_timeout=node_timeout)
    send({"id": hello["id"], "result": "ok", "protocol": 2, "name": "sherlock RedisLock",
          "language": "Python " + sys.version.split()[0],
          "versions": {"sherlock": version_of(lib), "redis-py": redis.__version__}, "fencing": False,
          "promises": {"elapsed_from_request": True, "extends": True}})

    held = {}  # token -> the RedisLock that acquired it

    def acquire(req):
        deadline = time.monotonic() + req["timeout_ms"] / 1000 - node_timeout - 0.01
        first = time.monotonic()
        for i in range(tries):
            if i > 0:
                d = rng.uniform(retry_delay / 2, retry_delay) if retry_delay > 0 else 0
                if time.monotonic() + d > deadline:
                    break
                time.sleep(d)
            lock = RedisLock(req["key"], expire=seconds, client=r)
            start = time.monotonic()
            if lock.acquire(blocking=False):
                token = lock._owner  # sherlock's owner id: a UUID4 per acquire
                held[token] = lock
                return {"result": "ok", "token": token, "validity_ms": (start - first) * 1000 + ttl_ms}
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
        return {"result": "ok", "validity_ms": ttl_ms}

    ops = {"acquire": acquire, "release": release, "extend": extend,
           "ping": lambda req: {"result": "ok"}}
    for line in iter(sys.stdin.readline, ""):
        req = json.loads(line)
        op = ops.get(req["op"])
        try:
            reply = op(req) if op else {"result": "unknown", "error": "unknown op %r" % req["op"]}
        except (redis.RedisError, LockException) as e:  # timeouts, lost connections: outcome unknown
            reply = {"result": "unknown", "error": "%s: %s" % (type(e).__name__, e)}
        reply["id"] = req["id"]
        send(reply)


if __name__ == "__main__":
    main()
