package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"k0", "k0"},
		{"9f1c…", "9f1c…"},
		{"setnx: acquire \"k0\": locks: not acquired", "setnx: acquire \"k0\": locks: not acquired"},
		{"clé à 10 €", "clé à 10 €"},
		{"", ""},
		{"k\x1b[2J", `"k\x1b[2J"`},
		{"a\rb", `"a\rb"`},
		{"tab\there", `"tab\there"`},
		{"new\nline", `"new\nline"`},
		{"bidi\u202eevil", `"bidi\u202eevil"`},
		{"c1\u009bx", `"c1\u009bx"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"del\x7f", `"del\x7f"`},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestSummaryEscapes: the summary of a history whose keys, tokens, error
// texts and fault values carry escape sequences, carriage returns and
// bidirectional overrides prints none of them raw.
func TestSummaryEscapes(t *testing.T) {
	events, err := history.ReadFile("testdata/hostile.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	a, err := checker.Analyze(events, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Result
	if len(res.LeaseViolations) == 0 || len(res.ResourceFailedKeys) == 0 {
		t.Fatalf("the hostile history should violate both: %s/%s", res.Lease, res.Resource)
	}
	fs, _ := explain.Findings(&a)
	var b bytes.Buffer
	Summary(&b, "hostile \x1b]0;title\x07", res, fs)
	Summary(&b, "hostile, no findings", res, nil)
	out := b.String()
	if r, ok := testutil.RawControl(out); ok {
		t.Errorf("summary prints %U raw:\n%s", r, out)
	}
	for _, want := range []string{`\x1b[2J`, `\x1b]0;evil title\a`, "lease safety:    invalid"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestWrittenFilesPrivate: results.json, report.html and the matrix
// summaries are written with mode 0600.
func TestWrittenFilesPrivate(t *testing.T) {
	dir := t.TempDir()
	events, err := history.ReadFile("testdata/hostile.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := checker.Check(events, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := Results{RunID: "x", Lease: res.Lease, Resource: res.Resource, Check: res}
	if err := WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(filepath.Join(dir, "report.html"), r, analyzed(t, events), checker.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(dir, Matrix{Cells: []Cell{{Name: "c", Outcome: checker.OutcomeSafe, Expect: ExpectSafe, Matches: true}}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "report.html", "summary.md", "summary.json", "junit.xml", "index.html"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", f, fi, err)
		}
	}
}

// analyzed is the analysis of events, failing the test on an error.
func analyzed(tb testing.TB, events []history.Event) *checker.Analysis {
	tb.Helper()
	a, err := checker.Analyze(events, checker.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return &a
}
