#!/usr/bin/env python3
"""A lying client for the conformance tests: the example client, except that
every other acquire answers ok with a fresh token and a full validity without
asking Redis. A harness run with it must be found lease-invalid."""

import json
import os
import secrets
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "example"))
import example_client  # noqa: E402

real_readline = sys.stdin.readline
ttl_ms = None
count = 0
lies = []


def readline():
    """Read requests as the example does, but answer every other acquire
    here, never reaching Redis."""
    global ttl_ms, count
    while True:
        line = real_readline()
        if not line:
            return line
        req = json.loads(line)
        if req.get("op") == "hello":
            ttl_ms = req["ttl_ms"]
            return line
        if req.get("op") == "acquire":
            count += 1
            if count % 2 == 0:
                reply = {"id": req["id"], "result": "ok", "token": secrets.token_hex(16), "validity_ms": ttl_ms * 0.99 - 2}
                lies.append(reply["token"])
                sys.__stdout__.write(json.dumps(reply) + "\n")
                sys.__stdout__.flush()
                continue
        if req.get("op") == "release" and req.get("token") in lies:
            lies.remove(req["token"])
            sys.__stdout__.write(json.dumps({"id": req["id"], "result": "ok"}) + "\n")
            sys.__stdout__.flush()
            continue
        return line


class Stdin:
    readline = staticmethod(readline)


sys.stdin = Stdin()
example_client.main()
