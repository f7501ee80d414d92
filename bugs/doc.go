// Package bugs holds the lock bugs that really shipped, each reproduced
// by a folder of its own. A Go library's is a module: its go.mod pins the
// version of the library that had the bug, its go.fixed.mod the version
// that fixed it (go build -modfile=go.fixed.mod), and its command is
// either the release gate built against that version (gate.Main) or a
// client process of the line protocol (--lock exec:COMMAND), on
// bugs/lineproto, a module of its own that imports the standard library
// only (as the Python clients build on lineproto.py). A library
// whose registry this project's machines do not reach is kept as source:
// third_party/ (its license beside it) at the tag that had the bug, fix.patch the upstream fix, VERSIONS
// the git blob id of every file at both tags, and client.py the client
// process (a Python one, on lineproto.py, started by python.sh on the
// interpreter that has redis-py). docs/bugs.md lists them with the row
// that catches each, the command and the measured outcome on both
// versions; `make bugs` builds them into bin/bugs/.
//
// The package itself has only tests, which build and vet every module
// against both of its versions and check every folder kept as source
// against its two tags; they import none of this module's packages (each
// bug module imports what it runs: gate and locks, or nothing of
// locktorture).
package bugs
