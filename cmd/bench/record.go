package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// section is one part's share of BENCHMARKS.md and BENCHMARKS.json.
type section struct {
	Part  string `json:"part"`
	Title string `json:"title"`
	// Number is the part's place in BENCHMARKS.md, which others cite.
	Number int `json:"number"`
	// Date is when the part started; Duration how long it took.
	Date     time.Time `json:"date"`
	Duration duration  `json:"duration"`
	Commit   string    `json:"commit"`
	// LoadStart and LoadEnd are the load averages before and after.
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end"`
	// Command reproduces the part.
	Command string `json:"command"`
	// Targets are its rows of the targets table, Notes its explanations
	// of the targets not met (markdown).
	Targets []string `json:"targets,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Markdown is the text below the heading and stamp; Figures the
	// measurements, machine-readable.
	Markdown string          `json:"markdown"`
	Figures  json.RawMessage `json:"figures,omitempty"`
}

// duration is a time.Duration written in JSON as seconds.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Seconds())
}

func (d *duration) UnmarshalJSON(b []byte) error {
	var s float64
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*d = duration(math.Round(s * float64(time.Second))) // rounded: a truncated read drifts by 1 ns a round trip
	return nil
}

// record is BENCHMARKS.json: the machine and every part's section.
type record struct {
	Machine  machineInfo `json:"machine"`
	Sections []section   `json:"sections"`
}

// readRecord reads BENCHMARKS.json; a missing file is an empty record.
func readRecord(path string) (record, error) {
	var r record
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func (r record) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return b.Bytes(), err
}

// merge returns old with fresh's sections in place of those of the same
// parts, machine m, the sections in the order of order (others last, by
// name).
func merge(old record, m machineInfo, fresh []section, order []string) record {
	byPart := map[string]section{}
	for _, s := range append(slices.Clone(old.Sections), fresh...) {
		byPart[s.Part] = s
	}
	rank := func(p string) int {
		if i := slices.Index(order, p); i >= 0 {
			return i
		}
		return len(order)
	}
	out := record{Machine: m, Sections: slices.Collect(maps.Values(byPart))}
	slices.SortFunc(out.Sections, func(a, b section) int {
		return cmp.Or(cmp.Compare(rank(a.Part), rank(b.Part)), strings.Compare(a.Part, b.Part))
	})
	return out
}

// markdown renders BENCHMARKS.md from the record alone: a file written
// after a run of one part is the same as one written from it later.
func (r record) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Benchmarks\n\n")
	p("Written by `make bench` (`bin/bench`, built from `cmd/bench`; see its `doc.go`), every part a section of its own with its figures in `BENCHMARKS.json`. ")
	p("`bin/bench -only PART[,PART]` measures those parts again and rewrites only their sections, so each section says when, at which commit and on how loaded a machine it was measured, and the command that measures it again. Do not edit by hand: run it again.\n\n")
	var total time.Duration
	var targets, notes []string
	for _, s := range r.Sections {
		total += time.Duration(s.Duration)
		targets, notes = append(targets, s.Targets...), append(notes, s.Notes...)
	}
	p("| part | measured (UTC) | took | load average at the start → end |\n|---|---|---|---|\n")
	for _, s := range r.Sections {
		p("| [%d. %s](#%s) | %s | %s | %s → %s |\n", s.Number, s.Title, anchor(fmt.Sprintf("%d. %s", s.Number, s.Title)), s.Date.UTC().Format("2006-01-02 15:04"),
			time.Duration(s.Duration).Round(time.Second), s.LoadStart, s.LoadEnd)
	}
	p("\nThe parts took %s in all.\n\n", total.Round(time.Second))
	m := r.Machine
	p("## Machine\n\n")
	p("- CPU: %s, %d CPUs (`nproc`), GOMAXPROCS %d\n", m.CPU, m.NumCPU, m.GOMAXPROCS)
	p("- %s; %s\n", m.Go, m.Redis)
	if len(m.Modules) > 0 {
		p("- Modules: %s\n", strings.Join(m.Modules, ", "))
	}
	p("\nThe machine is shared with other engineers' tests and long matrix runs, ")
	p("so throughput and wall-clock figures are noisy (each section gives the load averages of its run); CPU time, also given, ")
	p("is steadier than rates when the cores are contended. The FACTS.md baselines (redis-benchmark ≈ 100k SET/s, ")
	p("raw go-redis loop ≈ 37.7k cycles/s) were taken on an idle machine of the same kind.\n\n")
	if len(targets) > 0 {
		p("## Targets\n\n| | target | measured | |\n|---|---|---|---|\n%s\n\n", strings.Join(targets, "\n"))
	}
	if len(notes) > 0 {
		p("## Targets not met: the figure, what limits it, what was done\n\n- %s\n\n", strings.Join(notes, "\n- "))
	}
	for _, s := range r.Sections {
		p("## %d. %s\n\n", s.Number, s.Title)
		p("*Measured %s UTC in %s at commit %s, load average %s at the start and %s at the end:* `%s`\n\n",
			s.Date.UTC().Format("2006-01-02 15:04"), time.Duration(s.Duration).Round(time.Second), shortCommit(s.Commit), s.LoadStart, s.LoadEnd, s.Command)
		p("%s", strings.TrimRight(s.Markdown, "\n")+"\n\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// anchor is the GitHub anchor of a heading.
func anchor(h string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(h) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c > 127:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// shortCommit shortens a commit hash, keeping what follows it.
func shortCommit(c string) string {
	h, rest, _ := strings.Cut(c, " ")
	h = h[:min(len(h), 12)]
	if rest != "" {
		return h + " " + rest
	}
	return cmp.Or(h, "unknown")
}

// writeRecord merges fresh into the record at jsonPath, writes it, and
// the markdown at mdPath.
func writeRecord(mdPath, jsonPath string, m machineInfo, fresh []section, order []string) (record, error) {
	old, err := readRecord(jsonPath)
	if err != nil {
		return old, err
	}
	r := merge(old, m, fresh, order)
	b, err := r.encode()
	if err != nil {
		return r, err
	}
	if err := os.WriteFile(jsonPath, b, 0o644); err != nil {
		return r, err
	}
	return r, os.WriteFile(mdPath, []byte(r.markdown()), 0o644)
}
