package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// The documentation's numbers come from generated blocks or are checked
// here, so they cannot go stale: the README's findings table (rendered from
// the newest published bundle), the fault kinds' table of docs/faults.md
// (rendered from nemesis.Kinds), the counts and defaults the pages state,
// the example history and its output, the flags every shown command uses,
// every relative link, and each package's doc naming what it imports.

var update = flag.Bool("update", false, "rewrite the generated blocks of README.md and docs/ (the findings table, the fault kinds) instead of failing on a stale one")

// repoRoot is the module's root, from this package's folder.
const repoRoot = "../.."

// docPages are the pages the checks below read: the README and docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
}

func readPage(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// syncBlock compares the page at rel with want (the page as its generated
// block should make it); with -update it writes want instead.
func syncBlock(t *testing.T, rel string, want []byte, how string) {
	t.Helper()
	path := filepath.Join(repoRoot, rel)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", rel)
		return
	}
	t.Errorf("%s: %s is stale; `go test ./cmd/torture -run %s -update` rewrites it", rel, how, t.Name())
}

// TestReadmeFindings: the README's findings table is the one the newest
// published bundle in results/ gives (report.Findings, as `torture matrix
// publish --findings README.md` writes it).
func TestReadmeFindings(t *testing.T) {
	results := filepath.Join(repoRoot, "results")
	bundle, err := report.NewestBundle(results)
	if err != nil {
		t.Fatal(err)
	}
	page, err := findingsPage(filepath.Join(repoRoot, "README.md"), filepath.Join(results, bundle))
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, "README.md", page, "the findings table (from results/"+bundle+"/summary.json)")
}

// TestConsensusDoc: docs/consensus.md's comparison of the consensus lock
// with the Redis locks is the one the newest bundle of results/ holding a
// consensus lock's cells gives (report.Consensus).
func TestConsensusDoc(t *testing.T) {
	bundle, err := consensusBundle(filepath.Join(repoRoot, "results"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := consensusPage(filepath.Join(repoRoot, "docs", "consensus.md"), bundle)
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, "docs/consensus.md", page, "the comparison (from "+filepath.Base(bundle)+"/summary.json)")
	// The bundle's own page carries the same comparison, linked from
	// where it stands.
	rel := filepath.Join("results", filepath.Base(bundle), "README.md")
	page, err = consensusPage(filepath.Join(repoRoot, rel), bundle)
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, filepath.ToSlash(rel), page, "the comparison")
}

// TestReadmeShort: the README stays a page a newcomer reads in minutes,
// at most 200 lines, findings table included (the rest is in docs/).
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 200 {
		t.Errorf("README.md has %d lines, more than 200: move the detail to docs/", n)
	}
}

// TestFaultsDoc: docs/faults.md's table of kinds is rendered from
// nemesis.Kinds (name, summary, needs, the workload a targeted kind
// brings), and every kind has a note of its own ("- **`kind`**").
func TestFaultsDoc(t *testing.T) {
	const rel = "docs/faults.md"
	page := readPage(t, rel)
	want, err := report.ReplaceBlock([]byte(page), kindsTable(), "kinds")
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, rel, want, "the table of fault kinds")
	for _, k := range nemesis.Kinds() {
		if !strings.Contains(page, "- **`"+k.Name+"`**") {
			t.Errorf("%s has no note on the kind %s: add a line \"- **`%s`** …\" under Random kinds or Targeted kinds", rel, k.Name, k.Name)
		}
	}
}

// TestLocksDoc: docs/tutorial.md's table of locks is the registry's.
func TestLocksDoc(t *testing.T) {
	const rel = "docs/tutorial.md"
	var b bytes.Buffer
	b.WriteString("<!-- begin locks: rendered from the locks registry by TestLocksDoc (cmd/torture/docs_test.go); do not edit by hand -->\n")
	b.WriteString("| lock | what it is |\n|---|---|\n")
	for _, name := range locks.Names() {
		spec, err := locks.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, strings.ReplaceAll(spec.Summary, "|", `\|`))
	}
	b.WriteString("<!-- end locks -->\n")
	want, err := report.ReplaceBlock([]byte(readPage(t, rel)), b.Bytes(), "locks")
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, rel, want, "the table of locks")
}

// TestMatrixDoc: docs/matrix.md's table of rows is rendered from
// matrix.Literature.
func TestMatrixDoc(t *testing.T) {
	const rel = "docs/matrix.md"
	want, err := report.ReplaceBlock([]byte(readPage(t, rel)), literatureTable(), "literature")
	if err != nil {
		t.Fatal(err)
	}
	syncBlock(t, rel, want, "the literature table")
}

// literatureTable renders the generated block of docs/matrix.md: one
// line per row of matrix.Literature.
func literatureTable() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- begin literature: rendered from matrix.Literature by TestMatrixDoc (cmd/torture/docs_test.go); do not edit by hand -->\n")
	b.WriteString("| row | for locks that are | lease | resource | liveness | also | band | quick |\n|---|---|---|---|---|---|---|---|\n")
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return strings.NewReplacer("|", " or ", "!", "not ").Replace(s)
	}
	for _, r := range matrix.Literature {
		band := report.DefaultBand(r.Expect.Overall())
		if r.Band != nil {
			band = *r.Band
		}
		var also []string // the properties beside (report.Extras) the row states
		for _, x := range report.Extras {
			switch e := x.Expect(r.Expect); e {
			case report.ExpectSafe:
				also = append(also, x.Kept)
			case report.ExpectViolation, report.ExpectPossible:
				also = append(also, x.Name+" "+string(e))
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", r.Name, or(r.When, "any"), r.Expect.Lease, r.Expect.Resource,
			or(string(r.Expect.Liveness), "–"), or(strings.Join(also, ", "), "–"), band, or(strings.ReplaceAll(r.Quick, "*", "any"), "–"))
	}
	b.WriteString("<!-- end literature -->\n")
	return b.Bytes()
}

// kindsTable renders the generated block of docs/faults.md.
func kindsTable() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- begin kinds: rendered from nemesis.Kinds by TestFaultsDoc (cmd/torture/docs_test.go); do not edit by hand -->\n")
	b.WriteString("| kind | what it does | needs | workload it brings |\n|---|---|---|---|\n")
	for _, k := range nemesis.Kinds() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.Summary, needsText(k.Needs), windowText(k.Window))
	}
	b.WriteString("<!-- end kinds -->\n")
	return b.Bytes()
}

// needsText says in words what a kind needs of a run.
func needsText(n nemesis.Needs) string {
	var s []string
	if n.MultiNode {
		s = append(s, "a multi-node lock")
	}
	switch n.Topology {
	case "":
	case "masters":
		s = append(s, "independent masters")
	default:
		s = append(s, "`--topology "+n.Topology+"`")
	}
	if n.Cluster.Process {
		s = append(s, "nodes it can kill and pause")
	}
	if n.Cluster.Clock {
		s = append(s, "the nodes' clocks (shim)")
	}
	if n.Cluster.Network {
		s = append(s, "the nodes' network (proxies)")
	}
	if n.Groups > 1 {
		s = append(s, fmt.Sprintf("%d client groups", n.Groups))
	}
	if n.ClientClock {
		s = append(s, "client processes (exec:, Python locks)")
	}
	if len(s) == 0 {
		return "–"
	}
	return strings.Join(s, "; ")
}

// windowText says what workload a kind asks for (Kind.Window).
func windowText(w nemesis.Workload) string {
	var s []string
	if w.Clients > 0 {
		s = append(s, fmt.Sprintf("%d clients", w.Clients))
	}
	switch {
	case w.Keys == 1:
		s = append(s, "one key")
	case w.Keys > 1:
		s = append(s, fmt.Sprintf("%d keys", w.Keys))
	}
	if w.TTL > 0 {
		s = append(s, "TTL "+w.TTL.String())
	}
	if w.Hold > 0 {
		s = append(s, "holds of "+w.Hold.String())
	}
	if w.Interval > 0 {
		s = append(s, w.Interval.String()+" between steps")
	}
	if w.Duration > 0 {
		s = append(s, "at least "+w.Duration.String())
	}
	if len(s) == 0 {
		return "–"
	}
	return strings.Join(s, ", ")
}

// TestDocsHistory: the example history of docs/correctness.md is
// docs/example-history.jsonl, and `torture check` on it and on
// docs/example-overlap.jsonl prints what the page shows (-update rewrites
// the outputs shown), exiting 0 and 1. The protected value of each key
// starts at 0 (the example once read 41).
func TestDocsHistory(t *testing.T) {
	const rel = "docs/correctness.md"
	page := readPage(t, rel)
	example := fence(t, page, "Example — client 0 holds `k0` and increments it", "json")
	want, err := os.ReadFile(filepath.Join(repoRoot, "docs", "example-history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if example != string(want) {
		t.Errorf("%s's example is not docs/example-history.jsonl:\n%s", rel, example)
	}
	t.Chdir(repoRoot)
	updated := page
	for _, tc := range []struct {
		file string
		code int
	}{
		{"docs/example-history.jsonl", exitValid},
		{"docs/example-overlap.jsonl", exitViolation},
	} {
		stdout, stderr, code := torture(t, "check", tc.file)
		if code != tc.code {
			t.Errorf("torture check %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.file, code, tc.code, stdout, stderr)
		}
		command := "bin/torture check " + tc.file + "\n```\n\n```text\n"
		before, rest, ok := strings.Cut(updated, command)
		shown, after, ok2 := strings.Cut(rest, "```")
		if !ok || !ok2 {
			t.Fatalf("%s shows no output block for `bin/torture check %s`", rel, tc.file)
		}
		if shown != stdout {
			if !*update {
				t.Errorf("%s shows, for `bin/torture check %s`:\n%s\nit prints:\n%s(-update rewrites the page)", rel, tc.file, shown, stdout)
			}
			updated = before + command + stdout + "```" + after
		}
	}
	if *update && updated != page {
		if err := os.WriteFile(rel, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the outputs of %s", rel)
	}
}

// TestDocListsCommands: the package doc lists every command of the table
// that dispatches them, and no other.
func TestDocListsCommands(t *testing.T) {
	doc := readPage(t, "cmd/torture/doc.go")
	listed := regexp.MustCompile(`(?m)^//\ttorture ((?:[a-z]+ )*?[a-z]+)(?: {2,}| [\[A-Z-]|\s*$)`).FindAllStringSubmatch(doc, -1)
	var got []string
	for _, m := range listed {
		got = append(got, m[1])
	}
	var want []string
	for _, c := range commands {
		want = append(want, c.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("cmd/torture's doc lists %q; the commands are %q", got, want)
	}
}

// TestDocsHistoryEvents: the `f` row of docs/correctness.md's history
// format names every operation the history package declares (a Func
// constant), so an event the history can hold is never left undocumented.
func TestDocsHistoryEvents(t *testing.T) {
	page := readPage(t, "docs/correctness.md")
	_, row, ok := strings.Cut(page, "\n| `f` |")
	row, _, _ = strings.Cut(row, "\n")
	if !ok {
		t.Fatal("docs/correctness.md has no `f` row in its history format")
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "history", "history.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Func" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok {
					continue
				}
				n++
				if name := strings.Trim(lit.Value, `"`); !strings.Contains(row, "`"+name+"`") {
					t.Errorf("docs/correctness.md's history format does not list the event %q", name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("found no Func constant in history/history.go")
	}
}

// fence returns the body of the first fenced block of lang after the
// first occurrence of after in page.
func fence(t *testing.T, page, after, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, after)
	if !ok {
		t.Fatalf("no %q", after)
	}
	_, rest, ok = strings.Cut(rest, "```"+lang+"\n")
	body, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("no ```%s block after %q", lang, after)
	}
	return body
}

// TestReadmeRunOutput: the verdict lines the README shows for its run
// are the ones report.Summary writes, label and alignment.
func TestReadmeRunOutput(t *testing.T) {
	shown := fence(t, readPage(t, "README.md"), "## A first run", "text")
	h := new(testutil.History).
		Acquire(0, "k0", "t0", 0, 10, 1000).Section(0, "k0", 20, 900, 0).
		Acquire(1, "k0", "t1", 1000, 1010, 2000).Section(1, "k0", 1020, 1100, 0).
		Release(1, "k0", "t1", 1200, 1300)
	res, err := checker.Check(h.Events(), checker.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report.Summary(&out, "title", res, nil)
	for line := range strings.Lines(shown) {
		// The labelled lines; a finding's numbered headline and
		// paragraph depend on the run.
		if !regexp.MustCompile(`^  [a-z][a-z ]*:`).MatchString(line) || strings.HasPrefix(line, "  findings:") {
			continue
		}
		label, _, _ := strings.Cut(line, ":")
		if !strings.Contains(out.String(), "\n"+label+":") {
			t.Errorf("README.md shows %q, which report.Summary does not write:\n%s", strings.TrimSpace(line), out.String())
		}
	}
}

// TestDocsNumbers: the counts, estimates and defaults the pages state are
// the code's.
func TestDocsNumbers(t *testing.T) {
	quick := matrix.Cells(true)
	o := matrix.Options{Seeds: []int64{1}, Duration: matrix.DefaultDuration}
	est := matrix.ExpectedTime(quick, o, matrix.Shards(quick, o, 1)[0])
	minutes := int(math.Round(est.Minutes()))
	gateUsage, _, _ := torture(t, "gate", "-h")
	full := matrix.Cells(false)
	fo := matrix.Options{Seeds: []int64{1, 2, 3}, Duration: matrix.DefaultDuration}
	fullEst := matrix.ExpectedTime(full, fo, matrix.Shards(full, fo, 1)[0])
	envelopeUsage, _, _ := torture(t, "envelope", "-h")
	runUsage, _, _ := torture(t, "run", "-h")
	shrinkUsage, _, _ := torture(t, "shrink", "-h")
	d := harness.Defaults()
	for _, c := range []struct {
		page, text string
		ok         bool // the code agrees, beyond the text being there
	}{
		{"README.md", fmt.Sprintf("the %d cells whose outcome one short run decides reliably", len(quick)), true},
		{"README.md", fmt.Sprintf("about %d minutes of runs", minutes), true},
		{"README.md", "`make torture` is `bin/torture matrix --quick --seeds 1 --duration 8s`", makeTarget(t, "torture") == "$(BIN) matrix --quick --seeds 1 --duration 8s"},
		{"README.md", "until each promise excludes a 25 % per-trial rate, within 5 minutes", strings.Contains(gateUsage, "(default 0.25)") && strings.Contains(gateUsage, "(default 5m0s)")},
		{"docs/matrix.md", fmt.Sprintf("its %d cells", len(quick)), true},
		{"docs/matrix.md", fmt.Sprintf("about %d minutes", minutes), true},
		{"docs/matrix.md", fmt.Sprintf("The table has %d rows", len(matrix.Literature)), true},
		{"docs/matrix.md", fmt.Sprintf("%d cells in all", len(full)), true},
		{"docs/matrix.md", fmt.Sprintf("or %s of it for a cell that expects only violations, which ends once it showed them) plus %s to start", fmtShare(matrix.StopShare), matrix.RunOverhead), true},
		{"docs/matrix.md", "every cell × seeds 1..10 each night", strings.Contains(readPage(t, ".github/workflows/nightly.yml"), "--seeds 1..10 ")},
		{"docs/matrix.md", fmt.Sprintf("about %d minutes of runs by the estimate", int(math.Round(fullEst.Minutes()))), true},
		{"docs/matrix.md", "every cell on seeds 1, 2, 3", strings.Contains(readPage(t, "scripts/matrix"), "seeds=${MATRIX_SEEDS:-1,2,3}")},
		{"docs/matrix.md", fmt.Sprintf("(%g where the fault forces", report.DefaultMinRate), true},
		{"docs/faults.md", fmt.Sprintf("`--nemesis-interval` (default %s)", fmtDur(d.NemesisInterval)), true},
		{"docs/faults.md", fmt.Sprintf("with the default %s holds", fmtDur(d.Hold)), true},
		{"docs/faults.md", "(6 s, TTL 500 ms, holds of 100 ms, six clients on one key", strings.Contains(envelopeUsage, "(default 6s)") && strings.Contains(envelopeUsage, "(default 500ms)") && strings.Contains(envelopeUsage, "(default 100ms)") && strings.Contains(envelopeUsage, "on one key (default 6)")},
		{"docs/faults.md", "`--seeds` (default `1..3`)", strings.Contains(envelopeUsage, `(default "1..3")`)},
		{"docs/faults.md", "`--restart-delay` (default 1.5 × TTL", strings.Contains(runUsage, "(default 1.5×TTL)")},
		{"docs/tutorial.md", "`--tries` times, default 3", strings.Contains(shrinkUsage, "(default 3)")},
		{"docs/backends.md", "(default 5 for RedLock locks, 1 otherwise)", strings.Contains(runUsage, "(default 5 for redlock locks, 1 otherwise)")},
		{"docs/matrix.md", "3 of 3 is `" + report.NewRate(3, 3).String() + "`", true},
		{"README.md", fmt.Sprintf("%s clients contend for one key", numberWord(d.Clients)), true},
		{"docs/tutorial.md", fmt.Sprintf("%d clients on %d keys for %s, a TTL of %s, no faults", d.Clients, d.Keys, fmtDur(d.Duration), fmtDur(d.TTL)), true},
		{"docs/correctness.md", fmt.Sprintf("fewer than %g%% of the acquires", trial.MinOKShare*100), true},
		{"docs/correctness.md", fmt.Sprintf("%d × the longest validity", checker.DefaultLivenessFactor), true},
	} {
		if !strings.Contains(strings.Join(strings.Fields(readPage(t, c.page)), " "), c.text) {
			t.Errorf("%s does not say %q (the code's figure)", c.page, c.text)
		} else if !c.ok {
			t.Errorf("%s says %q, which the code no longer does", c.page, c.text)
		}
	}
}

// fmtDur is a duration as the pages write it: "2 s", "10 ms".
func fmtDur(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
	return d.String()
}

// numberWord is n as a word at the start of a sentence, up to twelve.
func numberWord(n int) string {
	words := []string{"No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// fmtShare is a share as words: 0.5 is "half".
func fmtShare(f float64) string {
	if f == 0.5 {
		return "half"
	}
	return fmt.Sprintf("%g", f)
}

// makeTarget returns the first recipe line of the Makefile's target.
func makeTarget(t *testing.T, target string) string {
	t.Helper()
	mk := readPage(t, "Makefile")
	_, rest, ok := strings.Cut(mk, "\n"+target+":")
	if !ok {
		return ""
	}
	for line := range strings.Lines(rest) {
		if strings.HasPrefix(line, "\t") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// shellBlocks returns the lines of the ```sh blocks of page, each with
// its line number, comments and continuation lines joined.
func shellBlocks(page string) (lines []string, at []int) {
	in, cont := false, ""
	for i, l := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cont += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		lines, at = append(lines, cont+l), append(at, i+1)
		cont = ""
	}
	return lines, at
}

// words splits a shell line as the pages write them: words separated by
// blanks, single quotes kept together, a comment ("  # …") dropped.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for i, r := range line {
		switch {
		case r == '\'':
			quoted, has = !quoted, true
		case !quoted && r == '#' && (i == 0 || line[i-1] == ' '):
			if has {
				out = append(out, cur.String())
			}
			return out
		case !quoted && (r == ' ' || r == '\t'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// TestDocsCommands: every `bin/torture` command the pages show names a
// command that exists and flags that command takes, and every `make`
// target shown exists.
func TestDocsCommands(t *testing.T) {
	usage := map[string]string{}
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(page, repoRoot+"/")
		lines, at := shellBlocks(string(b))
		for i, line := range lines {
			w := words(line)
			switch {
			case len(w) >= 2 && w[0] == "make":
				if makeTarget(t, w[1]) == "" && !strings.Contains(readPage(t, "Makefile"), "\n"+w[1]+":") {
					t.Errorf("%s:%d: make %s: no such target", name, at[i], w[1])
				}
			case len(w) >= 2 && w[0] == "bin/torture":
				c, rest, ok := lookup(w[1:])
				if !ok {
					t.Errorf("%s:%d: torture %s: no such command", name, at[i], w[1])
					continue
				}
				cmd := strings.Fields(c.name)
				key := c.name
				u, ok := usage[key]
				if !ok {
					stdout, stderr, code := torture(t, append(slices.Clone(cmd), "-h")...)
					if code != exitValid {
						t.Errorf("%s:%d: torture %s -h: exit %d: %s", name, at[i], key, code, stderr)
						continue
					}
					u = stdout
					usage[key] = u
				}
				for _, a := range rest {
					if !strings.HasPrefix(a, "--") {
						continue
					}
					flagName, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
					if !regexp.MustCompile(`\n  -` + regexp.QuoteMeta(flagName) + `[ \n]`).MatchString(u) {
						t.Errorf("%s:%d: torture %s has no flag --%s", name, at[i], key, flagName)
					}
				}
			}
		}
	}
}

// TestDocsLinks: every relative link of the README and docs/ leads to a
// file or folder of the repository.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(filepath.Dir(page), target)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links %s: %v", page, m[1], err)
			}
		}
	}
}

// TestYourLockExample: the test docs/your-lock.md shows compiles in a
// module of its own that requires this one (as a user's module would,
// through a replace to this checkout), with go vet.
func TestYourLockExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	_, code, ok := strings.Cut(readPage(t, "docs/your-lock.md"), "```go\npackage mylock_test\n")
	code, _, ok2 := strings.Cut(code, "\n```")
	if !ok || !ok2 {
		t.Fatal("docs/your-lock.md has no ```go block of package mylock_test")
	}
	code = "package mylock_test\n" + code + "\n"
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/mylock\n\ngo 1.26.0\n\nrequire github.com/locktorture/locktorture v0.0.0\n\nreplace github.com/locktorture/locktorture => " + root + "\n"
	for name, body := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "mylock_test.go": code} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docs/your-lock.md's example does not build: %v\n%s\n%s", err, out, code)
	}
}

// goPackage is what TestPackageDocsNameImports reads of `go list -json`.
type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// TestPackageDocsNameImports: every package's doc says which of the
// module's packages it imports, and names each one it does (`go list`):
// in a sentence with "imports" (up to a "; never …" or "nothing
// imports …"), by its path in the module ("locks", "deploy/compose"), or
// an internal package by its last element ("wait").
func TestPackageDocsNameImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/locktorture/locktorture"
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		doc := packageDoc(t, p)
		if doc == "" {
			t.Errorf("%s has no package doc", rel)
			continue
		}
		said := importSentences(doc)
		if said == "" {
			t.Errorf("%s: its doc does not say what it imports (a sentence with \"imports\")", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if !names(said, dep) {
				t.Errorf("%s imports %s, which its doc does not name (it says: %q)", rel, dep, said)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list gave %d packages", n)
	}
}

// packageDoc is the package comment of p's files, joined.
func packageDoc(t *testing.T, p goPackage) string {
	t.Helper()
	var doc strings.Builder
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			doc.WriteString(af.Doc.Text())
		}
	}
	return doc.String()
}

var (
	importWord  = regexp.MustCompile(`\bimports?\b`)
	sentenceEnd = regexp.MustCompile(`\.(\s|$)`)
)

// importSentences returns the parts of doc that say what the package
// imports: each sentence from its "import(s)" on, cut where it turns to
// what the package never imports or what imports it.
func importSentences(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	var out []string
	for _, loc := range importWord.FindAllStringIndex(doc, -1) {
		before := doc[max(0, loc[0]-8):loc[0]]
		if strings.HasSuffix(before, "not ") || strings.HasSuffix(before, "never ") || strings.HasSuffix(before, "nothing ") {
			continue // what it must not import, or what imports it
		}
		s := doc[loc[0]:]
		if end := sentenceEnd.FindStringIndex(s); end != nil {
			s = s[:end[0]]
		}
		for _, stop := range []string{"; never", "never imports", "nothing imports", "; nothing", "imported by", "; it is imported"} {
			if i := strings.Index(s, stop); i >= 0 {
				s = s[:i]
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " / ")
}

// names reports whether text names the module's package dep.
func names(text, dep string) bool {
	forms := []string{dep}
	if rest, ok := strings.CutPrefix(dep, "internal/"); ok {
		forms = append(forms, rest)
	}
	for _, f := range forms {
		if regexp.MustCompile(`(^|[^\w/.-])` + regexp.QuoteMeta(f) + `([^\w/-]|$)`).MatchString(text) {
			return true
		}
	}
	return false
}
