package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/internal/safefs"
)

// maxVisualized bounds the keys visualized, so a report of many failing
// keys stays small enough to open; maxTableRows caps the overlaps table.
const (
	maxVisualized = 4
	maxTableRows  = 50
)

type visual struct {
	Title string
	Doc   string // a whole HTML document, embedded with iframe srcdoc
}

type page struct {
	R       Results
	Config  string
	Visuals []visual
	Errors  []string
	// Inline SVGs, every text in them escaped.
	Timeline, Throughput, Latency template.HTML
	// Kind says in words which property broke.
	Kind string
	// Overlaps has a row per fault step and cause, OverlapsMore counts
	// the overlaps beyond maxTableRows; Lost are the lost updates'
	// findings.
	Overlaps     []overlapRow
	OverlapsMore int
	Lost         []explain.Finding
	// Findings are at most explain.DefaultLimit, More counts the rest,
	// Unlisted the violations the checker counted but did not list.
	Findings []explain.Finding
	More     int
	Unlisted int
	Evidence string
}

// overlapRow is the overlaps one fault step and cause made, from the
// first's start to the last's end; the first's holds and granting nodes.
type overlapRow struct {
	Key                string
	Count              int
	From, To           string // "2.556 s"
	A, B               string // "P3 4be0c1…"
	NodesA, NodesB     string
	Fault, Cause, Text string
}

// WriteHTML writes report.html (see the package doc) to path from the
// run's analysis a.
func WriteHTML(path string, r Results, a *checker.Analysis, opts checker.Options) error {
	cfg, err := json.MarshalIndent(r.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("report: config: %w", err)
	}
	p := page{R: r, Config: string(cfg), Kind: kind(r.Check),
		Timeline: template.HTML(Timeline(a)), Throughput: template.HTML(Throughput(a)), Latency: template.HTML(Latency(a))}
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
	out, err := execute(pageTmpl, p)
	if err == nil {
		err = safefs.WriteFile(path, out, 0o600)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// kind says in words which property broke, "" when neither.
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

// explainInto fills p's findings, overlaps and lost updates from a, by
// fault step and cause: one fault that made 49 overlaps is one row.
func explainInto(p *page, a *checker.Analysis) {
	ex, total := explain.Explain(a, math.MaxInt)
	found := explain.Group(ex)
	p.Findings, p.More, p.Unlisted = found[:min(len(found), explain.DefaultLimit)], max(len(found)-explain.DefaultLimit, 0), total-len(ex)
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
	// Explain lists the lease overlaps first, in the checker's order: the
	// i-th explanation is the i-th overlap's.
	ovs := a.Result.LeaseViolations
	row := map[[2]string]int{} // fault, cause → index in p.Overlaps
	var ends []int64
	for i, ov := range ovs {
		var e explain.Explanation
		if i < len(ex) && ex[i].Property == "lease" {
			e = ex[i]
		}
		k := [2]string{fmt.Sprint(e.Fault), string(e.Cause)}
		if j, ok := row[k]; ok {
			r := &p.Overlaps[j]
			r.Count++
			if !strings.Contains(" "+r.Key+",", " "+ov.Key+",") {
				r.Key += ", " + ov.Key
			}
			ends[j] = max(ends[j], ov.End)
			r.To = explain.Secs(ends[j])
			continue
		}
		if len(p.Overlaps) == maxTableRows {
			p.OverlapsMore++
			continue
		}
		r := overlapRow{Key: ov.Key, Count: 1, From: explain.Secs(ov.Start), To: explain.Secs(ov.End),
			A: fmt.Sprintf("P%d %s", ov.A.Process, explain.Short(ov.A.Token)), B: fmt.Sprintf("P%d %s", ov.B.Process, explain.Short(ov.B.Token))}
		if l, ok := a.LeaseAt(ov.Key, ov.A.Token, ov.A.Start); ok {
			r.NodesA = nodeNames(l.Granted)
		}
		if l, ok := a.LeaseAt(ov.Key, ov.B.Token, ov.B.Start); ok {
			r.NodesB = nodeNames(l.Granted)
		}
		r.Cause, r.Text = string(e.Cause), e.Text
		if e.Fault > 0 {
			w := a.Result.Stats.FaultWindows[e.Fault-1]
			r.Fault = fmt.Sprintf("#%d %s", e.Fault, w.Desc)
		}
		row[k] = len(p.Overlaps)
		ends = append(ends, ov.End)
		p.Overlaps = append(p.Overlaps, r)
	}
	p.OverlapsMore += a.Result.LeaseViolationCount - len(ovs)
	for _, f := range found {
		if f.Property == "resource" {
			p.Lost = append(p.Lost, f)
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
	"noun":       explain.Noun,
	"fence":      explain.FenceOrder,
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
{{with .R.Check}}{{if .Answers}}<tr><th>answers</th><td class="{{.Answers}}">{{.Answers}}{{with .AnswersReason}} — {{.}}{{end}}</td></tr>{{end}}
{{if .Starvation}}<tr><th>starvation</th><td class="{{.Starvation}}">{{.Starvation}}{{with .StarvationReason}} — {{.}}{{end}}{{with .Stats.LongestWait}} (longest wait {{dur .Quiet}} under no fault{{end}}{{if .Stats.LongestWait}}, bound {{dur .StarvationBound}}){{end}}</td></tr>{{end}}
{{if .SplitVotes}}<tr><th>split votes</th><td class="{{.SplitVotes}}">{{.SplitVotes}}{{with .SplitVotesReason}} — {{.}}{{end}}{{with .SplitVote}} (longest {{dur .Quiet}} under no fault{{end}}{{if .SplitVote}}, bound {{dur .SplitVoteBound}}){{end}}</td></tr>{{end}}{{end}}
<tr><th>seed</th><td>{{.R.Seed}}</td></tr>
<tr><th>server</th><td>{{.R.Server}}</td></tr>
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
<p class="note">One row per client, one bar per hold (from the acquire's ok to the release or the end of the validity), coloured by key; red: holds that overlap another hold of their key; dashed red ending in a dot: a late write, from the end of the lease's validity to a write that lost an update (a stalled holder); purple diamond: the lock told the holder it lost its lease (a loss notice), after another client's grant if it sits on a red bar. Shaded: faults, each as long as it lasted, numbered as in the table below. Hover for details.</p>
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
{{with .Findings}}<h2>Why: one finding per fault step and cause</h2>
<p class="note">From the history alone ({{$.Evidence}}); each finding is the violations one fault step made with one cause, the first explained; times in seconds from the start of the run, nodes as in schedule.json. <code>torture explain</code> prints the same.</p>
<ol class="findings">{{range .}}<li class="finding"><span class="cause">{{.Property}} violation on {{.Key}}: {{.Cause}}{{if .Fault}}, fault #{{.Fault}}{{end}} ({{.Count}} {{noun .Property .Count}})</span> — {{.Text}}{{with .More}} <strong>{{.}}</strong>{{end}}</li>{{end}}</ol>
{{if $.More}}<p class="note">{{$.More}} more findings not shown here.</p>{{end}}{{if $.Unlisted}}<p class="note">{{$.Unlisted}} more violations counted by the checker but not listed, so not explained.</p>{{end}}{{end}}
{{with .Overlaps}}<h2>Overlapping leases</h2>
<p class="note">Each row: the overlaps one fault step and cause made (as the findings above), from the start of the first to the end of the last, in seconds from the start of the run; A and B are the first overlap's holds: a lease (B) granted while another (A) was still valid.</p>
<table><tr><th>key</th><th>overlaps</th><th>from</th><th>to</th><th>A (held)</th><th>granted by</th><th>B (acquired)</th><th>granted by</th><th>fault</th><th>cause</th></tr>
{{range .}}<tr class="overlap-row"><td>{{.Key}}</td><td class="num">{{.Count}}</td><td class="num">{{.From}}</td><td class="num">{{.To}}</td><td>{{.A}}</td><td>{{.NodesA}}</td><td>{{.B}}</td><td>{{.NodesB}}</td><td>{{.Fault}}</td><td title="{{.Text}}">{{.Cause}}</td></tr>
{{end}}</table>{{if $.OverlapsMore}}<p class="note">{{$.OverlapsMore}} more overlaps not listed.</p>{{end}}{{end}}
{{with .R.Check.ResourceFailedKeys}}<h2>Lost updates</h2><p>keys: {{range .}}{{.}} {{end}}</p>
{{with $.Lost}}<ul>{{range .}}<li><span class="cause">{{.Cause}} ({{.Count}} {{noun .Property .Count}})</span> — {{.Paragraph}}</li>{{end}}</ul>{{end}}{{end}}
{{with .R.Check.FenceViolations}}<h2>Fencing tokens out of order</h2><ul>{{range .}}<li>{{fence .}}</li>{{end}}</ul>{{end}}
{{range .Errors}}<p class="bug">{{.}}</p>{{end}}
{{range .Visuals}}<h2>{{.Title}}</h2><iframe sandbox="allow-scripts" srcdoc="{{.Doc}}"></iframe>{{end}}
<h2>Configuration</h2><pre>{{.Config}}</pre>
{{with .R.Command}}<p>command: <code>{{.}}</code></p>{{end}}
</body></html>
`))
