package matrix

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/locks"
	_ "github.com/locktorture/locktorture/locks/etcdlock" // etcd-mutex's cells, as the torture binary has them
	"github.com/locktorture/locktorture/report"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/cells.golden from the cells")

// TestCellsAreRows: for every registered lock that is not a mutant, its
// cells in the matrix are exactly the rows of the table its promises
// select, in the table's order: no cell is written by hand, none is left
// out.
func TestCellsAreRows(t *testing.T) {
	byLock := map[string][]string{}
	for _, sp := range Cells(false) {
		byLock[sp.Lock()] = append(byLock[sp.Lock()], sp.Name)
	}
	for _, name := range locks.Names() {
		spec, err := locks.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Mutant {
			continue
		}
		p, err := locks.DeclaredPromises(spec)
		if err != nil {
			t.Fatal(err)
		}
		traits := spec.Traits(p)
		var want []string
		for _, r := range Literature {
			if locks.Match(traits, r.When) {
				c := name + "/" + r.Name
				if strings.HasPrefix(r.Name, "+") {
					c = name + r.Name
				}
				want = append(want, c)
			}
		}
		if got := byLock[name]; !slices.Equal(got, want) {
			t.Errorf("%s: cells %v\nrows its promises (%s) select: %v", name, got, strings.Join(traits, " "), want)
		}
	}
}

// TestMutantBugsAreRows: every bug of every mutant names a row its
// claimed promises select, and its cell expects the bug's property
// violated; a mutant has a cell for each bug and no other.
func TestMutantBugsAreRows(t *testing.T) {
	cells := Cells(false)
	for _, name := range locks.Names() {
		spec, _ := locks.Lookup(name)
		if !spec.Mutant {
			continue
		}
		if len(spec.Bugs) == 0 {
			t.Errorf("mutant %s declares no bug", name)
		}
		var mine []Spec
		for _, sp := range cells {
			if sp.Lock() == name {
				mine = append(mine, sp)
			}
		}
		if len(mine) != len(spec.Bugs) {
			t.Errorf("mutant %s: %d cells for %d bugs (a bug whose row its promises do not select?)", name, len(mine), len(spec.Bugs))
		}
		for _, sp := range mine {
			i := slices.IndexFunc(spec.Bugs, func(b locks.Bug) bool { return b.Row == sp.Row })
			if i < 0 {
				t.Errorf("%s: no bug for its row", sp.Name)
				continue
			}
			switch b := spec.Bugs[i]; b.Property {
			case report.PropertyLease, report.PropertyResource:
				if sp.Expect.Of(b.Property) != report.ExpectViolation {
					t.Errorf("%s: expects %s, want its %s violated", sp.Name, sp.Expect, b.Property)
				}
			case "liveness":
				if sp.Expect.Liveness != checker.LivenessStuck {
					t.Errorf("%s: expects %s, want liveness stuck", sp.Name, sp.Expect)
				}
			default:
				t.Errorf("%s: bug of unknown property %q", sp.Name, b.Property)
			}
			for _, also := range spec.Bugs[i].Also {
				if also != "answers" || sp.Expect.Answers != report.ExpectViolation {
					t.Errorf("%s: expects %s, want its %s violated too", sp.Name, sp.Expect, also)
				}
			}
		}
	}
}

// TestNoLockNamedInTable: the table and the scenarios select locks by the
// traits of their promises, never by name, so a user's lock gets the rows
// of its class.
func TestNoLockNamedInTable(t *testing.T) {
	names := locks.Names()
	for _, r := range Literature {
		for _, n := range names {
			for _, s := range []string{r.When, r.Quick} {
				if slices.Contains(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '|' || r == '!' }), n) {
					t.Errorf("row %s selects lock %s by name", r.Name, n)
				}
			}
		}
	}
	for _, sc := range Scenarios() {
		for _, row := range sc.Rows {
			if !slices.Contains(Rows(), row) {
				t.Errorf("scenario %q: no row %s", sc.Name, row)
			}
		}
	}
}

// TestUserQuorumLock: a lock from outside, declaring quorum promises,
// gets the rows of its class: the contested clock case, its control and
// the crashed holder among them; where it promises the lease it
// promises truthful answers, where a fault breaks it nothing. (Derive, not the registry: a lock
// registered here would join every later test's matrix.)
func TestUserQuorumLock(t *testing.T) {
	base, _ := locks.Lookup("redsync")
	spec := locks.Spec{Name: "user-quorum", MultiNode: true, Promises: &locks.Promises{Quorum: 5, ElapsedFromRequest: true}, New: base.New}
	got := map[string]report.Expect{}
	for _, sp := range Derive(spec, *spec.Promises) {
		got[sp.Row] = sp.Expect
		if sp.Lock() != "user-quorum" || sp.Config.Nodes != 5 && sp.Config.Nodes != 3 {
			t.Errorf("%s: lock %s, %d nodes", sp.Name, sp.Lock(), sp.Config.Nodes)
		}
	}
	truthful := func(e report.Expect) report.Expect { e.Answers = report.ExpectSafe; return e }
	for row, want := range map[string]report.Expect{
		"clock-partition": {Lease: report.ExpectViolation, Resource: report.ExpectPossible},
		"clock-minority":  truthful(report.ExpectAll(report.ExpectSafe)),
		"client-crash":    truthful(report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Liveness: checker.LivenessOK}),
		"client-pause":    truthful(report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}),
		"pause":           truthful(report.ExpectAll(report.ExpectSafe)),
	} {
		if e, ok := got[row]; !ok || e != want {
			t.Errorf("row %s: %v (present %v), want %v", row, e, ok, want)
		}
	}
}

// TestStops: a cell expecting a violation ends at the first violation
// of a property it expects safe, or once every property it expects
// violated showed one where it expects none safe; a cell expecting
// safety runs to its end.
func TestStops(t *testing.T) {
	for _, tc := range []struct {
		e          report.Expect
		anyOf, all []string
	}{
		{report.ExpectAll(report.ExpectSafe), nil, nil},
		{report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}, []string{"lease"}, nil},
		{report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}, nil, []string{"lease"}},
		{report.ExpectAll(report.ExpectViolation), nil, []string{"lease", "resource"}},
		{report.ExpectAll(report.ExpectPossible), nil, nil},
	} {
		anyOf, all := (Spec{Expect: tc.e}).stops()
		if !slices.Equal(anyOf, tc.anyOf) || !slices.Equal(all, tc.all) {
			t.Errorf("%s: stop on any of %v, all of %v; want %v, %v", tc.e, anyOf, all, tc.anyOf, tc.all)
		}
	}
}

// TestCellsGolden: the matrix's cells, their order, workloads and
// expectations are those of testdata/cells.golden; a change to a cell
// is a change to this file, made on purpose with -update.
func TestCellsGolden(t *testing.T) {
	var b strings.Builder
	for _, sp := range Cells(false) {
		c := sp.RunConfig(1, max(DefaultDuration, sp.MinDuration))
		plan, err := harness.NewPlan(c)
		if err != nil {
			t.Fatal(err)
		}
		r := plan.Config()
		fmt.Fprintf(&b, "%s expect=%q band=%s quick=%v nodes=%d topology=%s clients=%d keys=%d ttl=%s hold=%s nemesis=%s interval=%s restart=%s duration=%s args=%q\n",
			sp.Name, sp.Expect.String(), sp.Band.String(), sp.Quick, r.Nodes, r.Topology, r.Clients, r.Keys, r.TTL, r.Hold, strings.Join(r.Nemesis, ","), r.NemesisInterval, r.Restart, r.Duration,
			strings.Join(harness.Args(c), " "))
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
	wl := strings.Split(string(want), "\n")
	for i, w := range wl {
		if i >= len(got) || got[i] != w {
			g := ""
			if i < len(got) {
				g = got[i]
			}
			t.Fatalf("cell %d differs from %s (go test -run TestCellsGolden -update rewrites it):\n got %s\nwant %s", i+1, path, g, w)
		}
	}
	if len(got) != len(wl) {
		t.Fatalf("%d cells, %s has %d", len(got)-1, path, len(wl)-1)
	}
}

// TestEveryLockDeclares: every registered lock declares promises that
// check against the names the table knows, so none drops out of the
// matrix unseen.
func TestEveryLockDeclares(t *testing.T) {
	for _, name := range locks.Names() {
		spec, err := locks.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := locks.DeclaredPromises(spec, locks.WithKnownNames(KnownNames())); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
