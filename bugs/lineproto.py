"""The line protocol of locks/clients/PROTOCOL.md for the bugs' Python
clients: the library under test is loaded from the folder given on the
command line, its version told by the git blob id of one of its files
(the folder's VERSIONS beside the client), and requests are answered one
at a time until stdin ends.
"""

import hashlib
import json
import os
import sys


def blob_id(path):
    """The git blob id of the file at path (git hash-object)."""
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def library(client):
    """The library folder from the command line, put first on sys.path."""
    if len(sys.argv) != 2:
        sys.stderr.write("usage: %s LIBDIR (the folder holding the library)\n" % os.path.basename(client))
        sys.exit(2)
    lib = os.path.abspath(sys.argv[1])
    sys.path.insert(0, lib)
    return lib


def version_of(client, lib, file):
    """The tag of VERSIONS (beside client) whose blob of file is lib's."""
    blob = blob_id(os.path.join(lib, file))
    with open(os.path.join(os.path.dirname(os.path.abspath(client)), "VERSIONS")) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 4 and fields[2] == file and fields[3] == blob:
                return fields[0]
    return "unknown (%s blob %s)" % (file, blob)


def refusal(req, name):
    """The error reply to a hello this bug's client cannot serve (the
    failover topology's sentinels, fencing tokens), or None."""
    if req.get("sentinels"):
        return {"result": "error", "error": "%s talks to the nodes it is given, not through sentinels" % name}
    if req.get("fencing"):
        return {"result": "error", "error": "%s issues no fencing tokens" % name}
    return None


def serve(hello, ops, unknown):
    """Answer the hello with hello(request) -> (reply, stop), then every
    request with ops[op](request) -> reply; an exception of a class in
    unknown (a timeout, a lost connection) answers unknown."""
    proto = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol

    def send(reply):
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    req = json.loads(sys.stdin.readline())
    reply, stop = hello(req)
    reply["id"] = req["id"]
    send(reply)
    if stop:
        return
    ops = dict(ops, ping=lambda req: {"result": "ok"})
    for line in iter(sys.stdin.readline, ""):
        req = json.loads(line)
        op = ops.get(req["op"])
        try:
            reply = op(req) if op else {"result": "unknown", "error": "unknown op %r" % req["op"]}
        except unknown as e:
            reply = {"result": "unknown", "error": "%s: %s" % (type(e).__name__, e)}
        reply["id"] = req["id"]
        send(reply)
