package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
)

func ptr(f float64) *float64 { return &f }

// sampleMatrix has one cell of each colour, two cells in one grid
// position (setnx × kill) and texts that need escaping.
func sampleMatrix() Matrix {
	valid, invalid, unknown := checker.Valid, checker.Invalid, checker.Unknown
	run := func(seed int64, dir string, lease, resource checker.Verdict) CellRun {
		return CellRun{Seed: seed, RunID: filepath.Base(dir), Dir: dir, Lease: lease, Resource: resource, AcqPerSec: 100, P99Acquire: 3, Availability: -1}
	}
	return Matrix{
		Started:  time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Command:  "torture matrix --seeds 1,2 --duration 8s",
		Seeds:    []int64{1, 2},
		Duration: "8s",
		Servers:  []string{"redis 7.0.15"},
		Versions: map[string]string{"go": "go1.26.8", "github.com/anishathalye/porcupine": "v1.3.1"},
		Elapsed:  123.4,
		Cells: []Cell{
			{
				Name: "setnx/none", Lock: "setnx", Language: "Go", Nemesis: "none", Topology: "masters", Expect: ExpectSafe, Props: ExpectAll(ExpectSafe), Class: "any",
				LeaseRate: ptrRate(0, 2), ResourceRate: ptrRate(0, 2), Source: `Redis docs, "Distributed Locks"`,
				Runs:    []CellRun{run(1, "runs/setnx_none-seed1", valid, valid), run(2, "runs/setnx_none-seed2", valid, valid)},
				Outcome: checker.OutcomeSafe, Matches: true, AcqPerSec: 812.34, P99Acquire: 4.25, Availability: -1,
			},
			{
				Name: "setnx-get-set/none", Lock: "setnx-get-set", Nemesis: "none", Expect: ExpectViolation, Props: Expect{Lease: ExpectViolation, Resource: ExpectPossible}, Class: "any",
				LeaseRate: ptrRate(2, 2), ResourceRate: ptrRate(1, 2), Source: "deliberate bug (locks/mutants.go)",
				Runs:              []CellRun{run(1, "runs/setnx-get-set_none-seed1", invalid, invalid), run(2, "runs/setnx-get-set_none-seed2", invalid, valid)},
				RunsWithViolation: 2, Violations: 240, MedianFirstViolation: ptr(1.5), Outcome: checker.OutcomeViolation, Matches: true, AcqPerSec: 179.6, P99Acquire: 92.9, Availability: -1,
			},
			{
				Name: "redlock/partition", Lock: "redlock", Nemesis: "partition", Expect: ExpectSafe, Props: ExpectAll(ExpectSafe), Class: "quorum",
				LeaseRate: ptrRate(1, 2), ResourceRate: ptrRate(0, 2), Source: `Redis docs, "Distributed Locks"; antirez <script>alert(1)</script> & co ]]>`,
				Runs:              []CellRun{run(1, "runs/redlock_partition-seed1", invalid, valid), run(2, "runs/redlock_partition-seed2", valid, valid)},
				RunsWithViolation: 1, Violations: 3, MedianFirstViolation: ptr(4.25), Outcome: checker.OutcomeViolation, Matches: false, AcqPerSec: 79.7, P99Acquire: 334.8, Availability: 0.654,
			},
			{
				Name: "setnx/kill-immediate", Lock: "setnx", Nemesis: "kill", Expect: ExpectPossible, Props: ExpectAll(ExpectPossible), Class: "single",
				LeaseRate: ptrRate(0, 0), ResourceRate: ptrRate(0, 1), Source: `M. Kleppmann, "How to do distributed locking", 2016`,
				Runs:    []CellRun{run(1, "runs/setnx_kill-immediate-seed1", unknown, valid)},
				Unknown: 1, Outcome: checker.OutcomeUnknown, Matches: false, AcqPerSec: 50, P99Acquire: 10, Availability: 0.25,
			},
			{
				Name: "setnx/kill-delayed", Lock: "setnx", Nemesis: "kill", Expect: ExpectSafe, Props: ExpectAll(ExpectSafe), Class: "single persist:delayed-restart",
				LeaseRate: ptrRate(0, 1), ResourceRate: ptrRate(0, 1), Source: `Redis docs, "Distributed Locks"`,
				Runs:    []CellRun{run(1, "runs/setnx_kill-delayed-seed1", valid, valid)},
				Outcome: checker.OutcomeSafe, Matches: true, AcqPerSec: 60, P99Acquire: 11, Availability: 0.5,
			},
		},
	}
}

func writeSample(tb testing.TB) (string, Matrix) {
	tb.Helper()
	dir := tb.TempDir()
	m := sampleMatrix()
	// Two runs of redlock/partition have a results.json, for the JUnit time.
	for i, el := range []float64{10.25, 10.5} {
		d := filepath.Join(dir, m.Cells[2].Runs[i].Dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := WriteResults(d, Results{RunID: "x", Elapsed: el}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := WriteMatrix(dir, m); err != nil {
		tb.Fatalf("WriteMatrix: %v", err)
	}
	return dir, m
}

func readFile(tb testing.TB, dir, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func wantContains(tb testing.TB, name, doc string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(doc, w) {
			tb.Errorf("%s lacks %q", name, w)
		}
	}
}

func TestWriteMatrixJUnit(t *testing.T) {
	dir, m := writeSample(t)
	doc := readFile(t, dir, "junit.xml")
	if !strings.HasPrefix(doc, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration: %.80s", doc)
	}
	// Decode with independent types, as a CI system would.
	var got struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Time     string `xml:"time,attr"`
			Props    []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Classname string `xml:"classname,attr"`
				Name      string `xml:"name,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut *string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.Strict = true
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("junit.xml does not decode: %v\n%s", err, doc)
	}
	if got.Tests != 5 || got.Failures != 2 || len(got.Suites) != 1 {
		t.Fatalf("testsuites tests=%d failures=%d suites=%d, want 5, 2, 1", got.Tests, got.Failures, len(got.Suites))
	}
	s := got.Suites[0]
	if s.Name != "locktorture.matrix" || s.Tests != 5 || s.Failures != 2 || s.Errors != 0 || s.Time != "123.400" {
		t.Errorf("testsuite %s tests=%d failures=%d errors=%d time=%s", s.Name, s.Tests, s.Failures, s.Errors, s.Time)
	}
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	if props["command"] != m.Command || props["seeds"] != "1, 2" || props["version go"] != "go1.26.8" {
		t.Errorf("properties %v", props)
	}
	if len(s.Cases) != len(m.Cells) {
		t.Fatalf("%d testcases, want %d", len(s.Cases), len(m.Cells))
	}
	for i, tc := range s.Cases {
		c := m.Cells[i]
		if want := c.Lock + "/" + strings.ReplaceAll(c.Class, " ", ","); tc.Classname != want || tc.Name != c.Name {
			t.Errorf("testcase %d: classname %q name %q", i, tc.Classname, tc.Name)
		}
		if (tc.Failure != nil) != !c.Matches {
			t.Errorf("%s: failure %v, matches %v", c.Name, tc.Failure != nil, c.Matches)
		}
		details := ""
		switch {
		case tc.Failure != nil && tc.SystemOut == nil:
			details = tc.Failure.Text
		case tc.Failure == nil && tc.SystemOut != nil:
			details = *tc.SystemOut
		default:
			t.Errorf("%s: want the details in the failure or else in system-out, not both", c.Name)
		}
		if !strings.Contains(details, c.Runs[0].Dir+" (lease ") || !strings.Contains(details, "\nexpected "+c.Props.String()) {
			t.Errorf("%s: details lack the expectation or the run dir: %q", c.Name, details)
		}
	}
	if s.Cases[2].Time != "20.750" {
		t.Errorf("time of redlock/partition = %s, want the runs' 10.25 + 10.5", s.Cases[2].Time)
	}
	if s.Cases[0].Time != "0.000" {
		t.Errorf("time of a cell without results.json = %s, want 0.000", s.Cases[0].Time)
	}
	f := s.Cases[2].Failure
	if f.Type != "mismatch" {
		t.Errorf("failure type %q", f.Type)
	}
	wantContains(t, "failure message", f.Message, "lease broken in 1/2 runs (promised safe), resource kept in 2/2 runs (promised safe); a violation where the literature expects none",
		"runs/redlock_partition-seed1, runs/redlock_partition-seed2")
	wantContains(t, "failure text", f.Text, "seed 1: runs/redlock_partition-seed1 (lease invalid, resource valid, 0 violations)",
		"antirez <script>alert(1)</script> & co ]]>")
	if f := s.Cases[3].Failure; f.Type != "unknown" || !strings.Contains(f.Message, "never a pass") {
		t.Errorf("unknown cell's failure: %+v", f)
	}
}

func TestWriteMatrixMarkdown(t *testing.T) {
	dir, _ := writeSample(t)
	md := readFile(t, dir, "summary.md")
	wantContains(t, "summary.md", md,
		"- command: `torture matrix --seeds 1,2 --duration 8s`",
		"- seeds: 1, 2",
		"- server: redis 7.0.15",
		"github.com/anishathalye/porcupine v1.3.1, go go1.26.8",
		"**5 cells: 3 match their expectation, 2 do not.**",
		"| cell | lock | language | faults | fencing | expected | what the runs showed | trials | median s to first violation | acq/s | p99 ms | availability during faults | matches |",
		"| setnx/none | setnx | Go | none | no | safe | lease held in 2/2 runs (promised safe), resource kept in 2/2 runs (promised safe) | no trial | – | 812.3 | 4.2 | n/a | ✓ |",
		"| setnx-get-set/none | setnx-get-set |  | none | no | lease violation, resource possible | lease broken in 2/2 runs (expected), resource lost in 1/2 runs (possible) | no trial | 1.50 | 179.6 | 92.9 | n/a | ✓ |",
		"| redlock/partition | redlock |  | partition | no | safe | lease broken in 1/2 runs (promised safe), resource kept in 2/2 runs (promised safe) | no trial | 4.25 | 79.7 | 334.8 | 65.4% | ✗ |",
		"| setnx/kill-immediate | setnx |  | kill | no | possible | lease undecided (possible), resource kept in 1/1 runs (possible) | no trial | – | 50.0 | 10.0 | 25.0% | ✗ |",
		"## Mismatches",
		"- **redlock/partition**: lease broken in 1/2 runs (promised safe), resource kept in 2/2 runs (promised safe); a violation where the literature expects none",
		"  - [seed 1](runs/redlock_partition-seed1/report.html): runs/redlock_partition-seed1 (lease invalid",
		"- **setnx/kill-immediate**: lease undecided (possible), resource kept in 1/1 runs (possible); 1 of 1 runs decided nothing",
		"## Sources",
		`1. Redis docs, "Distributed Locks" — cited by setnx/none, redlock/partition, setnx/kill-delayed`,
		"2. deliberate bug (locks/mutants.go) — cited by setnx-get-set/none",
		"3. antirez &lt;script&gt;alert(1)&lt;/script&gt; & co ]]&gt; — cited by redlock/partition",
	)
	if strings.Contains(md, "- **setnx/none**") {
		t.Error("a matching cell is listed as a mismatch")
	}
}

func TestWriteMatrixJSON(t *testing.T) {
	dir, m := writeSample(t)
	var got Matrix
	if err := json.Unmarshal([]byte(readFile(t, dir, "summary.json")), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("summary.json round trip:\ngot  %+v\nwant %+v", got, m)
	}
}

func TestWriteMatrixHTML(t *testing.T) {
	dir, _ := writeSample(t)
	page := readFile(t, dir, "index.html")
	wantContains(t, "index.html", page,
		"<!DOCTYPE html>", "</html>",
		"2026-11-30 08:00:00 UTC",
		"<code>torture matrix --seeds 1,2 --duration 8s</code>",
		"<td>1, 2</td>",
		"go go1.26.8",
		`href="runs/redlock_partition-seed1/report.html"`,
		`href="runs/setnx_none-seed2/report.html"`,
		`<tr id="cell-0" class="match-safe">`,
		`<tr id="cell-1" class="match-violation">`,
		`<tr id="cell-2" class="mismatch">`,
		`<tr id="cell-3" class="unknown">`,
		`seed 1: violation</a>`,
		`<td class="num">65.4%</td>`,
		`<td class="num">1.50</td>`,
		"antirez &lt;script&gt;alert(1)&lt;/script&gt; &amp; co ]]&gt;",
		// setnx × kill holds two cells, told apart by their names.
		`<span class="small">kill-immediate</span>`,
		`<span class="small">kill-delayed</span>`,
		"<b>5 cells: 3 match their expectation, 2 do not (1 undecided).</b>",
	)
	if strings.Contains(page, "<script>") {
		t.Error("unescaped source text")
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("index.html refers to an external resource")
	}
	for _, tag := range []string{"table", "tr", "td", "th", "ul", "ol", "li", "a", "p", "b", "span", "h2"} {
		if o, c := strings.Count(page, "<"+tag+">")+strings.Count(page, "<"+tag+" "), strings.Count(page, "</"+tag+">"); o != c {
			t.Errorf("<%s>: %d opened, %d closed", tag, o, c)
		}
	}
}

func TestWriteMatrixEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := WriteMatrix(dir, Matrix{}); err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Tests int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal([]byte(readFile(t, dir, "junit.xml")), &ju); err != nil || ju.Tests != 0 {
		t.Errorf("junit.xml of an empty matrix: tests=%d err=%v", ju.Tests, err)
	}
	wantContains(t, "summary.md", readFile(t, dir, "summary.md"), "**0 cells", "None: every cell matches", "None cited.")
}

func TestWriteMatrixNoDir(t *testing.T) {
	err := WriteMatrix(filepath.Join(t.TempDir(), "missing"), sampleMatrix())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	for _, name := range []string{"summary.md", "summary.json", "junit.xml", "index.html"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// TestWriteMatrixShard: the summaries give the commit and, for a shard,
// which part of the matrix they hold; ReadMatrix reads back what was
// written.
func TestWriteMatrixShard(t *testing.T) {
	dir := t.TempDir()
	m := sampleMatrix()
	m.Commit, m.Dirty = "0123abcd", true
	m.Shard = &ShardInfo{Index: 2, Count: 4, Cells: []ShardCell{{"setnx/none", ExpectAll(ExpectSafe)}, {"setnx-get-set/none", ExpectAll(ExpectViolation)}},
		Runs: []ShardRun{{"setnx/none", 2}}, Expected: 9}
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	const shard = "shard 2/4: 1 of the 4 runs (2 cells × seeds 1, 2); each cell counts this shard's runs only"
	wantContains(t, "summary.md", readFile(t, dir, "summary.md"), "- commit: 0123abcd (with uncommitted changes)\n", "- "+shard)
	wantContains(t, "index.html", readFile(t, dir, "index.html"), "<tr><th>commit</th><td><code>0123abcd (with uncommitted changes)</code></td></tr>",
		"<tr><th>shard</th><td>"+shard[:strings.Index(shard, "'")])
	wantContains(t, "junit.xml", readFile(t, dir, "junit.xml"), `<property name="commit" value="0123abcd (with uncommitted changes)">`,
		`<property name="shard" value="`+shard[:strings.Index(shard, "'")])
	got, err := ReadMatrix(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("ReadMatrix:\ngot  %+v\nwant %+v", got, m)
	}
	if _, err := ReadMatrix(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadMatrix of an empty folder: %v", err)
	}
	// A whole matrix says nothing of shards.
	m.Shard = nil
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.md", "index.html", "junit.xml", "summary.json"} {
		if strings.Contains(readFile(t, dir, name), "shard") {
			t.Errorf("%s of a whole matrix speaks of shards", name)
		}
	}
}

// TestWriteMatrixKinds: index.html tells a cell whose runs broke the
// lease (two clients held the lock at once) from a resource-only one (an
// update lost while no two leases overlapped), in the grid and in the
// cells' table, and shows each cell's why and source.
func TestWriteMatrixKinds(t *testing.T) {
	run := func(seed int64, lease, resource checker.Verdict) CellRun {
		return CellRun{Seed: seed, Dir: "runs/x", Lease: lease, Resource: resource, Availability: -1}
	}
	m := Matrix{Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Seeds: []int64{1, 2}, Cells: []Cell{
		{Name: "redlock/clock", Lock: "redlock", Nemesis: "clock", Expect: ExpectViolation, Source: "Kleppmann 2016", Why: "a wall-clock jump expires keys early",
			Runs: []CellRun{run(1, checker.Invalid, checker.Invalid), run(2, checker.Valid, checker.Invalid)}, RunsWithViolation: 2, Outcome: checker.OutcomeViolation, Matches: true},
		{Name: "setnx/client-pause", Lock: "setnx", Nemesis: "client-pause", Expect: ExpectViolation, Source: "Kleppmann 2016", Why: "a holder paused past its TTL writes after another client",
			Runs: []CellRun{run(1, checker.Valid, checker.Invalid), run(2, checker.Valid, checker.Valid)}, RunsWithViolation: 1, Outcome: checker.OutcomeViolation, Matches: true},
		{Name: "setnx/none", Lock: "setnx", Nemesis: "none", Expect: ExpectSafe, Source: "Redis docs", Why: "no faults",
			Runs: []CellRun{run(1, checker.Valid, checker.Valid)}, Outcome: checker.OutcomeSafe, Matches: true},
	}}
	if got := []string{m.Cells[0].ViolationKind(), m.Cells[1].ViolationKind(), m.Cells[2].ViolationKind()}; !reflect.DeepEqual(got, []string{"lease", "resource only", ""}) {
		t.Errorf("ViolationKind: %q", got)
	}
	dir := t.TempDir()
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, dir, "index.html")
	wantContains(t, "index.html", page,
		`<td class="why">a wall-clock jump expires keys early <span class="small">(Kleppmann 2016)</span></td><td>violation<br><span class="kind-lease">lease</span></td>`,
		`<td class="why">a holder paused past its TTL writes after another client <span class="small">(Kleppmann 2016)</span></td><td>violation<br><span class="kind-resource">resource only</span></td>`,
		`<td class="why">no faults <span class="small">(Redis docs)</span></td><td>safe</td>`,
		`✓<br><span class="kind-resource">resource only</span></a>`,
	)
}

func ptrRate(k, n int) *Rate { r := NewRate(k, n); return &r }

// TestJUnitGate: a release gate's cases are classed by its lock, and the
// fault kinds it did not run are skipped cases with the reason.
func TestJUnitGate(t *testing.T) {
	m := sampleMatrix()
	m.Gate = "setnx"
	m.Skipped = []Skipped{{Kinds: "partition, clock-partition", Why: "no row of the literature table for a lock with these promises"}}
	b, err := matrixJUnit(m, make([]float64, len(m.Cells)))
	if err != nil {
		t.Fatal(err)
	}
	x := string(b)
	for _, want := range []string{`classname="setnx-get-set" name="setnx-get-set/none"`, `name="not run: partition, clock-partition"`,
		`<skipped message="no row of the literature table for a lock with these promises"></skipped>`, `skipped="1"`} {
		if !strings.Contains(x, want) {
			t.Errorf("junit.xml lacks %s:\n%s", want, x)
		}
	}
}
