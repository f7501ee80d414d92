#!/usr/bin/env python3
"""A flaky client for the conformance tests: the example client, except that
a process exits (status 1) at its 5th acquire, and one whose number in the
run (the hello's "client") is odd hangs for ever at its 3rd. A harness run
with it must record unknown outcomes and go on, never crash, and check
valid."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "example"))
import example_client  # noqa: E402

real_readline = sys.stdin.readline
state = {"client": 0, "acquires": 0}


def readline():
    line = real_readline()
    if line:
        req = json.loads(line)
        if req.get("op") == "hello":
            state["client"] = req.get("client", 0)
        elif req.get("op") == "acquire":
            state["acquires"] += 1
            if state["acquires"] == 5:
                print("flaky client: exiting at acquire 5", file=sys.stderr)
                os._exit(1)
            if state["acquires"] == 3 and state["client"] % 2 == 1:
                print("flaky client: hanging at acquire 3", file=sys.stderr)
                while True:
                    time.sleep(3600)
    return line


class Stdin:
    readline = staticmethod(readline)


sys.stdin = Stdin()
example_client.main()
