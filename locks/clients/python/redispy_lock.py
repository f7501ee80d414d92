#!/usr/bin/env python3
"""redis-py's Lock behind locktorture's process adapter.

Speaks the line protocol of locks/clients/PROTOCOL.md on stdin/stdout and
uses redis-py's Lock exactly as its documentation says:

    lock = r.lock(name, timeout=TTL, blocking_timeout=WAIT)
    lock.acquire(token=...)        # True / False
    lock.extend(TTL, replace_ttl=True)
    lock.release()

One node (addrs[0]). The redis.Redis client gets the run's per-node timeout
as its socket timeouts (a careful user sets them; without them a black-holed
connection blocks for ever) and redis-py's defaults otherwise (no retries).

Validity: redis-py has none to offer. Its Lock keeps no deadline and checks
none: a user who acquired believes they hold the lock until they call
release(). The client says so ("until_release": true); the harness then
ends the hold at the release call, so a holder that outlives its key's TTL
overlaps the next holder, and the checker reports it.

Run with an interpreter that can `import redis` (Debian: python3-redis).
"""

import json
import secrets
import sys

import redis
from redis.exceptions import LockError, LockNotOwnedError, RedisError


def main():
    proto = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol

    def send(reply):
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    hello = json.loads(sys.stdin.readline())
    if hello.get("sentinels"):
        send({"id": hello["id"], "result": "error", "error": "redis-py-lock talks to one node, not through sentinels"})
        return
    if hello.get("fencing"):
        send({"id": hello["id"], "result": "error", "error": "redis-py's Lock issues no fencing tokens"})
        return
    host, port = hello["addrs"][0].rsplit(":", 1)
    node_timeout = hello["node_timeout_ms"] / 1000
    ttl = hello["ttl_ms"] / 1000
    r = redis.Redis(host=host, port=int(port), password=hello.get("password") or None,
                    socket_timeout=node_timeout, socket_connect_timeout=node_timeout)
    send({"id": hello["id"], "result": "ok", "name": "redis-py Lock",
          "language": "Python " + sys.version.split()[0],
          "versions": {"redis-py": redis.__version__}, "fencing": False})

    held = {}  # token -> the Lock object that acquired it

    def acquire(req):
        # Leave the last SET its per-node timeout and the reply some slack
        # within the harness's wait.
        wait = max(0.0, req["timeout_ms"] / 1000 - node_timeout - 0.01)
        lock = r.lock(req["key"], timeout=ttl, blocking_timeout=wait)
        token = secrets.token_hex(16)
        if not lock.acquire(token=token):
            return {"result": "not_acquired", "error": "held by another client for %.3fs" % wait}
        held[token] = lock
        return {"result": "ok", "token": token, "until_release": True}

    def release(req):
        lock = held.pop(req["token"], None)
        try:
            if lock is not None:
                lock.release()
            else:
                # A lease this process did not acquire (its own process
                # died): the library's compare-and-delete with the token.
                r.lock(req["key"], timeout=ttl).do_release(req["token"].encode())
        except LockNotOwnedError as e:
            return {"result": "not_held", "error": str(e)}
        return {"result": "ok"}

    def extend(req):
        lock = held.get(req["token"])
        if lock is None:
            # What redis-py says of a Lock it does not hold: "Cannot
            # extend an unlocked lock".
            return {"result": "not_held", "error": "no Lock object of this process holds that token"}
        try:
            lock.extend(ttl, replace_ttl=True)
        except LockNotOwnedError as e:
            return {"result": "not_held", "error": str(e)}
        return {"result": "ok", "until_release": True}

    ops = {"acquire": acquire, "release": release, "extend": extend,
           "ping": lambda req: {"result": "ok"}}
    for line in iter(sys.stdin.readline, ""):
        req = json.loads(line)
        op = ops.get(req["op"])
        try:
            reply = op(req) if op else {"result": "unknown", "error": "unknown op %r" % req["op"]}
        except (RedisError, LockError) as e:  # timeouts, lost connections: outcome unknown
            reply = {"result": "unknown", "error": "%s: %s" % (type(e).__name__, e)}
        reply["id"] = req["id"]
        send(reply)


if __name__ == "__main__":
    main()
