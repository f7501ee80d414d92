// Command gate is the release gate of a lock written outside
// locktorture: it registers the lock with the promises it makes and runs
// `torture gate` on it.
//
//	go run . --lock mylock            # every cell its promises give it, seeds 1–3, within 5 minutes
//	go run . --lock mylock --list     # the cells and their expectations
//
// Exit status 0: every cell matches; 1: the lock broke a promise it
// declared (the summary names it); 2: an error; 3: inconclusive.
// redis-server must be on the PATH.
//
// go.mod requires the published module; copied out of the locktorture
// repository before that version is published, one line points it at a
// checkout (docs/gate.md):
//
//	go mod edit -replace github.com/locktorture/locktorture=/path/to/a/checkout
package main

import (
	"fmt"
	"os"

	"github.com/locktorture/locktorture/gate"
)

func main() {
	if err := Register("mylock", CompareAndDelete); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(gate.ExitError)
	}
	os.Exit(gate.Main(os.Args[1:]))
}
