package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"sort"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
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
}

// WriteHTML writes report.html to path: the summary of r; as inline SVG
// the timeline of holds per client (TimelineSVG) and the throughput and
// latency over time (ThroughputSVG, LatencySVG), all with the faults of
// r.Check.Stats.FaultWindows as bands; the table of faults; and
// porcupine's visualization of each failing key (lease, then resource),
// or of one sample key when everything is valid. The page has no
// external assets and needs no script but porcupine's own.
func WriteHTML(path string, r Results, events []history.Event, opts checker.Options) error {
	cfg, err := json.MarshalIndent(r.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("report: config: %w", err)
	}
	p := page{R: r, Config: string(cfg)}
	if svg, err := TimelineSVG(events, r.Check); err != nil {
		p.Errors = append(p.Errors, err.Error())
	} else {
		p.Timeline = template.HTML(svg) // every text in it is escaped
	}
	p.Throughput = template.HTML(ThroughputSVG(events, r.Check))
	p.Latency = template.HTML(LatencySVG(events, r.Check))
	type target struct{ key, which string }
	var targets []target
	for _, k := range r.Check.LeaseFailedKeys {
		targets = append(targets, target{k, "lease"})
	}
	for _, k := range r.Check.ResourceFailedKeys {
		targets = append(targets, target{k, "resource"})
	}
	if len(targets) == 0 {
		if k := sampleKey(events); k != "" {
			targets = []target{{k, "lease"}, {k, "resource"}}
		}
	}
	if len(targets) > maxVisualized {
		p.Errors = append(p.Errors, fmt.Sprintf("%d visualizations left out; showing the first %d", len(targets)-maxVisualized, maxVisualized))
		targets = targets[:maxVisualized]
	}
	for _, t := range targets {
		var buf bytes.Buffer
		if err := checker.Visualize(&buf, events, t.key, t.which, opts); err != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("visualize %s %s: %v", t.which, t.key, err))
			continue
		}
		p.Visuals = append(p.Visuals, visual{Title: fmt.Sprintf("%s model, key %s", t.which, t.key), Doc: buf.String()})
	}
	var out bytes.Buffer
	if err := pageTmpl.Execute(&out, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// sampleKey returns the key with the most events, for the visualization
// of an all-valid run.
func sampleKey(events []history.Event) string {
	n := map[string]int{}
	for _, e := range events {
		if e.Key != "" {
			n[e.Key]++
		}
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if n[keys[i]] != n[keys[j]] {
			return n[keys[i]] > n[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur":   dur,
	"gap":   gap,
	"avail": availability,
	"secs":  func(t int64) string { return fmt.Sprintf("%.3f", float64(t)/1e9) },
	"inc":   func(i int) int { return i + 1 },
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"f1":    func(f float64) string { return fmt.Sprintf("%.1f", f) },
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
</style></head><body>
<h1>locktorture run {{.R.RunID}}</h1>
<table>
<tr><th>lease safety</th><td class="{{.R.Lease}}">{{.R.Lease}}{{with .R.Check.LeaseReason}} — {{.}}{{end}}</td></tr>
<tr><th>resource safety</th><td class="{{.R.Resource}}">{{.R.Resource}}{{with .R.Check.ResourceReason}} — {{.}}{{end}}</td></tr>
<tr><th>seed</th><td>{{.R.Seed}}</td></tr>
<tr><th>redis</th><td>{{.R.RedisVersion}}</td></tr>
<tr><th>elapsed</th><td>{{f1 .R.Elapsed}} s{{if .R.Interrupted}} (interrupted){{end}}</td></tr>
{{with .R.Check.Stats}}
<tr><th>acquisitions</th><td>{{.AcquireOK}} ok of {{.AcquireCompleted}} ({{pct .SuccessRatio}}), {{f1 .AcquisitionsPerSecond}}/s</td></tr>
<tr><th>acquire latency</th><td>p50 {{dur .AcquireLatency.P50}}, p99 {{dur .AcquireLatency.P99}}, max {{dur .AcquireLatency.Max}}</td></tr>
<tr><th>longest stretch free but unacquired</th><td>{{with .LongestGap}}{{gap .}}{{else}}none{{end}}</td></tr>
<tr><th>availability during faults</th><td>{{avail .}}</td></tr>
{{end}}
</table>
{{with .Timeline}}<h2>Holds per client</h2>
<p class="note">One row per client, one bar per hold (from the acquire's ok to the release or the end of the validity), coloured by key; red: holds that overlap another hold of their key. Shaded: faults, numbered as in the table below. Hover for details.</p>
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
{{with .R.Check.LeaseViolations}}<h2>Overlapping holds</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .R.Check.FenceViolations}}<h2>Fencing tokens out of order</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .R.Check.ResourceFailedKeys}}<h2>Lost updates</h2><p>keys: {{range .}}{{.}} {{end}}</p>{{end}}
{{range .Errors}}<p class="bug">{{.}}</p>{{end}}
{{range .Visuals}}<h2>{{.Title}}</h2><iframe sandbox="allow-scripts" srcdoc="{{.Doc}}"></iframe>{{end}}
<h2>Configuration</h2><pre>{{.Config}}</pre>
{{with .R.Command}}<p>command: <code>{{.}}</code></p>{{end}}
</body></html>
`))
