package envelope

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locktorture/locktorture/report"
)

// write writes envelope.csv, envelope.svg and table.md into o.Dir.
func write(res Result) error {
	var c bytes.Buffer
	w := csv.NewWriter(&c)
	w.Write([]string{"lock", "fault", "param", "value_ttl", "runs", "violations", "unknown", "rate", "wilson_lo", "wilson_hi", "strikes", "missed", "no_window"})
	for _, p := range res.Points {
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
		w.Write([]string{p.Lock, res.Options.Fault.Name, res.Options.Fault.Param, f(p.Value), strconv.Itoa(p.Runs), strconv.Itoa(p.Violations), strconv.Itoa(p.Unknown), f(p.Rate()), f(p.Lo), f(p.Hi), strconv.Itoa(p.Strikes), strconv.Itoa(p.Misses), strconv.Itoa(p.NoWindow)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	for name, b := range map[string][]byte{"envelope.csv": c.Bytes(), "envelope.svg": SVG(res), "table.md": []byte(Table(res))} {
		if err := os.WriteFile(filepath.Join(res.Options.Dir, name), b, 0o644); err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
	}
	return nil
}

// Table is the short table: per lock the boundary found beside theory's.
func Table(res Result) string {
	o := res.Options
	var b bytes.Buffer
	fmt.Fprintf(&b, "Envelope: %s, %s from %g to %g (%d points, %d bisection steps, seeds %s, %s runs, TTL %s, hold %s, %d clients on one key).\n\n",
		o.Fault.Name, o.Fault.Param+per(o.Fault), o.From, o.To, o.Points, o.Bisect, report.JoinSeeds(o.Seeds, ","), o.Duration, o.TTL, o.Hold, o.Clients)
	fmt.Fprintf(&b, "Theory: %s → %.3f %s.\n\n", res.Why, res.Theory, o.Fault.unit())
	if o.Fault.Falling {
		fmt.Fprintf(&b, "Violations lie below the boundary: the boundary found is the largest value with a violation.\n\n")
	}
	fmt.Fprintf(&b, "| lock | boundary found (%[1]s) | theory (%[1]s) | off by | runs | violations |\n", o.Fault.unit())
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	for _, lk := range o.Locks {
		runs, viol := 0, 0
		for _, p := range pointsOf(res, lk) {
			runs, viol = runs+p.Runs, viol+p.Violations
		}
		bd := res.Boundary[lk]
		found, off := "none in range", "—"
		if !math.IsNaN(bd) {
			found = fmt.Sprintf("%.3f", bd)
			off = fmt.Sprintf("%+.1f%%", 100*(bd-res.Theory)/res.Theory)
		}
		fmt.Fprintf(&b, "| %s | %s | %.3f | %s | %d | %d |\n", lk, found, res.Theory, off, runs, viol)
	}
	fmt.Fprintf(&b, "\n| lock | value (%s) | violated | rate | 95%% Wilson |\n", o.Fault.unit())
	fmt.Fprintln(&b, "|---|---|---|---|---|")
	for _, p := range res.Points {
		fmt.Fprintf(&b, "| %s | %.3f | %d/%d | %.2f | [%.2f, %.2f] |\n", p.Lock, p.Value, p.Violations, p.Runs-p.Unknown, p.Rate(), p.Lo, p.Hi)
	}
	return b.String()
}

// SVG plots the violation rate against the parameter, one line per lock
// with its 95% Wilson intervals as bars, and theory's boundary dashed.
func SVG(res Result) []byte {
	const W, H, left, right, top, bottom = 640.0, 400.0, 60.0, 150.0, 30.0, 50.0
	o := res.Options
	x := func(v float64) float64 { return left + (v-o.From)/(o.To-o.From)*(W-left-right) }
	y := func(r float64) float64 { return top + (1-r)*(H-top-bottom) }
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}
	title := fmt.Sprintf("violation rate vs %s%s (%s fault, seeds %s per point, 95%% Wilson)", o.Fault.Param, per(o.Fault), o.Fault.Name, report.JoinSeeds(o.Seeds, ","))
	var d report.SVG
	d.Open(W, H, title)
	d.Text(left, 18, "start", "black", title)
	// Axes and ticks.
	d.Printf(`<path d="M%g %g V%g H%g" stroke="black" fill="none"/>`+"\n", left, top, H-bottom, W-right)
	for i := 0; i <= 4; i++ {
		r := float64(i) / 4
		d.Text(left-6, y(r)+4, "end", "black", fmt.Sprintf("%.2f", r))
		d.Printf(`<path d="M%g %g h-4" stroke="black"/>`+"\n", left, y(r))
		v := o.From + (o.To-o.From)*float64(i)/4
		d.Text(x(v), H-bottom+18, "middle", "black", fmt.Sprintf("%.2f", v))
		d.Printf(`<path d="M%g %g v4" stroke="black"/>`+"\n", x(v), H-bottom)
	}
	d.Text((left+W-right)/2, H-12, "middle", "black", o.Fault.Param+per(o.Fault))
	if res.Theory >= o.From && res.Theory <= o.To {
		d.Printf(`<path d="M%g %g V%g" stroke="gray" stroke-dasharray="5,4"/>`+"\n", x(res.Theory), top, H-bottom)
		d.Text(x(res.Theory)+4, top+12, "start", "gray", fmt.Sprintf("theory %.2f", res.Theory))
	}
	// Each line has its own dashes, so a lock that agrees with one drawn
	// above shows through its gaps.
	dashes := []string{"", ` stroke-dasharray="8,5"`, ` stroke-dasharray="2,4"`, ` stroke-dasharray="12,4,2,4"`}
	for i, lk := range o.Locks {
		col, dash := colors[i%len(colors)], dashes[i%len(dashes)]
		var line strings.Builder
		for j, p := range pointsOf(res, lk) {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&line, "%s%.1f %.1f ", cmd, x(p.Value), y(p.Rate()))
			d.Printf(`<path d="M%.1f %.1f V%.1f" stroke="%s" stroke-width="1"/><circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(p.Value), y(p.Lo), y(p.Hi), col, x(p.Value), y(p.Rate()), col)
		}
		d.Printf(`<path d="%s" stroke="%s" fill="none" stroke-width="2"%s/>`+"\n", line.String(), col, dash)
		d.Printf(`<path d="M%g %g h20" stroke="%s" stroke-width="2"%s/>`+"\n", W-right+15, top+20+float64(i)*18, col, dash)
		d.Text(W-right+40, top+24+float64(i)*18, "start", "black", lk)
	}
	return []byte(d.Close())
}

// pointsOf is lock lk's points, by value.
func pointsOf(res Result, lk string) []Point {
	pts := slices.DeleteFunc(slices.Clone(res.Points), func(p Point) bool { return p.Lock != lk })
	slices.SortFunc(pts, func(a, b Point) int { return cmp.Compare(a.Value, b.Value) })
	return pts
}

// per is " ÷ TTL" for a parameter in TTLs, "" for a rate.
func per(f Fault) string {
	if f.unit() == "TTL" {
		return " ÷ TTL"
	}
	return ""
}
