package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/report"
)

// hostileSummaries are the shapes a summary.json from elsewhere may take
// that a reader must answer with an error line or a result: null,
// missing, negative, NaN, nested, huge counts, and a valid one.
func hostileSummaries(tb testing.TB) []string {
	tb.Helper()
	m := report.Matrix{Started: time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC), Seeds: []int64{1, 2}, Duration: "8s", Cells: []report.Cell{
		{Name: "setnx/none", Lock: "setnx", Matches: true, Runs: []report.CellRun{
			{Seed: 1, RunID: "r1", Dir: "runs/r1", Lease: checker.Valid, Resource: checker.Valid},
			{Seed: 2, RunID: "r2", Dir: "runs/r2", Lease: checker.Invalid, Resource: checker.Valid, Violations: 1},
		}},
	}}
	rate := report.NewRate(1, 2)
	m.Cells[0].Rate = &rate
	dir := tb.TempDir()
	if err := report.WriteMatrix(dir, m); err != nil {
		tb.Fatal(err)
	}
	valid, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return []string{
		string(valid),
		"", "null", "[]", "{}", "0", `"x"`, "{", `{"cells": null}`, `{"cells": [null]}`, `{"cells": [{"runs": null}]}`,
		`{"cells": [{"name": "a", "runs": [null, {}]}]}`,
		`{"cells": [{"name": "a", "runs": [{"dir": "runs/r1"}, {"dir": "runs/r1"}]}]}`,
		`{"cells": [{"name": "a", "runs": [{"dir": "../../etc"}]}]}`,
		`{"cells": [{"name": "a", "runs": [{"dir": "/etc"}]}]}`,
		`{"seeds": [NaN]}`, `{"seeds": [-1, 1e300]}`, `{"seeds": [[1]]}`, `{"seeds": {"a": 1}}`,
		`{"cells": [{"name": "a", "rate": {"violations": -1, "runs": 10}}]}`,
		`{"cells": [{"name": "a", "rate": {"violations": 4611686018427387904, "runs": 10}}]}`,
		`{"cells": [{"name": "a", "rate": {"violations": 1, "runs": 10, "rate": 1e308}}]}`,
		`{"cells": [{"name": "a", "runs_with_violation": -5, "trials": 9223372036854775807}]}`,
		`{"shard": {"index": 1, "count": 4611686018427387904}}`,
		`{"shard": {"index": -1, "count": -1, "runs": [[1]]}}`,
		`{"started": "not a time", "elapsed": -1e308}`,
		`{"cells": [{"name": "<script>alert(1)</script>", "lock": "\u0000\u001b[31m"}]}`,
		strings.Repeat(`{"cells": [`, 200) + strings.Repeat(`]}`, 200),
	}
}

// memoryBound fails the test when f allocated more than limit bytes: a
// number read from a summary never sizes an allocation.
func memoryBound(t *testing.T, limit uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Fatalf("allocated %d MB (more than %d MB)", got>>20, limit>>20)
	}
}

// oneLine fails the test when err is not one short line.
func oneLine(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 4000 {
		t.Fatalf("an error of %d bytes or several lines: %.300q", len(msg), msg)
	}
}

// FuzzTrend: matrix trend over a good bundle and one whose summary.json
// is anything: a trend, or one error line; never a panic, and memory
// bounded whatever counts the summary claims.
func FuzzTrend(f *testing.F) {
	for _, s := range hostileSummaries(f) {
		f.Add([]byte(s))
	}
	good := f.TempDir()
	m := report.Matrix{Started: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC), Seeds: []int64{1}}
	r := report.NewRate(1, 10)
	m.Cells = []report.Cell{{Name: "setnx/none", Runs: make([]report.CellRun, 10), Rate: &r}}
	if err := report.WriteMatrix(good, m); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, summary []byte) {
		bad := t.TempDir()
		if err := os.WriteFile(filepath.Join(bad, "summary.json"), summary, 0o600); err != nil {
			t.Fatal(err)
		}
		memoryBound(t, 64<<20+uint64(100*len(summary)), func() {
			tr, err := report.ReadTrend([]string{good, bad})
			if err != nil {
				oneLine(t, err)
				return
			}
			tr.Regressions()
			if err := report.WriteTrend(t.TempDir(), tr); err != nil {
				oneLine(t, err)
			}
		})
	})
}

// FuzzPublish: matrix publish of a matrix folder whose summary.json is
// anything, beside two runs: a bundle, or one error line that leaves no
// bundle; never a panic, memory bounded, and a run folder packed at most
// once however many runs name it.
func FuzzPublish(f *testing.F) {
	// Every publish that gets as far as packing costs the xz writer's
	// 64 MiB dictionary (about 330 MB allocated, a fraction of a second):
	// the corpus run in go test takes the shapes that reach it or
	// publish's own checks, and the fuzzer the rest.
	all := hostileSummaries(f)
	for _, i := range []int{0, 1, 2, 4, 10, 11, 12, 13, 14, 26} {
		f.Add([]byte(all[i]))
	}
	// The matrix folder is made once (publish only reads it); each input
	// replaces its summary.json.
	src := f.TempDir()
	for _, run := range []string{"r1", "r2"} {
		dir := filepath.Join(src, "runs", run)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			f.Fatal(err)
		}
		if err := report.WriteResults(dir, report.Results{RunID: run}); err != nil {
			f.Fatal(err)
		}
	}
	for _, name := range []string{"summary.md", "junit.xml", "index.html"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("x"), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, summary []byte) {
		if err := os.WriteFile(filepath.Join(src, "summary.json"), summary, 0o600); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "bundle")
		memoryBound(t, 512<<20+uint64(100*len(summary)), func() {
			if _, err := report.Publish(src, dst, report.PublishOptions{AllHistories: true}); err != nil {
				oneLine(t, err)
				if _, serr := os.Stat(dst); serr == nil {
					t.Fatalf("refused (%v), yet %s was made", err, dst)
				}
			}
		})
	})
}

// TestPublishOneFolderManyRuns: 200 runs that name one run folder (a
// hostile bundle's summary) are refused in one line before anything is
// packed, rather than packing the folder 200 times.
func TestPublishOneFolderManyRuns(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "runs", "r"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteResults(filepath.Join(src, "runs", "r"), report.Results{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	c := report.Cell{Name: "setnx/none", Lock: "setnx"}
	for i := range 200 {
		c.Runs = append(c.Runs, report.CellRun{Seed: int64(i + 1), RunID: fmt.Sprintf("r%d", i), Dir: "runs/r"})
	}
	if err := report.WriteMatrix(src, report.Matrix{Seeds: []int64{1}, Cells: []report.Cell{c}}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "bundle")
	_, err := report.Publish(src, dst, report.PublishOptions{})
	if err == nil || !strings.Contains(err.Error(), "a run folder belongs to one run") {
		t.Fatalf("publish: %v; want a refusal naming the shared run folder", err)
	}
	oneLine(t, err)
	if _, serr := os.Stat(dst); serr == nil {
		t.Fatalf("refused, yet %s was made", dst)
	}
}
