#!/usr/bin/env python3
"""A misbehaving client for the tests of what the harness accepts from a
client process: the example client, changed by the mode in its first
argument.

    versions   the hello's versions claim the harness's own keys ("go",
               go-redis's module path)
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "example"))
import example_client  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else ""


def change(reply, req):
    """Return the reply the mode makes of the example's reply to req."""
    if req.get("op") == "hello" and mode == "versions":
        reply["versions"] = {"go": "go0.0.1-client", "github.com/redis/go-redis/v9": "v0.0.1-client"}
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


sys.stdin = Requests(sys.stdin)
sys.stdout = Replies(sys.stdout, sys.stdin)
example_client.main()
