package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/matrix"
)

// benchEnv is what every part is given.
type benchEnv struct {
	o        options
	tmp      string
	logf     func(string, ...any)
	deadline time.Time // the end of the running part's budget
}

// part is one section of BENCHMARKS.md: run measures into r, render
// writes the text below the heading, figures are what BENCHMARKS.json
// keeps of r, flags those that change what it measures (its command
// repeats those given).
type part struct {
	name, title string
	run         func(ctx context.Context, e *benchEnv, r *results) error
	render      func(r *results, p func(string, ...any))
	figures     func(r *results) any
	flags       []string
}

// parts are the parts in the order of BENCHMARKS.md.
var parts = []part{
	{name: "workload", flags: []string{"clients", "workload-duration", "rounds"}, title: "Workload: lock cycles per second", run: runWorkload, render: (*results).workloadSection,
		figures: func(r *results) any {
			return struct {
				Workload   *workloadResult
				ProfileTop []profileLine
			}{r.Workload, r.ProfileTop}
		}},
	{name: "checker", flags: []string{"sizes"}, title: "Checker: time and peak memory", run: runChecker, render: (*results).checkerSection,
		figures: func(r *results) any { return r.Checker }},
	{name: "detect", flags: []string{"seeds", "safe-seeds", "detect-duration", "detect-max", "parallel", "cells", "detect-full", "budget"}, title: "Detection power", run: runDetect, render: (*results).detectSection,
		figures: func(r *results) any { return detectFigures(r.Detect) }},
	{name: "startup", flags: []string{"startup-rounds"}, title: "Start-up", run: runStartup, render: (*results).startupSection,
		figures: func(r *results) any { return r.Startup }},
	{name: "adapter", flags: []string{"adapter-clients", "adapter-duration", "adapter-rounds", "example"}, title: "Locks in other languages: the process adapter", run: runAdapter, render: (*results).adapterSection,
		figures: func(r *results) any { return r.Adapter }},
	{name: "evidence", flags: []string{"clients", "workload-duration", "rounds"}, title: "Per-node evidence: what recording it costs", run: runEvidence, render: (*results).evidenceSection,
		figures: func(r *results) any { return r.Evidence }},
	{name: "gate", flags: []string{"gate-locks", "gate-hogs", "matrix-jobs"}, title: "The release gate's power and runs side by side", run: runGate, render: (*results).gateSection,
		figures: func(r *results) any { return r.Gate }},
	{name: "targeted", flags: []string{"targeted-cells", "targeted-seeds", "targeted-safe-seeds", "targeted-max", "detect-duration", "parallel", "budget"}, title: "Targeted faults beside random ones", run: runTargeted, render: (*results).targetedSection,
		figures: func(r *results) any { return detectFigures(r.Targeted) }},
	{name: "onepass", flags: []string{"onepass-ops", "onepass-rounds"}, title: "One pass: `torture run`'s check and report against `torture check`", run: runOnePass, render: (*results).onePassSection,
		figures: func(r *results) any { return r.OnePass }},
	{name: "clock", flags: []string{"clock-cells", "clock-seeds", "detect-duration", "detect-max", "parallel", "budget"}, title: "Clock faults on the client and slewed heals", run: runClock, render: (*results).clockSection,
		figures: func(r *results) any { return detectFigures(r.Clock) }},
	{name: "gobench", flags: []string{"benchtime"}, title: "Go benchmarks", run: runGoBench, render: (*results).goBenchSection,
		figures: func(r *results) any { return r.GoBench }},
}

func partNames() []string {
	var n []string
	for _, p := range parts {
		n = append(n, p.name)
	}
	return n
}

// selectParts returns the parts named in only (comma-separated), in the
// order of parts; every part when only is empty.
func selectParts(only string) ([]part, error) {
	if only == "" {
		return parts, nil
	}
	want := strings.Split(only, ",")
	for i, n := range want {
		want[i] = strings.TrimSpace(n)
		if !slices.Contains(partNames(), want[i]) {
			return nil, fmt.Errorf("-only: unknown part %q (parts: %s)", want[i], strings.Join(partNames(), ", "))
		}
	}
	return slices.DeleteFunc(slices.Clone(parts), func(p part) bool { return !slices.Contains(want, p.name) }), nil
}

// runPart measures one part and makes its section.
func runPart(ctx context.Context, e *benchEnv, pt part, commit string) (section, error) {
	s := section{Part: pt.name, Title: pt.title, Number: slices.Index(partNames(), pt.name) + 1, Date: time.Now().UTC(), Commit: commit, LoadStart: loadAvg(),
		Command: "go build -o bin/bench ./cmd/bench && bin/bench -only " + pt.name}
	for _, f := range e.o.flags {
		if name, _, _ := strings.Cut(strings.TrimPrefix(f, "-"), "="); slices.Contains(pt.flags, name) {
			s.Command += " " + f
		}
	}
	r := &results{Opts: e.o, LoadStart: s.LoadStart}
	e.deadline = time.Now().Add(e.o.budget)
	start := time.Now()
	e.logf("part %s: load average %s", pt.name, s.LoadStart)
	if err := pt.run(ctx, e, r); err != nil {
		return s, err
	}
	s.Duration = duration(time.Since(start))
	s.LoadEnd = loadAvg()
	var b strings.Builder
	pt.render(r, func(format string, a ...any) { fmt.Fprintf(&b, format, a...) })
	s.Markdown = b.String()
	s.Targets, s.Notes = r.targetRows(), r.notes()
	fig, err := json.Marshal(pt.figures(r))
	if err != nil {
		return s, err
	}
	s.Figures = fig
	return s, nil
}

func runDetect(ctx context.Context, e *benchEnv, r *results) error {
	cells := matrix.Cells(!e.o.detectFull)
	if e.o.cells != nil {
		cells = slices.DeleteFunc(cells, func(sp matrix.Spec) bool { return !e.o.cells.MatchString(sp.Name) })
	}
	rows := detectPlan(cells, e.o.seeds, e.o.safeSeeds, false)
	r.Detect, r.DetectWall = rows, e.detect(ctx, rows, e.o.detectMax)
	return ctx.Err()
}

// detectFigure is one cell's runs as BENCHMARKS.json keeps them.
type detectFigure struct {
	Cell   string      `json:"cell"`
	Expect string      `json:"expect"`
	Extra  bool        `json:"extra,omitempty"`
	Runs   []detectRun `json:"runs"`
}

func detectFigures(rows []detectRow) []detectFigure {
	var out []detectFigure
	for _, r := range rows {
		out = append(out, detectFigure{Cell: r.Spec.Name, Expect: r.Spec.Expect.String(), Extra: r.Extra, Runs: r.Runs})
	}
	return out
}

func (r *results) goBenchSection(p func(string, ...any)) {
	p("`go test -run '^$' -bench . -benchmem -benchtime %s ./history ./harness ./checker` (one count; for a comparison run it with `-count 10` before and after a change and feed both outputs to `benchstat`):\n\n", r.Opts.benchTime)
	p("```\n%s\n```\n\n", r.GoBench)
	p("`BenchmarkEncode/encoding-json` and `BenchmarkDecode/encoding-json` are what `history.Writer` and `history.Decoder` did before (encoding/json by reflection); they stay as the reference.\n")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./,:=+", c))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
