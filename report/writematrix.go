package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/internal/safefs"
)

// WriteMatrix writes into dir summary.md, summary.json, junit.xml (a
// testcase per cell, timed by its runs' results.json) and index.html
// (linking every run's report.html, relative to dir). It writes every
// file it can, through safefs.WriteFile, and joins the others' errors.
func WriteMatrix(dir string, m Matrix) error {
	var errs []error
	write := func(name string, b []byte, err error) {
		if err == nil {
			err = safefs.WriteFile(filepath.Join(dir, name), b, 0o600)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("report: matrix %s: %w", name, err))
		}
	}
	write("summary.md", matrixMarkdown(m), nil)
	js, err := json.MarshalIndent(m, "", "  ")
	write("summary.json", append(js, '\n'), err)
	ju, err := matrixJUnit(m, cellTimes(dir, m))
	write("junit.xml", ju, err)
	page, err := matrixHTML(m)
	write("index.html", page, err)
	return errors.Join(errs...)
}

// ReadMatrix reads dir/summary.json (see readJSON).
func ReadMatrix(dir string) (Matrix, error) { return readJSON[Matrix](dir, "summary.json") }

func commitText(m Matrix) string {
	return pick(m.Commit != "" && m.Dirty, m.Commit+" (with uncommitted changes)", m.Commit)
}

// shardText says what part of the matrix a shard holds; "" for none.
func shardText(m Matrix) string {
	s := m.Shard
	if s == nil {
		return ""
	}
	return fmt.Sprintf("shard %d/%d: %d of the %d runs (%s × %s); each cell counts this shard's runs only, and the matrix is judged once `torture matrix merge` has joined the shards",
		s.Index, s.Count, len(s.Runs), len(s.Cells)*len(m.Seeds), plural(len(s.Cells), "cell"), seedsNamed(m.Seeds))
}

func cellStatus(c Cell) string {
	switch {
	case c.Outcome == checker.OutcomeUnknown || c.Outcome == OutcomeNotRun || c.Outcome == "":
		return "unknown"
	case !c.Matches:
		return "mismatch"
	case c.Outcome == checker.OutcomeViolation:
		return "match-violation"
	}
	return "match-safe"
}

// Formatting shared by the outputs; "–" for no value, n/a for an
// availability below 0 (checker.Stats.AvailabilityDuringFaults).
func fmtFirst(v *float64) string {
	switch {
	case v == nil:
		return "–"
	case *v < 1:
		return fmt.Sprintf("%.3f", *v)
	}
	return fmt.Sprintf("%.2f", *v)
}

func fmtAvail(v float64) string { return pick(v < 0, "n/a", fmt.Sprintf("%.1f%%", 100*v)) }

func fmtFencing(b bool) string { return pick(b, "yes", "no") }

func fmtMatch(b bool) string { return pick(b, "✓", "✗") }

// runReport is the relative link to a run's report.html.
func runReport(r CellRun) string { return path.Join(filepath.ToSlash(r.Dir), "report.html") }

// mismatchText explains a cell that contradicts its expectation by what
// the runs showed, never blaming the harness for what a lock did.
func mismatchText(c Cell) string {
	if c.Outcome == OutcomeNotRun {
		return fmt.Sprintf("never ran: the matrix was interrupted before %s", seedsNamed(c.NotRun))
	}
	s := c.PropertiesText()
	if legacy(c) {
		s = fmt.Sprintf("expected %s, outcome %s: %d of %d runs found a violation", c.Expect, c.Outcome, c.RunsWithViolation, len(c.Runs))
	}
	if c.Broken != "" {
		s = "broke its declared promise (" + c.Broken + "): " + s
	}
	if c.Incomplete() {
		var cut []int64
		for _, r := range c.Runs {
			if r.Interrupted {
				cut = append(cut, r.Seed)
			}
		}
		s += "; the matrix was interrupted"
		if len(cut) > 0 {
			s += " during " + seedsNamed(cut)
		}
		if len(c.NotRun) > 0 {
			s += fmt.Sprintf(", %s never ran", seedsNamed(c.NotRun))
		}
		return s
	}
	if c.Unknown > 0 {
		s += fmt.Sprintf("; %d of %d runs decided nothing, which is never a pass", c.Unknown, len(c.Runs))
	}
	switch {
	case c.Outcome == checker.OutcomeUnknown:
	case c.Broken == "" && (brokeSafe(c.Props.Lease, c.LeaseRate) || brokeSafe(c.Props.Resource, c.ResourceRate)):
		s += "; a violation where the literature expects none: the run's explanation names its cause"
	case c.Expect == ExpectViolation:
		s += "; the runs did not show the violation the literature expects of this lock's class (the fault did not bite in these runs, or the lock keeps more than its class)"
	}
	return s
}

// expectText is the cell's expectation (one word in a legacy summary).
func expectText(c Cell) string { return pick(legacy(c), string(c.Expect), c.Props.String()) }

// brokeSafe reports whether a property expected safe has a violation.
func brokeSafe(e Expectation, r *Rate) bool { return e == ExpectSafe && r != nil && r.Violations > 0 }

func runLine(r CellRun) string { return fmt.Sprintf("seed %d: %s", r.Seed, runDetail(r)) }

// runDetail describes one run: directory, verdicts, violations, error.
// runLine prefixes "seed N: ".
func runDetail(r CellRun) string {
	s := fmt.Sprintf("%s (lease %s, resource %s, %d violations", r.Dir, r.Lease, r.Resource, r.Violations)
	if r.FirstViolation != nil {
		s += fmt.Sprintf(", first at %s s", fmtFirst(r.FirstViolation))
	}
	s += ")"
	if r.LeaseReason != "" {
		s += "; lease unknown: " + r.LeaseReason
	}
	if r.ResourceReason != "" {
		s += "; resource unknown: " + r.ResourceReason
	}
	if r.Interrupted {
		s += "; interrupted"
	}
	if r.Error != "" {
		s += ": error: " + r.Error
	}
	return s
}

// sources returns the distinct sources of the cells ("; " separates
// several), in order of first citation, each with the cells citing it.
func sources(m Matrix) (list []string, citedBy map[string][]string) {
	citedBy = map[string][]string{}
	for _, c := range m.Cells {
		for _, s := range strings.Split(c.Source, ";") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if _, ok := citedBy[s]; !ok {
				list = append(list, s)
			}
			if by := citedBy[s]; len(by) == 0 || by[len(by)-1] != c.Name {
				citedBy[s] = append(by, c.Name)
			}
		}
	}
	return list, citedBy
}

// versionList renders versions sorted by name.
func versionList(v map[string]string) []string {
	out := make([]string, 0, len(v))
	for k, ver := range v {
		out = append(out, k+" "+ver)
	}
	sort.Strings(out)
	return out
}

// seedsNamed is "seed 1" or "seeds 1, 2".
func seedsNamed(seeds []int64) string {
	return pick(len(seeds) == 1, "seed ", "seeds ") + JoinSeeds(seeds, ", ")
}

// JoinSeeds joins seeds by sep: "1,2,3" as --seeds takes them.
func JoinSeeds(seeds []int64, sep string) string {
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, sep)
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "", "<", "&lt;", ">", "&gt;").Replace(s)
}

// MarkdownText is s as Markdown text, without the markup a name may hold.
func MarkdownText(s string) string {
	return strings.NewReplacer("\n", " ", "\r", "", "<", "&lt;", ">", "&gt;").Replace(Printable(s))
}

// matrixMarkdown renders summary.md.
func matrixMarkdown(m Matrix) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# locktorture matrix\n\n")
	p("- date: %s\n", m.Started.UTC().Format(time.RFC3339))
	if m.Command != "" {
		p("- command: `%s`\n", strings.ReplaceAll(m.Command, "`", "'"))
	}
	p("- seeds: %s\n", JoinSeeds(m.Seeds, ", "))
	p("- duration per run: %s; whole matrix: %.1f s\n", m.Duration, m.Elapsed)
	if c := commitText(m); c != "" {
		p("- commit: %s\n", c)
	}
	if s := shardText(m); s != "" {
		p("- %s\n", s)
	}
	if len(m.Servers) > 0 {
		p("- server: %s\n", strings.Join(m.Servers, ", "))
	}
	if m.Machine != nil {
		p("- machine: %s\n", m.Machine) // what ran the cells, and its load
	}
	if v := versionList(m.Versions); len(v) > 0 {
		p("- versions: %s\n", strings.Join(v, ", "))
	}
	failed := m.Failed()
	never := m.NeverRan()
	p("\n**%d cells: %d match their expectation, %d do not", len(m.Cells), len(m.Cells)-len(failed), len(failed))
	if m.Interrupted {
		p("; the matrix was interrupted and %s never ran", plural(len(never), "cell"))
	}
	p(".**\n\n")
	p("| cell | lock | language | faults | fencing | expected | what the runs showed | trials | median s to first violation | acq/s | p99 ms | availability during faults | matches |\n")
	p("|---|---|---|---|---|---|---|---|---:|---:|---:|---:|:---:|\n")
	for _, c := range m.Cells {
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n",
			mdCell(c.Name), mdCell(c.Lock), mdCell(c.Language), mdCell(c.Nemesis), fmtFencing(c.Fencing), mdCell(expectText(c)), mdCell(c.PropertiesText()), mdCell(c.Power()),
			fmtFirst(c.MedianFirstViolation), c.AcqPerSec, c.P99Acquire, fmtAvail(c.Availability), fmtMatch(c.Matches))
	}
	if len(m.Skipped) > 0 {
		p("\nNot run:\n\n")
		for _, sk := range m.Skipped {
			p("- %s: %s\n", mdCell(sk.Kinds), mdCell(sk.Why))
		}
	}

	b.Write(ratesMarkdown(m))
	b.Write(scenariosMarkdown(m))
	p("\n## Mismatches\n\n")
	if len(failed) == 0 {
		p("None: every cell matches its expectation.\n")
	}
	for _, c := range failed {
		if c.Outcome == OutcomeNotRun {
			continue // listed below
		}
		p("- **%s**: %s.\n", MarkdownText(c.Name), MarkdownText(mismatchText(c)))
		for _, r := range c.Runs {
			p("  - [seed %d](%s): %s\n", r.Seed, runReport(r), MarkdownText(runDetail(r)))
		}
	}
	if len(never) > 0 {
		p("\n## Never ran\n\nThe matrix was interrupted before these cells ran; they prove nothing either way.\n\n")
		for _, c := range never {
			p("- **%s** (%s)\n", MarkdownText(c.Name), seedsNamed(c.NotRun))
		}
	}

	p("\n## Sources\n\n")
	list, citedBy := sources(m)
	if len(list) == 0 {
		p("None cited.\n")
	}
	for i, s := range list {
		p("%d. %s — cited by %s\n", i+1, MarkdownText(s), MarkdownText(strings.Join(citedBy[s], ", ")))
	}
	return b.Bytes()
}

// cellTimes sums each cell's runs' elapsed seconds (results.json).
func cellTimes(dir string, m Matrix) []float64 {
	out := make([]float64, len(m.Cells))
	for i, c := range m.Cells {
		for _, r := range c.Runs {
			if r.Dir == "" {
				continue
			}
			d := r.Dir
			if !filepath.IsAbs(d) {
				d = filepath.Join(dir, d)
			}
			if res, err := ReadResults(d); err == nil {
				out[i] += res.Elapsed
			}
		}
	}
	return out
}

// JUnit XML as CI systems read it: testsuites > testsuite > testcase.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"` // a cell that never ran
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitText struct {
	Text string `xml:",chardata"`
}

// junitSuiteName names the one testsuite of junit.xml.
const junitSuiteName = "locktorture.matrix"

// junitClass is c's testcase classname, grouping cases by lock: the
// lock in a release gate (m.Gate), else lock/class.
func junitClass(m Matrix, c Cell) string {
	if m.Gate != "" || c.Class == "" {
		return c.Lock
	}
	return c.Lock + "/" + strings.ReplaceAll(c.Class, " ", ",")
}

// matrixJUnit renders junit.xml; times[i] is the time of cell i.
func matrixJUnit(m Matrix, times []float64) ([]byte, error) {
	secs := func(f float64) string { return fmt.Sprintf("%.3f", f) }
	suite := junitSuite{
		Name:      junitSuiteName,
		Tests:     len(m.Cells),
		Time:      secs(m.Elapsed),
		Timestamp: m.Started.UTC().Format("2006-01-02T15:04:05"),
	}
	for _, p := range []junitProperty{
		{"command", m.Command},
		{"seeds", JoinSeeds(m.Seeds, ", ")},
		{"duration", m.Duration},
		{"server", strings.Join(m.Servers, ", ")},
		{"commit", commitText(m)},
		{"shard", shardText(m)},
	} {
		if p.Value != "" {
			suite.Properties = append(suite.Properties, p)
		}
	}
	for _, v := range versionList(m.Versions) {
		name, ver, _ := strings.Cut(v, " ")
		suite.Properties = append(suite.Properties, junitProperty{"version " + name, ver})
	}
	for i, c := range m.Cells {
		tc := junitCase{Classname: junitClass(m, c), Name: c.Name, Time: secs(times[i])}
		var out strings.Builder
		fmt.Fprintf(&out, "lock %s, faults %s, fencing %s", c.Lock, c.Nemesis, fmtFencing(c.Fencing))
		if c.Topology != "" {
			fmt.Fprintf(&out, ", topology %s", c.Topology)
		}
		fmt.Fprintf(&out, "\nexpected %s (%s); %s\n", c.Props, c.Source, c.PropertiesText())
		for _, r := range c.Runs {
			fmt.Fprintf(&out, "%s; report %s\n", runLine(r), runReport(r))
		}
		switch {
		case c.Matches:
			tc.SystemOut = &junitText{out.String()}
		case c.Outcome == OutcomeNotRun:
			suite.Errors++
			tc.Error = &junitFailure{Message: mismatchText(c), Type: "not-run", Text: out.String()}
		default:
			suite.Failures++
			typ := pick(c.Outcome == checker.OutcomeUnknown, "unknown", "mismatch")
			dirs := make([]string, len(c.Runs))
			for j, r := range c.Runs {
				dirs[j] = r.Dir
			}
			tc.Failure = &junitFailure{
				Message: mismatchText(c) + "; runs: " + strings.Join(dirs, ", "),
				Type:    typ,
				Text:    out.String(),
			}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, sk := range m.Skipped {
		// A skipped case, so that a CI report shows what was not tested.
		suite.Cases = append(suite.Cases, junitCase{Classname: cmp.Or(m.Gate, junitSuiteName), Name: "not run: " + sk.Kinds, Time: secs(0), Skipped: &junitSkipped{Message: sk.Why}})
		suite.Tests++
		suite.Skipped++
	}
	root := junitSuites{Name: "locktorture", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(append([]byte(xml.Header), b...), '\n'), nil
}

// gridEntry is a cell of index.html's grid; Label tells apart cells that
// share a position (the name after its first "/").
type gridEntry struct {
	Index  int
	Cell   Cell
	Status string
	Label  string
}

// gridRow is one lock variant; Cols[j] holds the cells of fault set j.
type gridRow struct {
	Label string
	Cols  [][]gridEntry
}

type matrixPage struct {
	M        Matrix
	Versions []string
	Seeds    string
	Date     string
	Failed   []Cell
	Never    []Cell
	Unknown  int
	Nemesis  []string
	Grid     []gridRow
	Rows     []gridEntry
	Sources  []string
	CitedBy  map[string][]string
	Commit   string
	Shard    string
}

// variant names a grid row: the lock, fencing, a topology but masters.
func variant(c Cell) string {
	s := c.Lock
	if c.Fencing {
		s += " + fencing"
	}
	if c.Topology != "" && c.Topology != "masters" {
		s += " (" + c.Topology + ")"
	}
	return s
}

func matrixHTML(m Matrix) ([]byte, error) {
	p := matrixPage{
		M:        m,
		Versions: versionList(m.Versions),
		Seeds:    JoinSeeds(m.Seeds, ", "),
		Date:     m.Started.UTC().Format("2006-01-02 15:04:05 MST"),
		Failed:   m.Failed(),
		Never:    m.NeverRan(),
		Commit:   commitText(m),
		Shard:    shardText(m),
	}
	p.Sources, p.CitedBy = sources(m)
	var variants []string
	col := map[string]int{}
	row := map[string]int{}
	for i, c := range m.Cells {
		e := gridEntry{Index: i, Cell: c, Status: cellStatus(c)}
		if _, after, ok := strings.Cut(c.Name, "/"); ok && after != c.Nemesis {
			e.Label = after
		}
		if e.Status == "unknown" {
			p.Unknown++
		}
		p.Rows = append(p.Rows, e)
		if _, ok := col[c.Nemesis]; !ok {
			col[c.Nemesis] = len(p.Nemesis)
			p.Nemesis = append(p.Nemesis, c.Nemesis)
		}
		v := variant(c)
		if _, ok := row[v]; !ok {
			row[v] = len(variants)
			variants = append(variants, v)
		}
	}
	for _, v := range variants {
		p.Grid = append(p.Grid, gridRow{Label: v, Cols: make([][]gridEntry, len(p.Nemesis))})
	}
	for _, e := range p.Rows {
		r, c := row[variant(e.Cell)], col[e.Cell.Nemesis]
		p.Grid[r].Cols[c] = append(p.Grid[r].Cols[c], e)
	}
	return execute(matrixTmpl, p)
}

var matrixTmpl = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"first":     fmtFirst,
	"avail":     fmtAvail,
	"fencing":   fmtFencing,
	"match":     fmtMatch,
	"report":    runReport,
	"expect":    expectText,
	"mismatch":  mismatchText,
	"runline":   runLine,
	"detail":    runDetail,
	"f1":        func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"join":      strings.Join,
	"sub":       func(a, b int) int { return a - b },
	"seeds":     seedsNamed,
	"cells":     func(n int) string { return plural(n, "cell") },
	"rates":     ratesHTML,
	"scenarios": scenariosHTML,
	"kindclass": func(k string) string { return pick(k == "lease", "kind-lease", "kind-resource") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>locktorture matrix {{.Date}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.match-safe{background:#d7f5d7}
.match-violation{background:#fde2b8}
.mismatch{background:#f8c4c4}
.unknown{background:#e5e7eb}
.legend span{display:inline-block;padding:.1em .6em;margin-right:.5em;border:1px solid #ccc}
table.grid td{min-width:8em;padding:0}
table.grid a{color:inherit;text-decoration:none;display:block;padding:.25em .6em}
table.grid a+a{border-top:1px solid #fff}
table.grid a:hover{text-decoration:underline}
.small{font-size:12px;color:#444}
.kind-lease{color:#b00;font-weight:bold}
.kind-resource{color:#b60;font-weight:bold}
.why{font-size:12px;color:#333;max-width:28em}
.runs a{margin-right:.6em;white-space:nowrap}
code{background:#f6f6f6;padding:0 .2em}
</style></head><body>
<h1>locktorture comparison matrix</h1>
<table>
<tr><th>date</th><td>{{.Date}}</td></tr>
{{with .M.Command}}<tr><th>command</th><td><code>{{.}}</code></td></tr>{{end}}
<tr><th>seeds</th><td>{{.Seeds}}</td></tr>
<tr><th>duration</th><td>{{.M.Duration}} per run; whole matrix {{f1 .M.Elapsed}} s</td></tr>
{{with .M.Servers}}<tr><th>server</th><td>{{join . ", "}}</td></tr>{{end}}
{{with .M.Machine}}<tr><th>machine</th><td>{{.}}</td></tr>{{end}}
{{with .Commit}}<tr><th>commit</th><td><code>{{.}}</code></td></tr>{{end}}
{{with .Shard}}<tr><th>shard</th><td>{{.}}</td></tr>{{end}}
{{with .Versions}}<tr><th>versions</th><td>{{range .}}{{.}}<br>{{end}}</td></tr>{{end}}
</table>
<p><b>{{len .M.Cells}} cells: {{sub (len .M.Cells) (len .Failed)}} match their expectation, {{len .Failed}} do not{{if .Unknown}} ({{.Unknown}} undecided){{end}}{{if .M.Interrupted}}; the matrix was interrupted and {{cells (len .Never)}} never ran{{end}}.</b></p>
<p class="legend"><span class="match-safe">matches: safe</span><span class="match-violation">matches: violation found, as expected</span><span class="mismatch">contradicts the expectation</span><span class="unknown">undecided</span></p>

<h2>Lock × faults</h2>
<table class="grid">
<tr><th>lock</th>{{range .Nemesis}}<th>{{.}}</th>{{end}}</tr>
{{range .Grid}}<tr><th>{{.Label}}</th>{{range .Cols}}{{if .}}<td{{if eq (len .) 1}} class="{{(index . 0).Status}}"{{end}}>{{range .}}<a class="{{.Status}}" href="#cell-{{.Index}}" title="{{.Cell.Name}}: expected {{expect .Cell}}; {{.Cell.PropertiesText}}">{{with .Label}}<span class="small">{{.}}</span><br>{{end}}{{.Cell.Short}} {{match .Cell.Matches}}{{with .Cell.ViolationKind}}<br><span class="{{kindclass .}}">{{.}}</span>{{end}}</a>{{end}}</td>{{else}}<td></td>{{end}}{{end}}</tr>
{{end}}</table>
<p class="small">Each entry: L, runs whose leases overlapped / runs that decided the lease; R, runs that lost an update / runs that decided the resource; ✓ when it matches the expectation of each property; under a violation, which property broke: <span class="kind-lease">lease</span> (two clients held the lock at once) or <span class="kind-resource">resource only</span> (no two leases overlapped; a holder wrote after its validity). Click for the cell's row.</p>

<h2>Cells</h2>
<table>
<tr><th>cell</th><th>lock</th><th>language</th><th>faults</th><th>fencing</th><th>expected</th><th>why (source)</th><th>outcome</th><th>what the runs showed</th><th>trials</th><th>median s to first violation</th><th>acq/s</th><th>p99 ms</th><th>availability during faults</th><th></th><th>runs</th></tr>
{{range .Rows}}{{$c := .Cell}}<tr id="cell-{{.Index}}" class="{{.Status}}">
<td>{{$c.Name}}</td><td>{{$c.Lock}}</td><td>{{$c.Language}}</td><td>{{$c.Nemesis}}</td><td>{{fencing $c.Fencing}}</td><td>{{expect $c}}</td><td class="why">{{$c.Why}}{{with $c.Source}} <span class="small">({{.}})</span>{{end}}</td><td>{{$c.Outcome}}{{with $c.ViolationKind}}<br><span class="{{kindclass .}}">{{.}}</span>{{end}}</td>
<td>{{$c.PropertiesText}}</td><td>{{$c.Power}}</td><td class="num">{{first $c.MedianFirstViolation}}</td><td class="num">{{f1 $c.AcqPerSec}}</td><td class="num">{{f1 $c.P99Acquire}}</td><td class="num">{{avail $c.Availability}}</td><td>{{match $c.Matches}}</td>
<td class="runs">{{range $c.Runs}}<a href="{{report .}}" title="{{runline .}}">seed {{.Seed}}: {{.Outcome}}{{if .Interrupted}} (interrupted){{end}}</a> {{end}}{{with $c.NotRun}}<span class="small">never ran: {{seeds .}}</span>{{end}}</td></tr>
{{end}}</table>

{{rates .M}}
{{scenarios .M}}
<h2>Mismatches</h2>
{{with .Failed}}<ul>{{range .}}<li><b>{{.Name}}</b>: {{mismatch .}}.<ul>{{range .Runs}}<li><a href="{{report .}}">seed {{.Seed}}</a>: {{detail .}}</li>{{end}}</ul></li>{{end}}</ul>
{{else}}<p>None: every cell matches its expectation.</p>{{end}}

<h2>Sources</h2>
{{with .Sources}}<ol>{{range .}}<li>{{.}} <span class="small">— cited by {{join (index $.CitedBy .) ", "}}</span></li>{{end}}</ol>{{else}}<p>None cited.</p>{{end}}
</body></html>
`))
