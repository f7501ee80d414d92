#!/usr/bin/env python3
"""A misbehaving client for the tests of what the harness accepts from a
client process: the example client, changed by the mode in its first
argument.

    versions         the hello's versions claim the harness's own keys
                     ("go", go-redis's module path)
    absurd-validity  every other acquire that succeeds claims a validity
                     of -1e300 ms or 1e300 ms, in turn
    long-reply       the reply to the first acquire is 2 MiB long
    typo-promises    the hello's promises misspell a fault
                     ("client-pase")
    fork FILE        before it serves, fork three processes that sleep for
                     an hour: one stays in the client's process group, one
                     calls setsid (and keeps the protocol's pipes open), one
                     is a daemon (its parent calls setsid, forks it and
                     exits); append "client group setsid daemon" pids to
                     FILE, one line
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "example"))
import example_client  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else ""


acquired = [0]


def change(reply, req):
    """Return the reply the mode makes of the example's reply to req."""
    op = req.get("op")
    if op == "hello" and mode == "versions":
        reply["versions"] = {"go": "go0.0.1-client", "github.com/redis/go-redis/v9": "v0.0.1-client"}
    if op == "hello" and mode == "typo-promises":
        reply["promises"]["safe_under"] = ["client-pase"]
    if op == "acquire" and reply.get("result") == "ok":
        acquired[0] += 1
        if mode == "absurd-validity" and acquired[0] % 2 == 0:
            reply["validity_ms"] = -1e300 if acquired[0] % 4 == 2 else 1e300
    if op == "acquire" and mode == "long-reply" and acquired[0] <= 1:
        reply["error"] = "x" * (2 << 20)
    return reply


class Requests:
    """stdin for the example, remembering each request for change."""

    def __init__(self, f):
        self.f, self.last = f, {}

    def readline(self):
        line = self.f.readline()
        if line:
            self.last = json.loads(line)
        return line


class Replies:
    """stdout for the example, changing each reply line by the mode."""

    def __init__(self, f, requests):
        self.f, self.requests = f, requests

    def write(self, s):
        if s.endswith("\n") and s.startswith("{"):
            s = json.dumps(change(json.loads(s), self.requests.last)) + "\n"
        return self.f.write(s)

    def flush(self):
        self.f.flush()


def sleep_forked(setsid):
    """Fork a process that sleeps for an hour, in a session of its own if
    setsid, and return its pid."""
    pid = os.fork()
    if pid == 0:
        if setsid:
            os.setsid()
        time.sleep(3600)
        os._exit(0)
    return pid


def daemon():
    """Fork a process that calls setsid, forks a sleeper and exits at
    once, leaving the sleeper an orphan; return the sleeper's pid."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        sleeper = os.fork()
        if sleeper == 0:
            time.sleep(3600)
            os._exit(0)
        os.write(w, str(sleeper).encode())
        os._exit(0)
    os.close(w)
    sleeper = int(os.read(r, 32))
    os.close(r)
    os.waitpid(pid, 0)
    return sleeper


if mode == "fork":
    pids = [os.getpid(), sleep_forked(False), sleep_forked(True), daemon()]
    with open(sys.argv[2], "a") as f:
        f.write(" ".join(map(str, pids)) + "\n")

sys.stdin = Requests(sys.stdin)
sys.stdout = Replies(sys.stdout, sys.stdin)
example_client.main()
