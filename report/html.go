package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/internal/safefs"
)

// maxVisualized bounds how many keys get a porcupine visualization, so a
// report of a run with many failing keys stays small enough to open.
const maxVisualized = 4

type visual struct {
	Title string
	Doc   string // a whole HTML document, embedded with iframe srcdoc
}

type page struct {
	R       Results
	Config  string
	Visuals []visual
	Errors  []string
	// Inline SVGs, generated here with every text escaped.
	Timeline, Throughput, Latency template.HTML
	// Kind says in words which property broke.
	Kind string
	// Overlaps is the table of overlapping leases, at most maxTableRows;
	// OverlapsMore how many more there are.
	Overlaps     []overlapRow
	OverlapsMore int
	// Lost are the lost updates, one a key, explained.
	Lost []explain.Explanation
	// Explanations are the causes, at most explain.DefaultLimit; More
	// how many more violations there are.
	Explanations []explain.Explanation
	More         int
	Evidence     string
}

// overlapRow is one row of the overlaps table: times relative to the run's
// start in ms, short tokens, the granting nodes, the fault and the cause.
type overlapRow struct {
	Key                string
	From, To           string // ms
	A, B               string // "P3 4be0c1…"
	NodesA, NodesB     string
	Fault, Cause, Text string
}

// maxTableRows caps the overlaps table.
const maxTableRows = 50

// millis formats t (ns from the run's start) as milliseconds.
func millis(t int64) string { return fmt.Sprintf("%.1f", float64(t)/1e6) }

// WriteHTML writes report.html to path from the run's analysis a (one
// pass over its history): the summary of r; in words, which property
// broke (two leases held at once, or only the resource: an update lost
// while no two leases overlapped); the cause of each violation (package
// explain), the overlapping leases as a table (relative ms, short tokens,
// the granting nodes, the fault, the cause), capped with a count; as
// inline SVG the timeline of holds per client (Timeline) and the
// throughput and latency over time (Throughput, Latency), all with the
// faults of r.Check.Stats.FaultWindows as bands; the table of faults; and
// porcupine's visualization of each failing key (lease, then resource), or
// of the busiest key when everything is valid. The page has no external
// assets and needs no script but porcupine's own.
func WriteHTML(path string, r Results, a *checker.Analysis, opts checker.Options) error {
	cfg, err := json.MarshalIndent(r.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("report: config: %w", err)
	}
	p := page{R: r, Config: string(cfg)}
	p.Timeline = template.HTML(Timeline(a)) // every text in it is escaped
	p.Throughput = template.HTML(Throughput(a))
	p.Latency = template.HTML(Latency(a))
	p.Kind = kind(r.Check)
	explainInto(&p, a)
	type target struct{ key, which string }
	var targets []target
	for _, k := range r.Check.LeaseFailedKeys {
		targets = append(targets, target{k, "lease"})
	}
	for _, k := range r.Check.ResourceFailedKeys {
		targets = append(targets, target{k, "resource"})
	}
	if len(targets) == 0 {
		if k := a.BusiestKey(); k != "" {
			targets = []target{{k, "lease"}, {k, "resource"}}
		}
	}
	if len(targets) > maxVisualized {
		p.Errors = append(p.Errors, fmt.Sprintf("%d visualizations left out; showing the first %d", len(targets)-maxVisualized, maxVisualized))
		targets = targets[:maxVisualized]
	}
	for _, t := range targets {
		var buf bytes.Buffer
		if err := a.Visualize(&buf, t.key, t.which, opts); err != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("visualize %s %s: %v", t.which, t.key, err))
			continue
		}
		p.Visuals = append(p.Visuals, visual{Title: fmt.Sprintf("%s model, key %s", t.which, t.key), Doc: buf.String()})
	}
	var out bytes.Buffer
	if err := pageTmpl.Execute(&out, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := safefs.WriteFile(path, out.Bytes(), 0o600); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// kind says in words which property broke: a lease violation (two
// clients held the lock at once) or a resource-only one (the leases never
// overlapped; a holder wrote after its validity); "" when neither.
func kind(res checker.Result) string {
	switch {
	case res.Lease == checker.Invalid && res.Resource == checker.Invalid:
		return "Lease violation: two clients held the lock at once, and an update was lost."
	case res.Lease == checker.Invalid:
		return "Lease violation: two clients held the lock at once."
	case res.Resource == checker.Invalid:
		return "Resource-only violation: no two leases overlapped, but an update was lost — a holder wrote after its lease had ended."
	}
	return ""
}

// explainInto fills the explanations, the overlaps table and the lost
// updates of p from a.
func explainInto(p *page, a *checker.Analysis) {
	ex, total := explain.Explain(a, explain.DefaultLimit)
	p.Explanations, p.More = ex, total-len(ex)
	switch {
	case a.Reported && a.Observed:
		p.Evidence = "per-node evidence and node observations"
	case a.Reported:
		p.Evidence = "per-node evidence, no node observations"
	case a.Observed:
		p.Evidence = "node observations, no per-node evidence"
	default:
		p.Evidence = "no per-node evidence and no node observations"
	}
	byAt := map[[2]string]explain.Explanation{} // key, At → the lease explanation
	for _, e := range ex {
		if e.Property == "lease" {
			byAt[[2]string{e.Key, fmt.Sprint(e.At)}] = e
		}
	}
	ovs := a.Result.LeaseViolations
	p.OverlapsMore = a.Result.LeaseViolationCount - min(len(ovs), maxTableRows)
	for _, ov := range ovs[:min(len(ovs), maxTableRows)] {
		row := overlapRow{Key: ov.Key, From: millis(ov.Start), To: millis(ov.End),
			A: fmt.Sprintf("P%d %s", ov.A.Process, explain.Short(ov.A.Token)), B: fmt.Sprintf("P%d %s", ov.B.Process, explain.Short(ov.B.Token))}
		if l, ok := a.LeaseAt(ov.Key, ov.A.Token, ov.A.Start); ok {
			row.NodesA = nodeNames(l.Granted)
		}
		if l, ok := a.LeaseAt(ov.Key, ov.B.Token, ov.B.Start); ok {
			row.NodesB = nodeNames(l.Granted)
		}
		if e, ok := byAt[[2]string{ov.Key, fmt.Sprint(ov.Start)}]; ok {
			row.Cause, row.Text = string(e.Cause), e.Text
			if e.Fault > 0 {
				w := a.Result.Stats.FaultWindows[e.Fault-1]
				row.Fault = fmt.Sprintf("#%d %s", e.Fault, w.Desc)
			}
		}
		p.Overlaps = append(p.Overlaps, row)
	}
	for _, e := range ex {
		if e.Property == "resource" {
			p.Lost = append(p.Lost, e)
		}
	}
}

func nodeNames(ns []int) string {
	if ns == nil {
		return "not reported"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = explain.NodeName(n)
	}
	return strings.Join(s, " ")
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur":        dur,
	"gap":        gap,
	"avail":      availability,
	"secs":       func(t int64) string { return fmt.Sprintf("%.3f", float64(t)/1e9) },
	"inc":        func(i int) int { return i + 1 },
	"pct":        func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"f1":         func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"healthText": HealthText,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>locktorture {{.R.RunID}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
.valid{background:#d7f5d7}.invalid{background:#f8d0d0}.unknown{background:#f5ecc0}
pre{background:#f6f6f6;padding:.6em;overflow:auto}
svg{max-width:100%;height:auto;display:block;margin:.3em 0 1em}
.note{color:#555;font-size:13px}
td.num{text-align:right;font-variant-numeric:tabular-nums}
iframe{width:100%;height:520px;border:1px solid #ccc}
.bug{color:#a00;font-weight:bold}
.kind-lease{border-left:6px solid #c00;background:#fbe3e3;padding:.4em .8em}
.kind-resource{border-left:6px solid #d80;background:#fdf0d8;padding:.4em .8em}
.cause{font-weight:bold}
</style></head><body>
<h1>locktorture run {{.R.RunID}}</h1>
{{with .Kind}}<p class="{{if eq $.R.Lease "invalid"}}kind-lease{{else}}kind-resource{{end}}">{{.}}</p>{{end}}
<table>
<tr><th>lease safety</th><td class="{{.R.Lease}}">{{.R.Lease}}{{with .R.Check.LeaseReason}} — {{.}}{{end}}</td></tr>
<tr><th>resource safety</th><td class="{{.R.Resource}}">{{.R.Resource}}{{with .R.Check.ResourceReason}} — {{.}}{{end}}</td></tr>
<tr><th>seed</th><td>{{.R.Seed}}</td></tr>
<tr><th>redis</th><td>{{.R.RedisVersion}}</td></tr>
<tr><th>elapsed</th><td>{{f1 .R.Elapsed}} s{{if .R.Interrupted}} (interrupted){{end}}</td></tr>
<tr><th>trials</th><td>{{.R.Trials.Text}}</td></tr>
<tr><th>machine health</th><td{{if not .R.Health.Healthy}} class="unknown"{{end}}>{{healthText .R.Health}}</td></tr>
{{with .R.Check.Stats}}
<tr><th>acquisitions</th><td>{{.AcquireOK}} ok of {{.AcquireCompleted}} ({{pct .SuccessRatio}}), {{f1 .AcquisitionsPerSecond}}/s</td></tr>
<tr><th>acquire latency</th><td>p50 {{dur .AcquireLatency.P50}}, p99 {{dur .AcquireLatency.P99}}, max {{dur .AcquireLatency.Max}}</td></tr>
<tr><th>longest stretch free but unacquired</th><td>{{with .LongestGap}}{{gap .}}{{else}}none{{end}}</td></tr>
<tr><th>availability during faults</th><td>{{avail .}}</td></tr>
{{end}}
</table>
{{with .Timeline}}<h2>Holds per client</h2>
<p class="note">One row per client, one bar per hold (from the acquire's ok to the release or the end of the validity), coloured by key; red: holds that overlap another hold of their key; dashed red ending in a dot: a late write, from the end of the lease's validity to a write that lost an update (a stalled holder). Shaded: faults, numbered as in the table below. Hover for details.</p>
{{.}}{{end}}
<h2>Throughput</h2>
{{.Throughput}}
<h2>Acquire latency</h2>
{{.Latency}}
{{with .R.Check.Stats.FaultWindows}}<h2>Faults</h2>
<table><tr><th>#</th><th>from (s)</th><th>to (s)</th><th>fault</th></tr>
{{range $i, $w := .}}<tr><td class="num">{{inc $i}}</td><td class="num">{{secs $w.Start}}</td><td class="num">{{secs $w.End}}{{if $w.UntilEnd}} (never stopped){{end}}</td><td>{{$w.Desc}}</td></tr>
{{end}}</table>{{end}}
{{if .R.Check.Disagreement}}<p class="bug">Checker bug: porcupine and the sweep disagree: {{.R.Check.Disagreement}}</p>{{end}}
{{with .Explanations}}<h2>Why: the cause of each violation</h2>
<p class="note">From the history alone ({{$.Evidence}}); times in seconds from the start of the run, nodes as in schedule.json. <code>torture explain</code> prints the same.</p>
<ol>{{range .}}<li><span class="cause">{{.Property}} violation on {{.Key}}: {{.Cause}}</span> — {{.Text}}</li>{{end}}</ol>
{{if $.More}}<p class="note">{{$.More}} more violations not explained here.</p>{{end}}{{end}}
{{with .Overlaps}}<h2>Overlapping leases</h2>
<p class="note">Each row: a lease (B) granted while another (A) was still valid; times in ms from the start of the run.</p>
<table><tr><th>key</th><th>from (ms)</th><th>to (ms)</th><th>A (held)</th><th>granted by</th><th>B (acquired)</th><th>granted by</th><th>fault</th><th>cause</th></tr>
{{range .}}<tr><td>{{.Key}}</td><td class="num">{{.From}}</td><td class="num">{{.To}}</td><td>{{.A}}</td><td>{{.NodesA}}</td><td>{{.B}}</td><td>{{.NodesB}}</td><td>{{.Fault}}</td><td title="{{.Text}}">{{.Cause}}</td></tr>
{{end}}</table>{{if $.OverlapsMore}}<p class="note">{{$.OverlapsMore}} more overlaps not listed.</p>{{end}}{{end}}
{{with .R.Check.ResourceFailedKeys}}<h2>Lost updates</h2><p>keys: {{range .}}{{.}} {{end}}</p>
{{with $.Lost}}<ul>{{range .}}<li><span class="cause">{{.Cause}}</span> — {{.Text}}</li>{{end}}</ul>{{end}}{{end}}
{{with .R.Check.FenceViolations}}<h2>Fencing tokens out of order</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Errors}}<p class="bug">{{.}}</p>{{end}}
{{range .Visuals}}<h2>{{.Title}}</h2><iframe sandbox="allow-scripts" srcdoc="{{.Doc}}"></iframe>{{end}}
<h2>Configuration</h2><pre>{{.Config}}</pre>
{{with .R.Command}}<p>command: <code>{{.}}</code></p>{{end}}
</body></html>
`))
