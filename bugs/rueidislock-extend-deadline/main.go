package main

import (
	"context"
	"fmt"
	"os"

	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/locks"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "client" && os.Args[2] == "--lock" {
		if err := locks.Serve(context.Background(), os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(gate.Main(os.Args[1:]))
}
