package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
)

// TestReportExplains: report.html says in words which property
// broke — a lease violation, or a resource-only one — with its colour
// class, the cause of each fault step's violations, and the overlapping
// leases as a table in seconds with short tokens and the granting nodes; a valid run has
// none of it.
func TestReportExplains(t *testing.T) {
	for _, tc := range []struct {
		file      string
		want, not []string
	}{
		{"lease-invalid_resource-invalid_cause-clock-jump.jsonl",
			[]string{`class="kind-lease"`, "Lease violation: two clients held the lock at once, and an update was lost.", "Why: one finding per fault step and cause",
				"lease violation on k1: clock jump", "<td>P0 aaaaaa…</td><td>n1 n2</td><td>P1 bbbbbb…</td><td>n2 n3</td><td>#1 clock jump &#43;2s on n2</td>",
				`<td class="num">1</td><td class="num">1.200 s</td><td class="num">1.310 s</td>`, "Lost updates"},
			[]string{`class="kind-resource"`}},
		{"lease-valid_resource-invalid_cause-stalled.jsonl",
			[]string{`class="kind-resource"`, "Resource-only violation: no two leases overlapped", "holder stalled past its validity", `class="late-write"`, "a late write"},
			[]string{"Overlapping leases", `class="kind-lease"`}},
		{"lease-valid_resource-unknown_serial.jsonl", nil,
			[]string{"Why: one finding", "Overlapping leases", `class="kind-lease"`, `class="kind-resource"`, `class="late-write"`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			events, err := history.ReadFile(filepath.Join("..", "checker", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			a := analyzed(t, events)
			r := Results{RunID: "x", Lease: a.Result.Lease, Resource: a.Result.Resource, Check: a.Result}
			path := filepath.Join(t.TempDir(), "report.html")
			if err := WriteHTML(path, r, a, checker.Options{}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					_, rest, _ := strings.Cut(page, "<h2>Overlapping leases")
					t.Errorf("report.html lacks %q:\n%.1500s", w, rest)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(page, w) {
					t.Errorf("report.html has %q", w)
				}
			}
		})
	}
}
