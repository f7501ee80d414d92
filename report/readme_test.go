package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadme: results/README.md is made from the bundle's summary — the
// commit, every scenario's cells with their rates and what would
// contradict them, a reading that says which cells contradict their
// expectation (and never "as the literature expects" then), the cells no
// run measured, and the other published folders.
func TestReadme(t *testing.T) {
	m := sampleMatrix()
	m.Commit, m.Dirty = "abc1234", true
	m.Scenarios = []Scenario{
		{Name: "Races", Source: "S1", Claim: "a race breaks GET then SET", Cells: []string{"setnx-get-set/none", "setnx/none"}},
		{Name: "Partitions", Source: "S2", Claim: "majorities intersect", Cells: []string{"redlock/partition", "redsync/partition"}},
		{Name: "Clients' clocks", Source: "S3", Claim: "monotonic clocks", Missing: "no client-clock fault"},
	}
	r := Readme{Matrix: m, Bundle: "2026-11-30", Size: 2_500_000, Others: []Published{{Dir: "2026-12-01-envelope", Page: "README.md"}}}
	got := string(r.Markdown())
	if os.Getenv("SHOW") != "" {
		t.Log(got)
	}
	for _, want := range []string{
		"commit `abc1234` **with uncommitted changes**",
		"[summary.md](2026-11-30/summary.md)",
		"2.5 MB",
		"### 1. Races",
		"| setnx-get-set/none | lease violation, resource possible | 2/2 = 1.00 [0.34, 1.00] | 1/2 = 0.50 [0.09, 0.91] | ≥ 0.9 |",
		"*Reading:* the cell expected to fail showed a violation in 2 of 2 decided runs (rate 1.00); the cell expected safe showed none in 2 decided runs: as the literature expects.",
		"**Contradicts the literature's expectation:** redlock/partition (1/2 = 0.50",
		"(not run: redsync/partition)",
		"*Reading:* no cell measures this scenario.",
		"*Not measured:* no client-clock fault",
		"[`2026-12-01-envelope/`](2026-12-01-envelope/README.md)",
		"would contradict",
		// The table at a glance: one row a scenario, its cells, the
		// violations of those expected to fail and of those expected safe.
		"## The literature's 3 scenarios at a glance",
		"| 1 | Races | setnx-get-set/none, setnx/none | 2 / 2 runs (1 cell) | 0 / 2 runs (1 cell) | the cell expected to fail showed",
		"| 3 | Clients' clocks |  | – | – | no cell measures this scenario. |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Partitions") && strings.Contains(strings.SplitN(got, "### 2. Partitions", 2)[1][:600], "as the literature expects") {
		t.Error("a scenario with a contradicting cell reads as the literature expects")
	}
}

// TestPublishedBeside lists the published folders with a page to open,
// not the bundle itself, the matrix's working folders or plain files.
func TestPublishedBeside(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/README.md", "b/summary.md", "bundle/summary.md", "matrix/x/summary.md", "c/other.txt", "README.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PublishedBeside(dir, "bundle")
	if err != nil {
		t.Fatal(err)
	}
	want := []Published{{"a", "README.md"}, {"b", "summary.md"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
}
