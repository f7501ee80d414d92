// Package bugs holds the lock bugs that really shipped, each reproduced
// by a module of its own under this folder: its go.mod pins the version
// of the library that had the bug, its go.fixed.mod the version that
// fixed it (go build -modfile=go.fixed.mod), and its command is either
// the release gate built against that version (gate.Main) or a client
// process of the line protocol (--lock exec:COMMAND). docs/bugs.md lists
// them with the row that catches each, the command and the measured
// outcome on both versions; `make bugs` builds them into bin/bugs/.
//
// The package itself has only a test, which builds and vets every module
// against both of its versions; it imports none of this module's
// packages (each bug module imports what it runs: gate and locks, or
// nothing of locktorture).
package bugs
