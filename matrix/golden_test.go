package matrix

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/cells.golden from the cells")

// goldenLine is a cell as the golden list pins it: its name, what it runs
// and what it expects (not its Source and Why, which are prose).
func goldenLine(sp Spec) string {
	// The workload of #13, only where a cell sets it, so that the
	// other lines keep their form.
	var more string
	if sp.Extend {
		more += fmt.Sprintf(" extend=true every=%s", sp.ExtendEvery)
	}
	if sp.Store != "" {
		more += " store=" + sp.Store
	}
	if sp.Liveness != "" {
		more += " liveness=" + string(sp.Liveness)
	}
	return fmt.Sprintf("%s lock=%s expect=%s nodes=%d nemesis=%s fencing=%v topology=%q restart=%q clients=%d keys=%d ttl=%s hold=%s interval=%s min=%s quick=%v",
		sp.Name, sp.Lock, sp.Expect, sp.Nodes, strings.Join(sp.Nemesis, ","), sp.Fencing, sp.Topology, sp.Restart, sp.Clients, sp.Keys, sp.TTL, sp.Hold, sp.Interval, sp.MinDuration, sp.Quick) + more
}

// TestCellsGolden: the matrix's cells, their order, workloads and
// expectations are those of testdata/cells.golden. The rows derived from
// the literature table (Literature) must come out as the hand-written
// rows they replaced; a change to a cell is a change to this file, made
// on purpose with -update.
func TestCellsGolden(t *testing.T) {
	var b strings.Builder
	for _, sp := range Cells(false) {
		b.WriteString(goldenLine(sp) + "\n")
	}
	path := filepath.Join("testdata", "cells.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			g := ""
			if i < len(got) {
				g = got[i]
			}
			t.Fatalf("cell %d differs from %s (go test -run TestCellsGolden -update rewrites it):\n got %s\nwant %s", i+1, path, g, w)
		}
	}
	if len(got) != len(strings.Split(string(want), "\n")) {
		t.Fatalf("%d cells, %s has %d", len(got)-1, path, len(strings.Split(string(want), "\n"))-1)
	}
}
