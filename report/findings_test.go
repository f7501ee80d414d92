package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// TestFindings: one line per row, in the table's order; a lock under
// lease when two leases overlapped, under resource when only updates were
// lost, else under no violation, each with the runs that decided the
// property; undecided runs counted as such; a contradicted cell marked;
// mutants in a line of their own.
func TestFindings(t *testing.T) {
	m := sampleMatrix()
	m.Cells = append(m.Cells, Cell{
		Name: "setnx/client-pause", Lock: "setnx", Matches: true,
		Runs: []CellRun{{Lease: checker.Valid, Resource: checker.Invalid}, {Lease: checker.Valid, Resource: checker.Invalid}, {Lease: checker.Unknown, Resource: checker.Unknown}},
	}, Cell{
		Name: "setnx+fencing/none", Lock: "setnx", Matches: true,
		Runs: []CellRun{{Lease: checker.Valid, Resource: checker.Unknown}},
	}, Cell{
		Name: "setnx-no-ttl/client-crash", Lock: "setnx-no-ttl", Matches: true,
		Runs: []CellRun{{Lease: checker.Valid, Resource: checker.Valid, Liveness: checker.LivenessStuck}},
	})
	got := string(Findings(m, FindingsOptions{
		Bundle: "results/2026-11-30/",
		Rows:   []string{"none", "partition", "client-pause", "kill-immediate"},
		Mutant: func(lock string) bool { return strings.HasPrefix(lock, "setnx-") },
	}))
	if os.Getenv("SHOW") != "" {
		t.Log("\n" + got)
	}
	want := []string{
		"<!-- begin findings: rendered by report.Findings from results/2026-11-30/summary.json; do not edit by hand -->",
		"From [`results/2026-11-30/`](results/2026-11-30/) (2026-11-30; 8 cells; seeds 1, 2; 8s a run).",
		"| `partition` | redlock 1/2 ✗ | – | – |",
		"| `client-pause` | – | setnx 2/2 | – |",
		"| `kill-immediate` | – | – | setnx 0/1, lease undecided ✗ |",
		"| `+fencing/none` | – | – | setnx 0/1, resource untested |",
		"No lock showed a violation, on any run, in the other 2 rows of the table: `none`, `kill-delayed`.",
		"Mutants, locks broken on purpose to show the checkers see what they claim: setnx-get-set/none (lease 2/2), setnx-no-ttl/client-crash (stuck 1/1).",
		"✗: the cell contradicts",
		"<!-- end findings -->\n",
	}
	last := -1
	for _, quiet := range []string{"| `none` |", "| `kill-delayed` |"} {
		if strings.Contains(got, quiet) {
			t.Errorf("findings draw %s, a row in which no lock broke anything:\n%s", quiet, got)
		}
	}
	for _, w := range want {
		i := strings.Index(got, w)
		if i < 0 {
			t.Errorf("findings lack %q:\n%s", w, got)
			continue
		}
		if i < last {
			t.Errorf("findings have %q out of order:\n%s", w, got)
		}
		last = i
	}
}

// TestFindingsHostile: names from a summary cannot close the marker
// comment, break a table row or inject HTML.
func TestFindingsHostile(t *testing.T) {
	m := Matrix{Cells: []Cell{{Name: "x-->|<b>/none", Lock: "x-->|<b>", Runs: []CellRun{{Lease: checker.Invalid, Resource: checker.Valid}}, Matches: true}}}
	got := string(Findings(m, FindingsOptions{Bundle: "b"}))
	if strings.Count(got, "-->") != 2 || strings.Contains(got, "<b>") || strings.Count(got, "\n| ") != 2 {
		t.Errorf("a hostile name leaks into the block:\n%s", got)
	}
	if _, err := Block([]byte(got), FindingsBlock); err != nil {
		t.Errorf("the block does not parse back: %v", err)
	}
}

// TestReplaceBlock replaces what lies between the markers, markers
// included, and refuses a page without them or with two beginnings.
func TestReplaceBlock(t *testing.T) {
	page := "# T\n\nbefore\n<!-- begin findings: old -->\nold table\n<!-- end findings -->\nafter\n"
	block := "<!-- begin findings: new -->\nnew table\n<!-- end findings -->\n"
	got, err := ReplaceBlock([]byte(page), []byte(block), "findings")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\nbefore\n" + block + "after\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	b, err := Block(got, "findings")
	if err != nil || string(b) != block {
		t.Errorf("Block = %q, %v; want %q", b, err, block)
	}
	for _, bad := range []string{
		"no markers\n",
		"<!-- begin findings -->\nno end\n",
		"<!-- begin findingsX -->\n<!-- end findings -->\n",
		"<!-- begin findings -->\n<!-- begin findings -->\n<!-- end findings -->\n",
	} {
		if _, err := ReplaceBlock([]byte(bad), []byte(block), "findings"); !errors.Is(err, ErrNoBlock) {
			t.Errorf("ReplaceBlock(%q): %v, want ErrNoBlock", bad, err)
		}
	}
}

// TestNewestBundle picks the published whole matrix that started last,
// not a shard, not a folder that was not published (a matrix's or a
// merge's output), not one by its name.
func TestNewestBundle(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, started time.Time, shard bool, index bool) {
		t.Helper()
		d := filepath.Join(dir, name)
		m := Matrix{Started: started}
		if shard {
			m.Shard = &ShardInfo{Index: 1, Count: 2}
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "summary.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if index {
			for _, f := range []string{"index.html", ManifestFile} {
				if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	day := func(d int) time.Time { return time.Date(2026, 12, d, 0, 0, 0, 0, time.UTC) }
	write("2026-12-01", day(1), false, true)
	write("2026-12-01-languages", day(2), false, false) // no index.html nor manifest: not a published bundle
	write("2026-11-30-late", day(3), false, true)       // started last, whatever its name
	write("2026-12-09", day(9), true, true)             // a shard
	got, err := NewestBundle(dir)
	if err != nil || got != "2026-11-30-late" {
		t.Errorf("NewestBundle = %q, %v; want 2026-11-30-late", got, err)
	}
	if _, err := NewestBundle(t.TempDir()); err == nil {
		t.Error("NewestBundle of an empty folder: no error")
	}
}
