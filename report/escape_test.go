package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/report"
)

// TestHostileNamesEscaped: a cell or lock name read from elsewhere (a
// shard's or a bundle's summary.json) that holds markup reaches
// summary.md, trend.md and junit.xml as text, never as a tag a Markdown
// viewer or a JUnit page would run; the HTML pages escaped it already.
func TestHostileNamesEscaped(t *testing.T) {
	const hostile = "setnx/<script>alert(1)</script>"
	r := report.NewRate(1, 2)
	m := report.Matrix{Started: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC), Seeds: []int64{1, 2}, Duration: "8s",
		Cells: []report.Cell{{Name: hostile, Lock: "<b>lock</b>", Nemesis: "none", Expect: report.ExpectSafe, Rate: &r,
			Runs: []report.CellRun{{Seed: 1, RunID: "<i>run</i>", Dir: "runs/x", Lease: "invalid", Resource: "valid", Error: "<script>x</script>"}, {Seed: 2, Lease: "valid", Resource: "valid"}}}}}
	dir := t.TempDir()
	if err := report.WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.md", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range []string{"<script>", "<b>", "<i>"} {
			if strings.Contains(string(b), tag) {
				t.Errorf("%s holds %s raw:\n%s", name, tag, b)
			}
		}
	}
	m2 := m
	m2.Started = m.Started.Add(24 * time.Hour)
	md := string(report.NewTrend([]string{"<script>a", "b"}, []report.Matrix{m, m2}).Markdown())
	if strings.Contains(md, "<script>") {
		t.Errorf("trend.md holds <script> raw:\n%s", md)
	}
}
