#!/usr/bin/env python3
"""RedLock in Python, behind locktorture's process adapter.

Written from the algorithm as the Redis page "Distributed Locks with Redis"
describes it (the redlock-py pattern the seed article shows), over redis-py,
with one redis.Redis client per independent master:

1. Note the current time (a monotonic clock).
2. Try to SET key token NX PX ttl on all N instances in turn, each call
   bounded by a timeout small compared with the TTL (the run's per-node
   timeout: socket timeouts of the client).
3. The lock is acquired if at least N/2+1 instances granted it and the time
   elapsed is less than the TTL: the validity left is
   TTL - elapsed - drift, with drift = TTL * 0.01 + 2 ms.
4. Otherwise unlock every instance (a compare-and-delete, also on those
   that seemed not to grant: their SET may have landed), wait a random
   delay and try again, up to `tries` attempts.

Release unlocks every instance and succeeds if a quorum deleted the token.
Extend (from the page's "Making the algorithm more reliable: extending the
lock") runs a compare-and-pexpire on every instance and succeeds if a quorum
extended within the validity.

Every reply to an acquire, release or extend that asked the nodes carries the
per-node evidence of its last round ("nodes", locks/clients/PROTOCOL.md).

The deadline of a lease is start + TTL - drift, start being taken before the
first SET of the attempt that succeeded; the reply's validity_ms counts it
from when this client began the call (protocol, locks/clients/PROTOCOL.md).

With --wall (the lock redlock-py-wall) the time elapsed in a round is
counted with time.time(), the wall clock, as the redlock-py library
(SPSCommerce/redlock-py) does: start_time = int(time.time() * 1000), then
validity = ttl - elapsed - drift, which its user holds for from the reply
on. A backward jump of the wall clock during a round makes elapsed come out
smaller (even negative), and the validity over-claims by the jump; a
forward jump makes it under-claim. Without --wall elapsed is counted on
time.monotonic, which no wall-clock jump moves.

Run with an interpreter that can `import redis` (Debian: python3-redis).
"""

import json
import random
import secrets
import sys
import time

import redis
from redis.exceptions import RedisError, ResponseError

UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0"""

EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0"""


class RedLock:
    def __init__(self, hello, wall=False):
        # The clock elapsed time is counted on (see --wall above).
        self.clock = time.time if wall else time.monotonic
        self.wall = wall
        timeout = hello["node_timeout_ms"] / 1000
        self.nodes = []
        for addr in hello["addrs"]:
            host, port = addr.rsplit(":", 1)
            self.nodes.append(redis.Redis(host=host, port=int(port), password=hello.get("password") or None,
                                          socket_timeout=timeout, socket_connect_timeout=timeout))
        self.quorum = len(self.nodes) // 2 + 1
        self.ttl_ms = hello["ttl_ms"]
        self.drift_ms = self.ttl_ms * 0.01 + 2
        self.tries = max(1, hello.get("tries", 3))
        self.retry_delay = hello.get("retry_delay_ms", 50) / 1000
        # One seed per process: the run's seed and this process's number.
        self.rng = random.Random(hello.get("seed", 1) * 1000003 + hello.get("client", 0))
        self.unlock_scripts = [n.register_script(UNLOCK) for n in self.nodes]
        self.extend_scripts = [n.register_script(EXTEND) for n in self.nodes]
        self.deadlines = {}  # token -> deadline of the lease (monotonic seconds)

    def each(self, call):
        """Call call(i) for every node in turn; return (yes, errors, nodes):
        nodes is the per-node evidence of the round (protocol: "nodes")."""
        yes, errors = 0, []
        nodes = {"granted": [], "refused": [], "silent": []}
        for i in range(len(self.nodes)):
            try:
                if call(i):
                    yes += 1
                    nodes["granted"].append(i)
                else:
                    nodes["refused"].append(i)
            except ResponseError as e:  # the node answered with an error: it did not do it
                nodes["refused"].append(i)
                errors.append("node %d: %s: %s" % (i, type(e).__name__, e))
            except RedisError as e:  # no answer: it may have
                nodes["silent"].append(i)
                errors.append("node %d: %s: %s" % (i, type(e).__name__, e))
        return yes, errors, nodes

    def unlock(self, key, token):
        return self.each(lambda i: self.unlock_scripts[i](keys=[key], args=[token]))

    def acquire(self, key, began, wait_until):
        token = secrets.token_hex(16)
        why = ""
        nodes, unlocked = {}, []
        for attempt in range(self.tries):
            if attempt > 0:
                delay = self.rng.uniform(self.retry_delay / 2, self.retry_delay)
                if time.monotonic() + delay >= wait_until:
                    break
                time.sleep(delay)
            start = self.clock()
            granted, errors, nodes = self.each(lambda i: self.nodes[i].set(key, token, nx=True, px=int(self.ttl_ms)))
            nodes["attempt"] = attempt + 1
            end = time.monotonic()
            elapsed_ms = ((time.time() if self.wall else end) - start) * 1000
            validity_ms = self.ttl_ms - elapsed_ms - self.drift_ms
            if granted >= self.quorum and validity_ms > 0:
                # Held for validity_ms from the reply on: with the
                # monotonic clock, start + TTL - drift.
                deadline = end + validity_ms / 1000
                self.deadlines[token] = deadline
                nodes["unlocked"] = unlocked
                return {"result": "ok", "token": token, "validity_ms": (deadline - began) * 1000, "nodes": nodes}
            unlocked = sorted(set(unlocked) | set(self.unlock(key, token)[2]["granted"]))
            why = "%d of %d nodes granted in %.1f ms, %d needed" % (granted, len(self.nodes), elapsed_ms, self.quorum)
            if errors:
                why += "; " + "; ".join(errors)
        nodes["unlocked"] = unlocked
        return {"result": "not_acquired", "error": why or "no time for an attempt", "nodes": nodes}

    def release(self, key, token):
        self.deadlines.pop(token, None)
        deleted, errors, nodes = self.unlock(key, token)
        nodes["attempt"] = 1
        if deleted >= self.quorum:
            return {"result": "ok", "nodes": nodes}
        if deleted + len(errors) >= self.quorum:
            return {"result": "unknown", "error": "%d nodes deleted the token; %s" % (deleted, "; ".join(errors)), "nodes": nodes}
        return {"result": "not_held", "error": "%d of %d nodes held the token" % (deleted, len(self.nodes)), "nodes": nodes}

    def extend(self, key, token, began):
        deadline = self.deadlines.get(token)
        if deadline is None or time.monotonic() >= deadline:
            return {"result": "not_held", "error": "the lease's validity has passed"}  # no node asked: no "nodes"
        start = self.clock()
        extended, errors, nodes = self.each(lambda i: self.extend_scripts[i](keys=[key], args=[token, int(self.ttl_ms)]))
        nodes["attempt"] = 1
        end = time.monotonic()
        elapsed_ms = ((time.time() if self.wall else end) - start) * 1000
        validity_ms = self.ttl_ms - elapsed_ms - self.drift_ms
        if validity_ms <= 0:
            return {"result": "not_held", "error": "the round took %.1f ms" % elapsed_ms, "nodes": nodes}
        if extended >= self.quorum:
            deadline = end + validity_ms / 1000
            self.deadlines[token] = deadline
            return {"result": "ok", "validity_ms": (deadline - began) * 1000, "nodes": nodes}
        if extended + len(errors) >= self.quorum:
            return {"result": "unknown", "error": "%d nodes extended; %s" % (extended, "; ".join(errors)), "nodes": nodes}
        return {"result": "not_held", "error": "%d of %d nodes held the token" % (extended, len(self.nodes)), "nodes": nodes}


def main():
    proto = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol

    def send(reply):
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    hello = json.loads(sys.stdin.readline())
    if hello.get("sentinels") or hello.get("fencing"):
        send({"id": hello["id"], "result": "error",
              "error": "redlock-py needs independent masters and issues no fencing tokens"})
        return
    wall = "--wall" in sys.argv[1:]
    lock = RedLock(hello, wall=wall)
    name = "RedLock (Python, from the Redis description)"
    if wall:
        name += ", elapsed counted on the wall clock (time.time) as redlock-py does"
    send({"id": hello["id"], "result": "ok", "name": name,
          "language": "Python " + sys.version.split()[0],
          "versions": {"redis-py": redis.__version__}, "fencing": False, "reports_nodes": True})

    for line in iter(sys.stdin.readline, ""):
        began = time.monotonic()
        req = json.loads(line)
        op = req["op"]
        if op == "acquire":
            # Leave the last round its per-node timeouts within the wait.
            wait_until = began + req["timeout_ms"] / 1000 - len(lock.nodes) * hello["node_timeout_ms"] / 1000
            reply = lock.acquire(req["key"], began, wait_until)
        elif op == "release":
            reply = lock.release(req["key"], req["token"])
        elif op == "extend":
            reply = lock.extend(req["key"], req["token"], began)
        elif op == "ping":
            reply = {"result": "ok"}
        else:
            reply = {"result": "unknown", "error": "unknown op %r" % op}
        reply["id"] = req["id"]
        send(reply)


if __name__ == "__main__":
    main()
