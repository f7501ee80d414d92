package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
)

// cellBand is the cell's band, DefaultBand in an older summary.
func cellBand(c Cell) Band {
	if c.Band != nil {
		return *c.Band
	}
	return DefaultBand(c.Expect)
}

// cellRate is the cell's rate, from its counts in an older summary.
func cellRate(c Cell) Rate {
	if c.Rate != nil {
		return *c.Rate
	}
	return NewRate(c.RunsWithViolation, len(c.Runs)-c.Unknown)
}

// contradictedBy says which outcomes would contradict the cell.
func contradictedBy(c Cell) string {
	return cmp.Or(c.ContradictedBy, cellBand(c).ContradictingText(len(c.Runs)))
}

const ratesIntro = "Each cell's outcome as a rate: the runs with a violation of the runs the checker decided, " +
	"with its 95% Wilson interval. The expectation is a band of rates — safe: 0; violation: at least the least rate, for the reason given; " +
	"possible: any. A cell contradicts its expectation when the interval lies wholly outside the band, or when it expects a violation " +
	"and no run showed one (so one seed, the release gate's, is judged by its run's outcome). " +
	"The last column says which counts of violations, out of the cell's runs, would have contradicted it."

// ratesMarkdown and ratesHTML render the rates section.
func ratesMarkdown(m Matrix) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n## Rates\n\n%s\n\n", ratesIntro)
	p("| cell | expected | band | why this band | rate [95%% interval] | would contradict | matches |\n")
	p("|---|---|---|---|---|---|:---:|\n")
	for _, c := range m.Cells {
		band := cellBand(c)
		p("| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(c.Name), mdCell(string(c.Expect)), mdCell(band.String()), mdCell(band.Why),
			mdCell(cellRate(c).String()), mdCell(contradictedBy(c)), fmtMatch(c.Matches))
	}
	return b.Bytes()
}

func ratesHTML(m Matrix) (template.HTML, error) {
	rows := make([]gridEntry, len(m.Cells))
	for i, c := range m.Cells {
		rows[i] = gridEntry{Index: i, Cell: c, Status: cellStatus(c)}
	}
	b, err := execute(ratesTmpl, struct {
		Intro string
		Rows  []gridEntry
	}{ratesIntro, rows})
	return template.HTML(b), err //nolint:gosec // rendered by html/template
}

var ratesTmpl = template.Must(template.New("rates").Funcs(template.FuncMap{
	"band":  cellBand,
	"rate":  cellRate,
	"by":    contradictedBy,
	"match": fmtMatch,
}).Parse(`<h2>Rates</h2>
<p>{{.Intro}}</p>
<table>
<tr><th>cell</th><th>expected</th><th>band</th><th>why this band</th><th>rate [95% interval]</th><th>would contradict</th><th></th></tr>
{{range .Rows}}{{$b := band .Cell}}<tr class="{{.Status}}"><td><a href="#cell-{{.Index}}">{{.Cell.Name}}</a></td><td>{{.Cell.Expect}}</td><td>{{$b}}</td><td class="small">{{$b.Why}}</td><td class="num">{{rate .Cell}}</td><td>{{by .Cell}}</td><td>{{match .Cell.Matches}}</td></tr>
{{end}}</table>
`))
