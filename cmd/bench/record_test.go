package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/matrix"
)

// fakePart is a part that measures nothing: its start-up figures are
// the times given.
func fakePart(name string, times ...time.Duration) part {
	return part{name: name, title: "Fake " + name, flags: []string{"startup-rounds"},
		run: func(_ context.Context, _ *benchEnv, r *results) error {
			r.Startup = startupResult{Nodes: 5, Times: times}
			return nil
		},
		render: func(r *results, p func(string, ...any)) {
			p("%s measured %v\n", "fake", r.Startup.Times)
		},
		figures: func(r *results) any { return r.Startup },
	}
}

func fakeSection(t *testing.T, pt part, commit string) section {
	t.Helper()
	e := &benchEnv{o: options{budget: time.Minute, flags: []string{"-startup-rounds=1", "-seeds=4"}}, logf: t.Logf}
	s, err := runPart(context.Background(), e, pt, commit)
	if err != nil {
		t.Fatal(err)
	}
	s.Number = int(pt.name[0]-'a') + 1 // not a part of parts: numbered here
	return s
}

// TestRerunKeepsOthers: a run of one part rewrites its section in the
// JSON record and the markdown, and keeps every other section as it was.
func TestRerunKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	md, js := filepath.Join(dir, "B.md"), filepath.Join(dir, "B.json")
	order := []string{"a", "b", "c"}
	m := machineInfo{CPU: "test CPU", NumCPU: 2, GOMAXPROCS: 2, Go: "go1", Redis: "redis 7"}
	first := []section{fakeSection(t, fakePart("a", time.Second), "aaa"), fakeSection(t, fakePart("b", 2*time.Second), "aaa"), fakeSection(t, fakePart("c", 3*time.Second), "aaa")}
	if _, err := writeRecord(md, js, m, first, order); err != nil {
		t.Fatal(err)
	}
	before, err := readRecord(js)
	if err != nil {
		t.Fatal(err)
	}
	again := fakeSection(t, fakePart("b", 7*time.Second), "bbb")
	r, err := writeRecord(md, js, m, []section{again}, order)
	if err != nil {
		t.Fatal(err)
	}
	after, err := readRecord(js)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustEncode(t, after), mustEncode(t, r); a != b {
		t.Fatalf("the record read back differs from the one written:\n%s\n%s", a, b)
	}
	if len(after.Sections) != 3 {
		t.Fatalf("%d sections, want 3", len(after.Sections))
	}
	for i, name := range order {
		s := after.Sections[i]
		if s.Part != name {
			t.Fatalf("section %d is %q, want %q", i, s.Part, name)
		}
		if name == "b" {
			if s.Commit != "bbb" || !strings.Contains(s.Markdown, "[7s]") {
				t.Errorf("b not rewritten: %+v", s)
			}
			var st startupResult
			if err := json.Unmarshal(s.Figures, &st); err != nil || !reflect.DeepEqual(st.Times, []time.Duration{7 * time.Second}) {
				t.Errorf("b's figures %s (%v)", s.Figures, err)
			}
			continue
		}
		if !reflect.DeepEqual(s, before.Sections[i]) {
			t.Errorf("section %s changed:\n%+v\n%+v", name, s, before.Sections[i])
		}
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if text != after.markdown() {
		t.Errorf("the markdown written is not the record's")
	}
	for _, want := range []string{"fake measured [1s]", "fake measured [7s]", "fake measured [3s]", "## 2. Fake b", "at commit bbb", "at commit aaa",
		"`go build -o bin/bench ./cmd/bench && bin/bench -only b -startup-rounds=1`", "| 4. start-up of 5 nodes"} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "fake measured [2s]") {
		t.Errorf("the old section of b is still there:\n%s", text)
	}
	if strings.Count(text, "| 4. start-up") != 3 {
		t.Errorf("want one targets row per section:\n%s", text)
	}
}

// TestRecordRoundTrip: a record survives JSON unchanged.
func TestRecordRoundTrip(t *testing.T) {
	r := record{Machine: machineInfo{CPU: "c", NumCPU: 2, Modules: []string{"m v1"}}, Sections: []section{{
		Part: "x", Title: "X", Number: 3, Date: time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC), Duration: duration(1500 * time.Millisecond),
		Commit: "abc", LoadStart: "1 / 2 / 3", LoadEnd: "4 / 5 / 6", Command: "bin/bench -only x", Targets: []string{"| t |"}, Notes: []string{"n"},
		Markdown: "body\n", Figures: json.RawMessage(`{"a":1}`),
	}}}
	b := mustEncode(t, r)
	var back record
	if err := json.Unmarshal([]byte(b), &back); err != nil {
		t.Fatal(err)
	}
	if again := mustEncode(t, back); again != b {
		t.Fatalf("round trip:\n%s\n%s", again, b)
	}
	var fig map[string]int
	if err := json.Unmarshal(back.Sections[0].Figures, &fig); err != nil || fig["a"] != 1 {
		t.Errorf("figures %s: %v", back.Sections[0].Figures, err)
	}
	back.Sections[0].Figures, r.Sections[0].Figures = nil, nil
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip:\n%+v\n%+v", back, r)
	}
	if !strings.Contains(b, `"duration": 1.5`) {
		t.Errorf("duration not in seconds: %s", b)
	}
}

// TestMergeOrder: sections come in the parts' order, unknown parts last,
// a fresh section replaces the old one of its part.
func TestMergeOrder(t *testing.T) {
	old := record{Sections: []section{{Part: "zz"}, {Part: "b", Commit: "old"}, {Part: "a"}}}
	got := merge(old, machineInfo{}, []section{{Part: "b", Commit: "new"}, {Part: "c"}}, []string{"a", "b", "c"})
	var names []string
	for _, s := range got.Sections {
		names = append(names, s.Part+":"+s.Commit)
	}
	if want := []string{"a:", "b:new", "c:", "zz:"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("got %v, want %v", names, want)
	}
}

// TestSelectParts: -only takes names in any order and refuses unknown
// ones in one line.
func TestSelectParts(t *testing.T) {
	ps, err := selectParts("gobench, workload")
	if err != nil || len(ps) != 2 || ps[0].name != "workload" || ps[1].name != "gobench" {
		t.Fatalf("got %v, %v", ps, err)
	}
	if _, err := selectParts("workload,nope"); err == nil || !strings.Contains(err.Error(), `unknown part "nope"`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v", err)
	}
	all, _ := selectParts("")
	if len(all) != len(parts) {
		t.Fatalf("%d parts, want %d", len(all), len(parts))
	}
	for _, p := range parts {
		if p.run == nil || p.render == nil || p.figures == nil || p.title == "" {
			t.Errorf("part %s incomplete", p.name)
		}
	}
}

// TestShellQuote: a flag value that needs quoting is quoted.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"10s": "10s", "a,b": "a,b", "^(a|b)$": `'^(a|b)$'`, "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustEncode(t *testing.T, r record) string {
	t.Helper()
	b, err := r.encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTargetedPlan: the targeted part runs the cells chosen and the
// random twins of those alone.
func TestTargetedPlan(t *testing.T) {
	var cells []matrix.Spec
	for _, sp := range matrix.Cells(false) {
		if sp.Name == "redlock/kill-quorum" || sp.Name == "redlock/kill-quorum-delayed" {
			cells = append(cells, sp)
		}
	}
	if len(cells) != 2 {
		t.Fatalf("%d cells", len(cells))
	}
	var names []string
	for _, row := range detectPlan(cells, 3, 2, true) {
		names = append(names, fmt.Sprintf("%s %d", row.Spec.Name, len(row.Runs)))
	}
	if want := []string{"redlock/kill-quorum 3", "redlock/kill-quorum-delayed 2", "redlock/kill-quorum (random twin) 3"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("plan %v, want %v", names, want)
	}
}
