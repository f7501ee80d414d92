// Command redsync-extend-cleanup is the release gate (gate.Main) built
// against the redsync version its go.mod pins (go.fixed.mod: the version
// that fixed the bug), so that `--lock redsync` runs that version:
// redsync v4.12.0's Extend deleted the lock's keys on every node when one
// node's extend failed, and still reported the extend a success when a
// quorum had extended first (go-redsync/redsync pull request 151 removed
// the clean-up; v4.12.1). docs/bugs.md has the command and the figures.
//
// `client --lock NAME` serves the registered lock NAME on stdin and
// stdout (clients/PROTOCOL.md), for the cells that run it in client
// processes of its own.
package main
