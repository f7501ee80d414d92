#!/usr/bin/env python3
"""A minimal locktorture client: the single-instance Redis lock, standard
library only, speaking the line protocol of locks/clients/PROTOCOL.md.

    bin/torture run --lock exec:'python3 locks/clients/example/example_client.py' --seed 1

acquire: SET key token NX PX ttl, one attempt; release and extend: Lua
compare-and-delete / compare-and-pexpire. Validity: ttl - drift counted
from just before the SET was sent, drift = ttl * 1% + 2 ms (the margin
locktorture's own setnx keeps). Copy it and put your own lock in place of
the three Redis calls.
"""

import json
import secrets
import socket
import sys

RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
EXTEND = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"


class RedisError(Exception):
    """An error reply from Redis (-ERR ...)."""


class Redis:
    """Just enough of a Redis client: one connection, RESP2."""

    def __init__(self, addr, password, timeout):
        host, port = addr.rsplit(":", 1)
        self.where, self.password, self.timeout = (host, int(port)), password, timeout
        self.sock = None

    def call(self, *args):
        """Send one command and return its reply. A socket error closes the
        connection (the next call reconnects) and propagates: the outcome
        of the command is then unknown."""
        try:
            if self.sock is None:
                self.sock = socket.create_connection(self.where, timeout=self.timeout)
                self.file = self.sock.makefile("rb")
                if self.password:
                    self._send("AUTH", self.password)
                    self._read()
            self._send(*args)
            return self._read()
        except OSError:
            self.close()
            raise

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))

    def _read(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError("bad reply %r" % line)


def main():
    proto = sys.stdout
    sys.stdout = sys.stderr  # the protocol owns stdout

    def send(reply):
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    hello = json.loads(sys.stdin.readline())
    if hello.get("fencing") or hello.get("sentinels"):
        send({"id": hello["id"], "result": "error", "error": "the example talks to one node and issues no fencing tokens"})
        return
    node = Redis(hello["addrs"][0], hello.get("password"), hello["node_timeout_ms"] / 1000)
    ttl_ms = int(hello["ttl_ms"])
    drift_ms = ttl_ms * 0.01 + 2
    send({"id": hello["id"], "result": "ok", "name": "example (SET NX PX, standard library)",
          "language": "Python " + sys.version.split()[0],
          # What this lock promises, for `torture gate` (PROTOCOL.md, Hello).
          "promises": {"elapsed_from_request": True, "extends": True}})

    for line in iter(sys.stdin.readline, ""):
        req = json.loads(line)
        op = req["op"]
        # validity_ms counts from now, just before the first request to
        # Redis: the key cannot have been set earlier, so it cannot expire
        # earlier (up to the drift).
        try:
            if op == "acquire":
                token = secrets.token_hex(16)
                if node.call("SET", req["key"], token, "NX", "PX", ttl_ms) == "OK":
                    reply = {"result": "ok", "token": token, "validity_ms": ttl_ms - drift_ms}
                else:
                    reply = {"result": "not_acquired", "error": "held by another client"}
            elif op == "release":
                done = node.call("EVAL", RELEASE, 1, req["key"], req["token"])
                reply = {"result": "ok"} if done == 1 else {"result": "not_held"}
            elif op == "extend":
                done = node.call("EVAL", EXTEND, 1, req["key"], req["token"], ttl_ms)
                reply = {"result": "ok", "validity_ms": ttl_ms - drift_ms} if done == 1 else {"result": "not_held"}
            elif op == "ping":
                reply = {"result": "ok"}
            else:
                reply = {"result": "unknown", "error": "unknown op %r" % op}
        except (OSError, RedisError) as e:  # a timeout, a lost connection, an error reply
            reply = {"result": "unknown", "error": "%s: %s" % (type(e).__name__, e)}
        reply["id"] = req["id"]
        send(reply)


if __name__ == "__main__":
    main()
