package report

import (
	"cmp"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// MaxTimelineBars bounds the bars Timeline draws, so the page of a long
// run stays small enough to open (see boundBars).
const MaxTimelineBars = 5000

// Geometry shared by the SVGs: the time axis runs over plotWidth.
const (
	svgWidth  = 1200
	plotLeft  = 64
	plotRight = 16
	plotWidth = svgWidth - plotLeft - plotRight

	legendHeight = 20 // the line of legend text at the top
	laneHeight   = 13 // one lane of fault labels
	faultLanes   = 2  // fault labels alternate between lanes
	axisHeight   = 26 // the time axis below a plot
)

// Colours. Red is kept for overlapping holds.
var keyPalette = []string{
	"#2563eb", "#16a34a", "#7c3aed", "#0891b2", "#a16207",
	"#4d7c0f", "#475569", "#c026d3", "#0d9488", "#1e3a8a",
}

const (
	overlapColor   = "#dc2626"
	faultFill      = "#f59e0b"
	faultEdge      = "#d97706"
	faultLabel     = "#92400e"
	gridColor      = "#e5e7eb"
	axisColor      = "#6b7280"
	p50Color       = "#2563eb"
	maxColor       = "#ea580c"
	failLineColor  = "#6b7280"
	okBarColor     = "#16a34a"
	stripeColor    = "#f8fafc"
	svgFontFamily  = "system-ui,sans-serif"
	charWidthGuess = 6.2 // px per character at font-size 11, to fit labels
)

// timeScale maps history times (nanosecond offsets) to x coordinates.
type timeScale struct {
	t0, t1 int64
}

// newTimeScale spans the events and fault windows, from 0 when they start
// within 5% of the span after it, so ticks fall on whole seconds.
func newTimeScale(a *checker.Analysis, wins []checker.Window) timeScale {
	s := timeScale{t0: math.MaxInt64, t1: math.MinInt64}
	if first, last, ok := a.Span(); ok {
		s.t0, s.t1 = first, last
	}
	for _, w := range wins {
		s.t0 = min(s.t0, w.Start)
		s.t1 = max(s.t1, w.End)
	}
	if s.t0 > s.t1 {
		s.t0, s.t1 = 0, 0
	}
	if s.t1 == s.t0 {
		s.t1 = s.t0 + int64(time.Second)
	}
	if s.t0 > 0 && s.t0 < (s.t1-s.t0)/20 {
		s.t0 = 0
	}
	return s
}

func (s timeScale) x(t int64) float64 {
	return plotLeft + float64(t-s.t0)/float64(s.t1-s.t0)*plotWidth
}

func (s timeScale) nsPerPixel() float64 { return float64(s.t1-s.t0) / plotWidth }

// SVG is the module's one SVG writer, report's plots' and envelope's.
type SVG struct {
	b strings.Builder
}

// Printf adds elements, as fmt.Printf would.
func (d *SVG) Printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// Open starts a document width by height titled label.
func (d *SVG) Open(width, height float64, label string) {
	d.Printf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="%s" font-size="11" role="img" aria-label="%s">`+"\n",
		width, height, width, height, svgFontFamily, esc(label))
	d.Printf(`<title>%s</title>`+"\n", esc(label))
}

// Close ends the document and returns it.
func (d *SVG) Close() string {
	d.b.WriteString("</svg>\n")
	return d.b.String()
}

// Text writes an escaped text; anchor is start, middle or end.
func (d *SVG) Text(x, y float64, anchor, fill, s string) {
	d.Printf(`<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s">%s</text>`+"\n", x, y, anchor, fill, esc(s))
}

func esc(s string) string { return html.EscapeString(s) }

// seconds formats a time offset in seconds for tooltips.
func seconds(t int64) string { return fmt.Sprintf("%.3f s", float64(t)/1e9) }

// niceStep returns the least of 1, 2 and 5 times a power of ten ≥ v.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// timeAxis draws the time axis at y: a line, ticks and labels in seconds.
func (d *SVG) timeAxis(s timeScale, y float64) {
	d.Printf(`<g class="axis" stroke="%s">`+"\n", axisColor)
	d.Printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", plotLeft, y, svgWidth-plotRight, y)
	d.b.WriteString("</g>\n")
	step := niceStep(float64(s.t1-s.t0) / 1e9 / 12)
	first := math.Ceil(float64(s.t0)/1e9/step-1e-9) * step
	for v := first; v <= float64(s.t1)/1e9+1e-9; v += step {
		x := s.x(int64(math.Round(v * 1e9)))
		d.Printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, y, x, y+4, axisColor)
		d.Text(x, y+15, "middle", axisColor, strconvG(v)+" s")
	}
}

// strconvG formats a tick value without float noise (nor "-0").
func strconvG(v float64) string {
	s := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	return pick(s == "-0", "0", s)
}

// faultBands draws each fault window as a band, numbered as in the page's
// fault table, its label in one of the lanes from labelTop.
func (d *SVG) faultBands(s timeScale, wins []checker.Window, labelTop, top, bottom float64) {
	for i, w := range wins {
		x0, x1 := s.x(w.Start), s.x(w.End)
		width := max(x1-x0, 2)
		tip := fmt.Sprintf("fault %d: %s, from %s to %s", i+1, w.Desc, seconds(w.Start), seconds(w.End))
		if w.UntilEnd {
			tip += " (never stopped)"
		}
		d.Printf(`<g class="fault"><title>%s</title>`+"\n", esc(tip))
		d.Printf(`<rect class="fault-band" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.16" stroke="%s" stroke-opacity="0.45" stroke-width="0.8"/>`+"\n",
			x0, top, width, bottom-top, faultFill, faultEdge)
		label := fitLabel(fmt.Sprintf("%d %s", i+1, w.Desc), max(width, 14), fmt.Sprint(i+1))
		lane := float64(i % faultLanes)
		d.Printf(`<text class="fault-label" x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n",
			x0+2, labelTop+lane*laneHeight+10, faultLabel, esc(label))
		d.b.WriteString("</g>\n")
	}
}

// fitLabel shortens s with an ellipsis to fit width pixels, or returns
// short if not even a few characters fit.
func fitLabel(s string, width float64, short string) string {
	n := int(width / charWidthGuess)
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n < len(short)+3:
		return short
	}
	return string(r[:n-1]) + "…"
}

// bar is one rectangle of the timeline: one hold or several merged.
type bar struct {
	process    int
	key        string
	start, end int64
	holds      int // holds merged into it
	fence      int64
	overlap    bool
}

// timelineBars returns a bar per hold, overlaps marked, and the sorted keys.
func timelineBars(holds map[string][]checker.Hold) ([]bar, []string) {
	keys := slices.Sorted(maps.Keys(holds))
	n := 0
	for _, hs := range holds {
		n += len(hs)
	}
	bars := make([]bar, 0, n)
	for _, k := range keys {
		hs := holds[k] // sorted by Start then End
		// A hold starting before the group's latest End joins it: every
		// member of a group of two or more overlaps another.
		lo := 0
		var maxEnd int64
		flush := func(hi int) {
			for _, h := range hs[lo:hi] {
				bars = append(bars, bar{process: h.Process, key: k, start: h.Start, end: h.End, holds: 1, fence: h.Fence, overlap: hi-lo > 1})
			}
			lo = hi
		}
		for i, h := range hs {
			if i > 0 && h.Start >= maxEnd {
				flush(i)
			}
			if i == lo {
				maxEnd = h.End
			}
			maxEnd = max(maxEnd, h.End)
		}
		flush(len(hs))
	}
	return bars, keys
}

// mergeGaps are the gaps, in pixels, at which boundBars tries merging.
var mergeGaps = []float64{1, 2, 4, 8, 16}

// mergeBars appends to merged (a buffer to reuse) the sorted bars, those
// of one process, key and overlap status less than gap apart merged.
func mergeBars(merged, sorted []bar, gap float64) []bar {
	for _, b := range sorted {
		if n := len(merged); n > 0 {
			m := &merged[n-1]
			if m.process == b.process && m.key == b.key && m.overlap == b.overlap && float64(b.start-m.end) < gap {
				m.end = max(m.end, b.end)
				m.holds += b.holds
				continue
			}
		}
		merged = append(merged, b)
	}
	return merged
}

// boundBars cuts bars to limit by merging (mergeBars, at the least of
// mergeGaps that is enough), else by keeping the overlaps and an even
// sample of the others, and says what it did. It sorts bars in place: a
// long history has hundreds of thousands.
func boundBars(bars []bar, limit int, pixel float64) ([]bar, string) {
	total := len(bars)
	if total <= limit {
		return bars, ""
	}
	sorted := bars
	slices.SortStableFunc(sorted, func(a, b bar) int {
		return cmp.Or(cmp.Compare(a.process, b.process), strings.Compare(a.key, b.key), boolCompare(a.overlap, b.overlap), cmp.Compare(a.start, b.start))
	})
	var merged []bar
	var gap float64
	for _, px := range mergeGaps {
		gap = px
		merged = mergeBars(merged[:0], sorted, px*pixel)
		if len(merged) <= limit {
			break
		}
	}
	what := fmt.Sprintf("%d holds shown as %d bars: holds of one client and key less than %s px (%s) apart are merged into one bar",
		total, len(merged), strconvG(gap), dur(time.Duration(gap*pixel)))
	if len(merged) <= limit {
		return merged, what + "."
	}
	red := slices.DeleteFunc(slices.Clone(merged), func(b bar) bool { return !b.overlap })
	rest := slices.DeleteFunc(merged, func(b bar) bool { return b.overlap })
	if len(red) >= limit {
		return red[:limit], fmt.Sprintf("%s; of these only the first %d bars of overlapping holds are drawn.", what, limit)
	}
	stride := (len(rest) + (limit - len(red)) - 1) / (limit - len(red))
	kept := red
	for i := 0; i < len(rest); i += stride {
		kept = append(kept, rest[i])
	}
	note := fmt.Sprintf("%s; of these only every %s bar is drawn", what, ordinal(stride))
	if len(red) > 0 {
		note += fmt.Sprintf(", plus all %d bars of overlapping holds", len(red))
	}
	return kept, note + "."
}

// ordinal returns "2nd", "3rd", "11th" and so on.
func ordinal(n int) string {
	suffix := "th"
	if n%10 >= 1 && n%10 <= 3 && (n%100 < 11 || n%100 > 13) {
		suffix = []string{"st", "nd", "rd"}[n%10-1]
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// Timeline draws the holds of an analysed history as an SVG timeline.
func Timeline(a *checker.Analysis) string {
	holds := a.Holds()
	wins := a.Result.Stats.FaultWindows
	sc := newTimeScale(a, wins)
	bars, keys := timelineBars(holds)
	bars, note := boundBars(bars, MaxTimelineBars, sc.nsPerPixel())

	// One row per client that appears in the history, holds or not.
	procs := a.Processes()
	row := make(map[int]int, len(procs))
	for i, p := range procs {
		row[p] = i
	}
	rowH := max(1, min(16, 480/max(len(procs), 1)))
	labelEvery := max(1, (10+rowH-1)/rowH)

	f := newPlotFrame(float64(rowH * max(len(procs), 1)))
	top, bottom := f.top, f.bottom
	if note != "" {
		f.height += 16
	}
	var d SVG
	d.Open(svgWidth, f.height, "timeline of holds per client")
	// Legend: the keys' colours, red for overlaps, the note.
	x := float64(plotLeft)
	entry := func(mark, label string) { // mark: an element drawn at x
		d.b.WriteString(mark + "\n")
		d.Text(x+13, 13, "start", "#111", label)
		x += 13 + float64(len([]rune(label)))*charWidthGuess + 12
	}
	swatch := func(color, label string) {
		entry(fmt.Sprintf(`<rect x="%.1f" y="4" width="10" height="10" fill="%s"/>`, x, color), label)
	}
	const maxLegendKeys = 8
	for i, k := range keys {
		if i == maxLegendKeys {
			d.Text(x, 13, "start", "#111", fmt.Sprintf("+%d more keys", len(keys)-maxLegendKeys))
			x += 90
			break
		}
		swatch(keyPalette[i%len(keyPalette)], "key "+k)
	}
	swatch(overlapColor, "overlapping holds")
	late := lateWrites(a)
	if len(late) > 0 {
		entry(fmt.Sprintf(`<rect x="%.1f" y="4" width="10" height="10" fill="none" stroke="%s" stroke-dasharray="3,2"/>`, x, overlapColor), "late write")
	}
	notices := lostNotices(holds)
	if len(notices) > 0 {
		entry(fmt.Sprintf(`<path d="%s" fill="%s"/>`, diamond(x+5, 9, 5), noticeColor), "lost notice")
	}
	if len(wins) > 0 {
		d.Printf(`<rect x="%.1f" y="4" width="10" height="10" fill="%s" fill-opacity="0.3" stroke="%s"/>`+"\n", x, faultFill, faultEdge)
		d.Text(x+13, 13, "start", "#111", "fault")
		x += 60
	}
	if len(bars) == 0 {
		d.Text(x, 13, "start", axisColor, "no holds")
	}
	// Rows: stripes and labels.
	for i, p := range procs {
		y := top + float64(i*rowH)
		if i%2 == 1 {
			d.Printf(`<rect x="%d" y="%.1f" width="%d" height="%d" fill="%s"/>`+"\n", plotLeft, y, plotWidth, rowH, stripeColor)
		}
		if i%labelEvery == 0 {
			d.Printf(`<text x="%d" y="%.1f" text-anchor="end" font-size="%d" fill="%s">P%d</text>`+"\n",
				plotLeft-6, y+float64(rowH)/2+3.5, min(11, max(rowH, 8)), axisColor, p)
		}
	}
	d.faultBands(sc, wins, f.labelTop, top, bottom)
	t := timelineRows{sc: sc, row: row, top: top, rowH: rowH}
	t.barH = max(float64(rowH)-2, 1)
	t.pad = (float64(rowH) - t.barH) / 2
	t.holds(&d, bars, keys)
	t.lateWrites(&d, late)
	t.notices(&d, notices)
	d.timeAxis(sc, bottom)
	if note != "" {
		d.Printf(`<text class="note" x="%d" y="%.1f" fill="%s">%s</text>`+"\n", plotLeft, bottom+axisHeight+10, axisColor, esc(note))
	}
	return d.Close()
}

// timelineRows places the timeline's marks.
type timelineRows struct {
	sc        timeScale
	row       map[int]int
	top       float64
	rowH      int
	barH, pad float64
}

// holds draws the bars, each key in its colour, overlaps red and on top.
func (t timelineRows) holds(d *SVG, bars []bar, keys []string) {
	keyColor := make(map[string]string, len(keys))
	for i, k := range keys {
		keyColor[k] = keyPalette[i%len(keyPalette)]
	}
	slices.SortStableFunc(bars, func(a, b bar) int { return boolCompare(a.overlap, b.overlap) })
	d.b.WriteString(`<g class="holds">` + "\n")
	for _, b := range bars {
		x0, x1 := t.sc.x(b.start), t.sc.x(b.end)
		fill, cls := keyColor[b.key], "hold"
		if b.overlap {
			fill, cls = overlapColor, "hold overlap"
		}
		var tip string
		if b.holds == 1 {
			tip = fmt.Sprintf("P%d holds %s from %s to %s (%s)", b.process, b.key, seconds(b.start), seconds(b.end), dur(time.Duration(b.end-b.start)))
			if b.fence != 0 {
				tip += fmt.Sprintf(", fence %d", b.fence)
			}
		} else {
			tip = fmt.Sprintf("P%d: %d holds of %s from %s to %s, merged", b.process, b.holds, b.key, seconds(b.start), seconds(b.end))
		}
		if b.overlap {
			tip += "; overlaps another hold of " + b.key
		}
		d.Printf(`<rect class="%s" x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n",
			cls, x0, t.top+float64(t.row[b.process]*t.rowH)+t.pad, max(x1-x0, 0.6), t.barH, fill, esc(tip))
	}
	d.b.WriteString("</g>\n")
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// lateWrites draws each write after its lease's validity (Kleppmann's
// stalled holder) on its client's row, dashed from the end of the
// validity to the write, so the stall shows beside the hold it outlived.
func (t timelineRows) lateWrites(d *SVG, late []lateWrite) {
	onRows(t, d, "late-writes", late, func(lw lateWrite) int { return lw.process }, func(lw lateWrite, y float64) {
		x0, x1 := t.sc.x(lw.validUntil), t.sc.x(lw.wrote)
		y += t.pad
		tip := fmt.Sprintf("P%d wrote %s at %s, %s after its lease's validity ended at %s: a late write", lw.process, lw.key, seconds(lw.wrote), dur(time.Duration(lw.wrote-lw.validUntil)), seconds(lw.validUntil))
		d.Printf(`<rect class="late-write" x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="3,2"><title>%s</title></rect>`+"\n",
			x0, y, max(x1-x0, 1), t.barH, overlapColor, esc(tip))
		d.Printf(`<circle class="late-write" cx="%.2f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`+"\n",
			x1, y+t.barH/2, max(min(t.barH/2, 4), 1.5), overlapColor, esc(tip))
	})
}

// notices draws each loss notice (a watchdog that failed to renew, a
// lock that watches its key) as a diamond on the holder's row, so one
// after another client's grant shows as late as it was.
func (t timelineRows) notices(d *SVG, notices []keyedHold) {
	onRows(t, d, "lost-notices", notices, func(h keyedHold) int { return h.Process }, func(h keyedHold, y float64) {
		y += float64(t.rowH) / 2
		tip := fmt.Sprintf("P%d was told at %s that it lost %s (held from %s)", h.Process, seconds(h.End), h.key, seconds(h.Start))
		d.Printf(`<path class="lost-notice" d="%s" fill="%s" stroke="#fff" stroke-width="0.8"><title>%s</title></path>`+"\n",
			diamond(t.sc.x(h.End), y, max(min(float64(t.rowH)/2, 6), 3)), noticeColor, esc(tip))
	})
}

// onRows draws, in a group of class, each item at the top y of its
// client's row (none for a client without one).
func onRows[T any](t timelineRows, d *SVG, class string, items []T, process func(T) int, draw func(T, float64)) {
	if len(items) == 0 {
		return
	}
	d.Printf(`<g class="%s">`+"\n", class)
	for _, it := range items {
		if r, ok := t.row[process(it)]; ok {
			draw(it, t.top+float64(r*t.rowH))
		}
	}
	d.b.WriteString("</g>\n")
}

const noticeColor = "#6a1b9a"

// diamond is the SVG path of a diamond centred on (x, y), of radius r.
func diamond(x, y, r float64) string {
	return fmt.Sprintf("M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ", x, y-r, x+r, y, x, y+r, x-r, y)
}

type keyedHold struct {
	checker.Hold
	key string
}

// lostNotices are the holds a loss notice ended, at most MaxTimelineBars.
func lostNotices(holds map[string][]checker.Hold) []keyedHold {
	var out []keyedHold
	for _, k := range slices.Sorted(maps.Keys(holds)) {
		for _, h := range holds[k] {
			if h.Lost && len(out) < MaxTimelineBars {
				out = append(out, keyedHold{h, k})
			}
		}
	}
	return out
}

type lateWrite struct {
	process           int
	key               string
	validUntil, wrote int64
}

// lateWrites are the lost updates' writes after their lease's validity.
func lateWrites(a *checker.Analysis) []lateWrite {
	var out []lateWrite
	seen := map[string]bool{}
	for _, lu := range a.LostUpdates {
		for _, s := range []checker.OKSection{lu.A, lu.B} {
			l, ok := a.LeaseAt(lu.Key, s.Token, s.Call)
			id := fmt.Sprintf("%s/%s/%d", lu.Key, s.Token, s.Call)
			if !ok || seen[id] || s.Return <= l.ValidUntil || len(out) == MaxTimelineBars {
				continue
			}
			seen[id] = true
			out = append(out, lateWrite{process: s.Process, key: lu.Key, validUntil: l.ValidUntil, wrote: s.Return})
		}
	}
	return out
}

// bucketWidth picks the plots' bucket width: one second for runs of
// 10 s to 2 min, else a niceStep that gives at most 120 buckets or 20.
func bucketWidth(span int64) int64 {
	sec := float64(span) / 1e9
	switch {
	case sec >= 10 && sec <= 120:
		return int64(time.Second)
	case sec > 120:
		return int64(niceStep(sec/120) * 1e9)
	}
	return max(int64(niceStep(sec/20)*1e9), 1)
}

// bucket is one interval of the plots.
type bucket struct {
	start, end int64
	ok, notOK  int
	latencies  []int64 // of ok acquires, sorted
}

// buckets cuts a's time scale into buckets of bucketWidth (the last
// widened rather than leave half a bucket) of the acquires by return.
func buckets(a *checker.Analysis) ([]checker.Window, timeScale, int64, []bucket) {
	wins := a.Result.Stats.FaultWindows
	sc := newTimeScale(a, wins)
	w := bucketWidth(sc.t1 - sc.t0)
	var bs []bucket
	for t := sc.t0; t < sc.t1; t += w {
		end := min(t+w, sc.t1)
		if n := len(bs); n > 0 && end-t < w/2 {
			bs[n-1].end = end
			break
		}
		bs = append(bs, bucket{start: t, end: end})
	}
	for _, s := range a.Acquires() {
		i := sort.Search(len(bs), func(i int) bool { return bs[i].end > s.Return })
		if i == len(bs) {
			i = len(bs) - 1 // the last instant belongs to the last bucket
		}
		if s.OK {
			bs[i].ok++
			bs[i].latencies = append(bs[i].latencies, s.Latency)
		} else {
			bs[i].notOK++
		}
	}
	for i := range bs {
		slices.Sort(bs[i].latencies)
	}
	return wins, sc, w, bs
}

// plotFrame is the layout of one plot with a y axis.
type plotFrame struct {
	labelTop, top, bottom, height float64
}

func newPlotFrame(plotHeight float64) plotFrame {
	f := plotFrame{labelTop: legendHeight}
	f.top = f.labelTop + faultLanes*laneHeight
	f.bottom = f.top + plotHeight
	f.height = f.bottom + axisHeight
	return f
}

func (d *SVG) gridLine(y float64, label string) {
	d.Printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", plotLeft, y, svgWidth-plotRight, y, gridColor)
	d.Text(plotLeft-6, y+3.5, "end", axisColor, label)
}

// Throughput plots an analysed history's acquires per second.
func Throughput(a *checker.Analysis) string {
	wins, sc, w, bs := buckets(a)
	rate := func(n int, b bucket) float64 { return float64(n) / (float64(b.end-b.start) / 1e9) }
	peak := 0.0
	for _, b := range bs {
		peak = max(peak, rate(b.ok, b), rate(b.notOK, b))
	}
	step := niceStep(max(peak, 1) / 4)
	ymax := math.Ceil(max(peak, 1)/step) * step
	f := newPlotFrame(160)
	y := func(v float64) float64 { return f.bottom - v/ymax*(f.bottom-f.top) }
	var d SVG
	d.Open(svgWidth, f.height, "acquires per second over time")
	d.Printf(`<rect x="%d" y="4" width="10" height="10" fill="%s"/>`+"\n", plotLeft, okBarColor)
	d.Text(plotLeft+13, 13, "start", "#111", "ok acquires/s")
	d.Printf(`<line x1="%d" y1="9" x2="%d" y2="9" stroke="%s" stroke-width="1.5" stroke-dasharray="4 2"/>`+"\n", plotLeft+120, plotLeft+140, failLineColor)
	d.Text(plotLeft+144, 13, "start", "#111", fmt.Sprintf("failed or unknown acquires/s, by return time, in %s buckets", dur(time.Duration(w))))
	for v := 0.0; v <= ymax+step/2; v += step {
		d.gridLine(y(v), strconvG(v))
	}
	d.faultBands(sc, wins, f.labelTop, f.top, f.bottom)
	d.b.WriteString(`<g class="throughput">` + "\n")
	for _, b := range bs {
		x0, x1 := sc.x(b.start), sc.x(b.end)
		r := rate(b.ok, b)
		d.Printf(`<rect class="bucket" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.8"><title>%s to %s: %d ok (%.1f/s), %d failed or unknown</title></rect>`+"\n",
			x0+0.5, y(r), max(x1-x0-1, 0.5), f.bottom-y(r), okBarColor, seconds(b.start), seconds(b.end), b.ok, r, b.notOK)
	}
	var pts []string
	for _, b := range bs {
		r := y(rate(b.notOK, b))
		pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", sc.x(b.start), r, sc.x(b.end), r))
	}
	if len(pts) > 0 {
		d.Printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="4 2"/>`+"\n", strings.Join(pts, " "), failLineColor)
	}
	d.b.WriteString("</g>\n")
	d.timeAxis(sc, f.bottom)
	return d.Close()
}

// Latency plots an analysed history's acquire latency.
func Latency(a *checker.Analysis) string {
	wins, sc, w, bs := buckets(a)
	type point struct {
		x, p50, max float64 // ms
		b           bucket
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var pts []*point // nil for an empty bucket
	for _, b := range bs {
		n := len(b.latencies)
		if n == 0 {
			pts = append(pts, nil)
			continue
		}
		p := &point{
			x:   (sc.x(b.start) + sc.x(b.end)) / 2,
			p50: float64(b.latencies[(n+1)/2-1]) / 1e6,
			max: float64(b.latencies[n-1]) / 1e6,
			b:   b,
		}
		lo, hi = min(lo, p.p50), max(hi, p.max)
		pts = append(pts, p)
	}
	// Decades from below the smallest p50 to above the largest max;
	// latencies under a microsecond are drawn at the bottom.
	dlo, dhi := -1.0, 1.0
	if !math.IsInf(lo, 0) {
		dlo = math.Floor(math.Log10(max(lo, 1e-3)))
		dhi = math.Ceil(math.Log10(max(hi, 1e-3)))
		if dhi <= dlo {
			dhi = dlo + 1
		}
	}
	f := newPlotFrame(180)
	y := func(ms float64) float64 {
		v := math.Log10(max(ms, math.Pow(10, dlo)))
		return f.bottom - (v-dlo)/(dhi-dlo)*(f.bottom-f.top)
	}
	var d SVG
	d.Open(svgWidth, f.height, "acquire latency over time")
	d.Printf(`<line x1="%d" y1="9" x2="%d" y2="9" stroke="%s" stroke-width="2"/>`+"\n", plotLeft, plotLeft+20, p50Color)
	d.Text(plotLeft+24, 13, "start", "#111", "p50")
	d.Printf(`<line x1="%d" y1="9" x2="%d" y2="9" stroke="%s" stroke-width="2"/>`+"\n", plotLeft+56, plotLeft+76, maxColor)
	d.Text(plotLeft+80, 13, "start", "#111", fmt.Sprintf("max of ok acquires' latency, ms (log scale), by return time, in %s buckets", dur(time.Duration(w))))
	for e := dlo; e <= dhi; e++ {
		d.gridLine(y(math.Pow(10, e)), strconvG(math.Pow(10, e)))
	}
	d.faultBands(sc, wins, f.labelTop, f.top, f.bottom)
	if math.IsInf(lo, 0) {
		d.Text(plotLeft+plotWidth/2, (f.top+f.bottom)/2, "middle", axisColor, "no acquire returned ok")
	}
	line := func(color string, v func(*point) float64) {
		var seg []string
		flush := func() {
			if len(seg) > 0 {
				d.Printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(seg, " "), color)
			}
			seg = seg[:0]
		}
		for _, p := range pts {
			if p == nil {
				flush()
				continue
			}
			seg = append(seg, fmt.Sprintf("%.1f,%.1f", p.x, y(v(p))))
		}
		flush()
	}
	d.b.WriteString(`<g class="latency">` + "\n")
	line(p50Color, func(p *point) float64 { return p.p50 })
	line(maxColor, func(p *point) float64 { return p.max })
	for _, p := range pts {
		if p == nil {
			continue
		}
		tip := fmt.Sprintf("%s to %s: %d ok acquires, p50 %.2f ms, max %.2f ms", seconds(p.b.start), seconds(p.b.end), len(p.b.latencies), p.p50, p.max)
		d.Printf(`<g class="bucket"><title>%s</title><circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/><circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/></g>`+"\n",
			esc(tip), p.x, y(p.p50), p50Color, p.x, y(p.max), maxColor)
	}
	d.b.WriteString("</g>\n")
	d.timeAxis(sc, f.bottom)
	return d.Close()
}
