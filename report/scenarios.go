package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"strings"
)

// Scenario is one scenario of the lock-safety literature and the matrix
// cells that measure it, as results/README.md shows them with their rates.
type Scenario struct {
	// Name says it in a few words, Source cites the literature, Claim
	// says what it says happens.
	Name   string `json:"name"`
	Source string `json:"source"`
	Claim  string `json:"claim"`
	// Rows name the literature table's rows that measure it, When (as
	// theirs) the locks whose cells count ("" for every lock).
	Rows []string `json:"rows,omitempty"`
	When string   `json:"when,omitempty"`
	// Cells are the cells of those rows the matrix ran.
	Cells []string `json:"cells"`
	// Missing says what no cell measures yet, and why.
	Missing string `json:"missing,omitempty"`
}

// scenarioCell is a scenario's cell as the table shows it.
func scenarioCell(m Matrix, name string) string {
	if c, ok := cellNamed(m, name); ok {
		return fmt.Sprintf("%s: %s, expected %s %s", name, cellRate(c), c.Expect, fmtMatch(c.Matches))
	}
	return name + ": not run"
}

// scenariosMarkdown and scenariosHTML render the scenarios section.
func scenariosMarkdown(m Matrix) []byte {
	if len(m.Scenarios) == 0 {
		return nil
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n## The literature's scenarios\n\n")
	p("Each scenario of the lock-safety literature, the cells that measure it and each cell's rate of runs with a violation, with its 95%% interval.\n\n")
	p("| # | scenario | source | the literature says | cells: rate [95%% interval], expected, matches | not measured |\n")
	p("|---:|---|---|---|---|---|\n")
	for i, s := range m.Scenarios {
		cells := make([]string, len(s.Cells))
		for j, c := range s.Cells {
			cells[j] = scenarioCell(m, c)
		}
		p("| %d | %s | %s | %s | %s | %s |\n", i+1, mdCell(s.Name), mdCell(s.Source), mdCell(s.Claim), mdCell(strings.Join(cells, "; ")), mdCell(cmp.Or(s.Missing, "–")))
	}
	return b.Bytes()
}

func scenariosHTML(m Matrix) (template.HTML, error) {
	if len(m.Scenarios) == 0 {
		return "", nil
	}
	type row struct {
		N int
		S Scenario
		C []string
	}
	var rows []row
	for i, s := range m.Scenarios {
		r := row{N: i + 1, S: s}
		for _, c := range s.Cells {
			r.C = append(r.C, scenarioCell(m, c))
		}
		rows = append(rows, r)
	}
	b, err := execute(scenariosTmpl, rows)
	return template.HTML(b), err //nolint:gosec // rendered by html/template
}

var scenariosTmpl = template.Must(template.New("scenarios").Parse(`<h2>The literature's scenarios</h2>
<table>
<tr><th>#</th><th>scenario</th><th>source</th><th>the literature says</th><th>cells: rate [95% interval], expected, matches</th><th>not measured</th></tr>
{{range .}}<tr><td class="num">{{.N}}</td><td>{{.S.Name}}</td><td class="small">{{.S.Source}}</td><td>{{.S.Claim}}</td><td>{{range .C}}{{.}}<br>{{end}}</td><td class="small">{{.S.Missing}}</td></tr>
{{end}}</table>
`))
