package main

import (
	"os"

	"github.com/locktorture/locktorture/gate"
)

// main is the release gate on the library version go.mod pins; gate.Main
// also answers `client --lock NAME`, the client processes of the gate's
// client-stop cells.
func main() { os.Exit(gate.Main(os.Args[1:])) }
