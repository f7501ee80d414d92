package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/internal/safefs"
)

// TrendNight is one bundle of a trend.
type TrendNight struct {
	Dir      string            `json:"dir"`
	Started  time.Time         `json:"started"`
	Commit   string            `json:"commit,omitempty"`
	Seeds    []int64           `json:"seeds"`
	Versions map[string]string `json:"versions"`
}

// TrendCell is one cell's rate per night (Runs 0: none decided); Moved[i]:
// night i's rate lies outside night i−1's interval.
type TrendCell struct {
	Name  string `json:"name"`
	Rates []Rate `json:"rates"`
	Moved []bool `json:"moved"`
}

// Move is a cell whose rate lies outside the night before's interval.
type Move struct {
	Cell     string `json:"cell"`
	Prev     Rate   `json:"prev"`
	Last     Rate   `json:"last"`
	PrevDir  string `json:"prev_dir"`
	LastDir  string `json:"last_dir"`
	LastPair bool   `json:"last_pair"` // between the last two nights
}

func (m Move) String() string {
	return fmt.Sprintf("%s: the violation rate %s from %s in %s to %s in %s, outside the earlier interval",
		m.Cell, pick(m.Last.Rate < m.Prev.Rate, "fell", "rose"), m.Prev, m.PrevDir, m.Last, m.LastDir)
}

// VersionChange is a module whose version changed ("": absent).
type VersionChange struct {
	Module   string `json:"module"`
	From, To string
	Night    int `json:"night"` // the index of the later night
}

// Trend is a matrix's trend over its nightly bundles, oldest first: each
// cell's rate, the modules' versions, and the moves.
type Trend struct {
	Nights  []TrendNight    `json:"nights"`
	Cells   []TrendCell     `json:"cells"`
	Moves   []Move          `json:"moves"`
	Changes []VersionChange `json:"version_changes"`
}

// Regressions returns the moves between the last two nights.
func (t Trend) Regressions() []Move {
	var out []Move
	for _, m := range t.Moves {
		if m.LastPair {
			out = append(out, m)
		}
	}
	return out
}

// ReadTrend reads the summary.json of at least two bundles: NewTrend.
func ReadTrend(dirs []string) (Trend, error) {
	if len(dirs) < 2 {
		return Trend{}, errors.New("trend: want at least two bundles to compare")
	}
	var ms []Matrix
	for _, d := range dirs {
		m, err := ReadMatrix(d)
		if err != nil {
			return Trend{}, fmt.Errorf("trend: %s: %w", d, err)
		}
		if err := checkRates(m); err != nil {
			return Trend{}, fmt.Errorf("trend: %s: %w", d, err)
		}
		ms = append(ms, m)
	}
	return NewTrend(dirs, ms), nil
}

// checkRates refuses a bundle whose rates are not NewRate of 0 to Runs
// violations: negative counts or a rate of 1e308 flagged or hid regressions.
func checkRates(m Matrix) error {
	for _, c := range m.Cells {
		r := c.Rate
		if r == nil {
			continue
		}
		want := NewRate(r.Violations, r.Runs)
		switch {
		case r.Runs < 0:
			return fmt.Errorf("cell %s: %d decided runs", Printable(c.Name), r.Runs)
		case r.Violations < 0 || r.Violations > r.Runs:
			return fmt.Errorf("cell %s: %d violations in %d runs: want from 0 to the runs", Printable(c.Name), r.Violations, r.Runs)
		case !near(r.Rate, want.Rate) || !near(r.Low, want.Low) || !near(r.High, want.High):
			return fmt.Errorf("cell %s: rate %g [%g, %g] does not follow from %d violations in %d runs (%s)", Printable(c.Name), r.Rate, r.Low, r.High, r.Violations, r.Runs, want)
		}
	}
	return nil
}

// near reports whether a is b but for rounding (false for NaN).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// NewTrend builds the trend of ms, read from dirs, by Started.
func NewTrend(dirs []string, ms []Matrix) Trend {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return ms[a].Started.Compare(ms[b].Started) })
	var t Trend
	rates := map[string][]Rate{}
	var names []string
	for n, i := range idx {
		m := ms[i]
		t.Nights = append(t.Nights, TrendNight{Dir: dirs[i], Started: m.Started, Commit: m.Commit, Seeds: m.Seeds, Versions: m.Versions})
		for _, c := range m.Cells {
			r, ok := rates[c.Name]
			if !ok {
				names = append(names, c.Name)
				r = make([]Rate, len(ms))
			}
			if c.Rate != nil {
				r[n] = *c.Rate
			}
			rates[c.Name] = r
		}
	}
	for _, name := range names {
		c := TrendCell{Name: name, Rates: rates[name], Moved: make([]bool, len(ms))}
		for n := 1; n < len(ms); n++ {
			prev, last := c.Rates[n-1], c.Rates[n]
			if prev.Runs == 0 || last.Runs == 0 || (last.Rate >= prev.Low && last.Rate <= prev.High) {
				continue
			}
			c.Moved[n] = true
			t.Moves = append(t.Moves, Move{Cell: name, Prev: prev, Last: last, PrevDir: t.Nights[n-1].Dir, LastDir: t.Nights[n].Dir, LastPair: n == len(ms)-1})
		}
		t.Cells = append(t.Cells, c)
	}
	for n := 1; n < len(t.Nights); n++ {
		a, b := t.Nights[n-1].Versions, t.Nights[n].Versions
		for _, k := range modules(t.Nights[n-1 : n+1]) {
			if a[k] != b[k] {
				t.Changes = append(t.Changes, VersionChange{Module: k, From: a[k], To: b[k], Night: n})
			}
		}
	}
	return t
}

func rateCell(r Rate) string { return pick(r.Runs == 0, "–", r.String()) }

// nightLabel is a night's column heading: its start, its folder's name.
func nightLabel(n TrendNight) string {
	return n.Started.UTC().Format("2006-01-02 15:04") + " (" + filepath.Base(n.Dir) + ")"
}

// Markdown is the trend as a markdown page.
func (t Trend) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Matrix trend over %d nights\n\n", len(t.Nights))
	b.WriteString("Each cell's violation rate per night: violations/decided runs = rate [95% Wilson interval]. ")
	b.WriteString("⚠ marks a rate outside the interval of the night before.\n\n")
	b.WriteString("| night | bundle | commit | seeds |\n|---|---|---|---|\n")
	for _, n := range t.Nights {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %d |\n", n.Started.UTC().Format(time.RFC3339), mdEscape(n.Dir), mdEscape(shortCommit(n.Commit)), len(n.Seeds))
	}
	b.WriteString("\n## Versions\n\n")
	b.WriteString(versionsMarkdown(t))
	b.WriteString("\n## Moved\n\n")
	if len(t.Moves) == 0 {
		b.WriteString("No cell's rate left the interval of the night before.\n")
	}
	for _, m := range t.Moves {
		fmt.Fprintf(&b, "- ⚠ %s\n", mdEscape(m.String()))
	}
	b.WriteString("\n## Cells\n\n")
	nightsHeader(&b, "cell", t.Nights)
	for _, c := range t.Cells {
		fmt.Fprintf(&b, "| %s |", mdEscape(c.Name))
		for i, r := range c.Rates {
			mark := ""
			if c.Moved[i] {
				mark = " ⚠"
			}
			fmt.Fprintf(&b, " %s%s |", rateCell(r), mark)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// nightsHeader writes the header of a table with a column per night.
func nightsHeader(b io.Writer, first string, nights []TrendNight) {
	fmt.Fprintf(b, "| %s |", first)
	for _, n := range nights {
		fmt.Fprintf(b, " %s |", mdEscape(nightLabel(n)))
	}
	fmt.Fprint(b, "\n|---|"+strings.Repeat("---|", len(nights))+"\n")
}

// versionsMarkdown tables each module's version per night.
func versionsMarkdown(t Trend) string {
	mods := modules(t.Nights)
	if len(mods) == 0 {
		return "The bundles record no versions.\n"
	}
	var b strings.Builder
	nightsHeader(&b, "module", t.Nights)
	for _, m := range mods {
		fmt.Fprintf(&b, "| %s |", mdEscape(m))
		for i := range t.Nights {
			v := versionOf(t, i, m)
			if changed(t, i, m) {
				v = "**" + v + "** (changed)"
			}
			fmt.Fprintf(&b, " %s |", mdEscape(v))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// modules are the modules any of nights records, sorted.
func modules(nights []TrendNight) []string {
	seen := map[string]bool{}
	for _, n := range nights {
		for m := range n.Versions {
			seen[m] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// versionOf is module m's version on night i, "–" for none.
func versionOf(t Trend, i int, m string) string { return cmp.Or(t.Nights[i].Versions[m], "–") }

// changed reports whether module m's version changed on night i.
func changed(t Trend, i int, m string) bool {
	return i > 0 && t.Nights[i].Versions[m] != t.Nights[i-1].Versions[m]
}

func shortCommit(c string) string { return cmp.Or(c[:min(len(c), 12)], "unknown") }

// mdEscape keeps a value inside its table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'", "<", "&lt;", ">", "&gt;").Replace(Printable(s))
}

var trendTemplate = template.Must(template.New("trend").Funcs(template.FuncMap{
	"rate":    rateCell,
	"label":   nightLabel,
	"short":   shortCommit,
	"version": versionOf,
	"changed": changed,
	"modules": func(t Trend) []string { return modules(t.Nights) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Matrix trend</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;white-space:nowrap}td.moved{background:#fdd;font-weight:bold}td.changed{background:#ffd;font-weight:bold}</style>
</head><body>
<h1>Matrix trend over {{len .Nights}} nights</h1>
<p>Each cell's violation rate per night: violations/decided runs = rate [95% Wilson interval]. A red cell's rate lies outside the interval of the night before; a yellow version changed since the night before.</p>
<table><tr><th>night</th><th>bundle</th><th>commit</th><th>seeds</th></tr>
{{range .Nights}}<tr><td>{{.Started.UTC.Format "2006-01-02 15:04 MST"}}</td><td>{{.Dir}}</td><td>{{short .Commit}}</td><td>{{len .Seeds}}</td></tr>
{{end}}</table>
<h2>Versions</h2>
{{$t := .}}{{with modules .}}<table><tr><th>module</th>{{range $t.Nights}}<th>{{label .}}</th>{{end}}</tr>
{{range $m := .}}<tr><td>{{$m}}</td>{{range $i, $n := $t.Nights}}<td{{if changed $t $i $m}} class="changed"{{end}}>{{version $t $i $m}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>The bundles record no versions.</p>{{end}}
<h2>Moved</h2>
{{with .Moves}}<ul>{{range .}}<li>{{.String}}</li>{{end}}</ul>{{else}}<p>No cell's rate left the interval of the night before.</p>{{end}}
<h2>Cells</h2>
<table><tr><th>cell</th>{{range .Nights}}<th>{{label .}}</th>{{end}}</tr>
{{range .Cells}}{{$c := .}}<tr><td>{{.Name}}</td>{{range $i, $r := .Rates}}<td{{if index $c.Moved $i}} class="moved"{{end}}>{{rate $r}}</td>{{end}}</tr>
{{end}}</table>
</body></html>
`))

// HTML is the trend as an HTML page.
func (t Trend) HTML() ([]byte, error) { return execute(trendTemplate, t) }

func execute(tmpl *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Trend page names, in the directory WriteTrend writes to.
const (
	TrendHTML     = "trend.html"
	TrendMarkdown = "trend.md"
)

// WriteTrend writes the trend's pages, trend.html and trend.md, into dir.
func WriteTrend(dir string, t Trend) error {
	page, err := t.HTML()
	if err != nil {
		return err
	}
	if err := safefs.WriteFile(filepath.Join(dir, TrendHTML), page, 0o644); err != nil {
		return err
	}
	return safefs.WriteFile(filepath.Join(dir, TrendMarkdown), t.Markdown(), 0o644)
}
