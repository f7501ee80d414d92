// Command rueidislock-extend-deadline is the release gate (gate.Main)
// built against the rueidis version its go.mod pins (go.fixed.mod: the
// version that fixed the bug), so that `--lock rueidislock` runs that
// version's rueidislock; `client --lock rueidislock` serves it on stdin
// and stdout (clients/PROTOCOL.md), so that `torture run --lock exec:…`
// can run it with flags and a replayed schedule of its own.
//
// rueidislock up to v1.0.69 pushed each key's expiry on by one extend
// interval from the previous deadline instead of one validity from now
// (redis/rueidis pull request 924, v1.0.70): every round trip of an
// extend is taken off the key for good. docs/bugs.md lists it under the
// bugs found and not yet caught, with the command and what it measured.
package main
