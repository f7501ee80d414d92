package matrix

import (
	"slices"
	"testing"

	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// TestCellsForIsTheMatrix: the release gate of every lock the matrix
// tortures (but the mutants) runs exactly that lock's matrix cells, with
// the same workload and expectation: one table, not two. A mutant's gate
// expects what it claims, so its bug fails it; its matrix cells expect
// the bug.
func TestCellsForIsTheMatrix(t *testing.T) {
	byLock := map[string][]string{}
	for _, sp := range Cells(false) {
		if s, _ := locks.Lookup(sp.Lock); s.Mutant {
			continue
		}
		sp.Quick = false
		byLock[sp.Lock] = append(byLock[sp.Lock], goldenLine(sp))
	}
	for lock, want := range byLock {
		specs, _, err := CellsFor(lock)
		if err != nil {
			t.Fatalf("%s: %v", lock, err)
		}
		var got []string
		for _, sp := range specs {
			got = append(got, goldenLine(sp))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the gate's cells\n%q\ndiffer from the matrix's\n%q", lock, got, want)
		}
	}
}

// TestDerive: a lock's class selects the table's rows; what a lock
// claims beyond its class is expected safe, with the claim as the promise.
func TestDerive(t *testing.T) {
	names := func(specs []Spec) []string {
		var n []string
		for _, sp := range specs {
			n = append(n, sp.Name)
		}
		return n
	}
	single := Derive("mine", locks.Promises{ElapsedFromRequest: true})
	if want := []string{"mine/none", "mine/latency", "mine/delay-grant", "mine/kill-immediate", "mine/client-pause", "mine/clock"}; !slices.Equal(names(single), want) {
		t.Fatalf("a single-instance lock's cells %v, want %v", names(single), want)
	}
	quorum := Derive("q", locks.Promises{Quorum: 7, ElapsedFromRequest: true, Persistence: locks.PersistDelayedRestart})
	for _, sp := range quorum {
		if sp.Name == "q/kill-immediate" && sp.Nodes != 3 || sp.Name != "q/kill-immediate" && sp.Nodes != 7 {
			t.Errorf("%s runs on %d nodes", sp.Name, sp.Nodes)
		}
	}
	if !slices.Contains(names(quorum), "q/partition") || !slices.Contains(names(quorum), "q/kill-delayed,pause") {
		t.Errorf("a quorum lock with delayed restarts lacks a cell: %v", names(quorum))
	}
	// #14: a quorum lock that reports its per-node grants is aimed at
	// (kill-quorum: violation expected); one that does not keeps the
	// random kill, possible.
	aimed := Derive("r", locks.Promises{Quorum: 5, ElapsedFromRequest: true, ReportsNodes: true})
	if n := names(aimed); !slices.Contains(n, "r/kill-quorum") || slices.Contains(n, "r/kill-immediate") {
		t.Errorf("a reporting quorum lock's cells %v: want r/kill-quorum, not r/kill-immediate", n)
	}
	for _, sp := range aimed {
		if sp.Name == "r/kill-quorum" && (sp.Expect != report.ExpectViolation || sp.Nodes != 3) {
			t.Errorf("r/kill-quorum: %+v", sp)
		}
	}
	if n := names(quorum); slices.Contains(n, "q/kill-quorum") || !slices.Contains(n, "q/kill-immediate") {
		t.Errorf("a quorum lock that reports no grants: cells %v, want q/kill-immediate and no q/kill-quorum", n)
	}
	liar := Derive("liar", locks.Promises{ElapsedFromRequest: true, SafeUnder: []string{"client-pause"}})
	for _, sp := range liar {
		if sp.Name != "liar/client-pause" {
			continue
		}
		if sp.Expect != report.ExpectSafe || sp.Promise != "safe under client-pause (declared)" || sp.Source != SrcDeclared {
			t.Fatalf("a declared claim: %+v", sp)
		}
		return
	}
	t.Fatalf("no client-pause cell: %v", names(liar))
}

// TestLiteratureRows: every row has an expectation with its source and
// reason, every expected-safe row names the promise it rests on, and no
// lock the matrix knows gets one cell name twice.
func TestLiteratureRows(t *testing.T) {
	for i, r := range Literature {
		if r.Name == "" || r.Lock != "" || r.Expect == "" || r.Source == "" || r.Why == "" {
			t.Errorf("row %d (%s, %q) lacks a name, expectation, source or reason, or names a lock", i, r.Name, r.When)
		}
		if r.Expect == report.ExpectSafe && r.Promise == "" {
			t.Errorf("row %d (%s, %q) expects safe but names no promise", i, r.Name, r.When)
		}
	}
	for _, s := range locks.Specs() {
		if s.Promises == nil {
			continue
		}
		seen := map[string]bool{}
		for _, sp := range Derive(s.Name, *s.Promises) {
			if seen[sp.Name] {
				t.Errorf("%s: two rows give cell %s", s.Name, sp.Name)
			}
			seen[sp.Name] = true
		}
	}
}

// TestDeriveVariant: a row for a workload variant ("+extend/…") names its
// cells lock+extend/fault, after "+fencing" when it fences; a claim
// names the fault alone.
func TestDeriveVariant(t *testing.T) {
	saved := Literature
	t.Cleanup(func() { Literature = saved })
	Literature = []Row{
		{When: "extends", Spec: Spec{Name: "+extend/client-pause", Extend: true, Expect: report.ExpectViolation, Source: SrcKleppmann, Why: "w"}},
		{When: "extends fence-sound", Spec: Spec{Name: "+extend/client-pause", Fencing: true, Extend: true, Expect: report.ExpectSafe, Source: SrcKleppmann, Why: "w", Promise: "p"}},
	}
	got := Derive("mine", locks.Promises{Extends: true, Fences: true, FenceSound: true, SafeUnder: []string{"client-pause"}})
	if len(got) != 2 || got[0].Name != "mine+extend/client-pause" || got[1].Name != "mine+fencing+extend/client-pause" || !got[0].Extend {
		t.Fatalf("cells %+v", got)
	}
	if got[0].Expect != report.ExpectSafe || got[0].Promise != "safe under client-pause (declared)" {
		t.Fatalf("the claim on the fault: %+v", got[0])
	}
}
