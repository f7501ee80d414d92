package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

const ms = int64(time.Millisecond)

// smallHistory: three holds on two keys, two of them overlapping on
// "k<0>" (a key that needs escaping), one failed acquire during the one
// fault, whose description needs escaping too.
func smallHistory() []history.Event {
	return new(testutil.History).
		Acquire(0, "k<0>", "a", 0, 10*ms, 600*ms).
		Acquire(1, "k<0>", "b", 5*ms, 200*ms, 700*ms). // overlaps a: P0 holds until its release at 300 ms
		Release(0, "k<0>", "a", 300*ms, 301*ms).
		Fault(history.FaultStart, `partition "a" & <b>`, 400*ms).
		AcquireEnds(2, "k1", history.Fail, 450*ms, 460*ms).
		Fault(history.FaultStop, `partition "a" & <b>`, 800*ms).
		Release(1, "k<0>", "b", 900*ms, 901*ms).
		Acquire(2, "k1", "c", 1000*ms, 1002*ms, 2000*ms).
		Release(2, "k1", "c", 1500*ms, 1501*ms).
		Events()
}

// element is one start element of a decoded SVG.
type element struct {
	name  string
	attrs map[string]string
	text  string // character data directly inside it
}

// parseSVG decodes doc strictly as XML and returns its elements in order;
// it fails the test if doc is not well-formed or its root is not an svg.
func parseSVG(tb testing.TB, doc string) []element {
	tb.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var out []element
	var stack []int
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := element{name: t.Name.Local, attrs: map[string]string{}}
			for _, a := range t.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(t)
			}
		}
	}
	if len(out) == 0 || out[0].name != "svg" || out[0].attrs["xmlns"] != "http://www.w3.org/2000/svg" {
		tb.Fatalf("root is not an svg element: %.200s", doc)
	}
	return out
}

// count returns how many elements have the name and, if class is not
// empty, exactly that class.
func count(els []element, name, class string) int {
	n := 0
	for _, e := range els {
		if e.name == name && (class == "" || e.attrs["class"] == class) {
			n++
		}
	}
	return n
}

// hasText reports whether some element's text contains s.
func hasText(els []element, s string) bool {
	for _, e := range els {
		if strings.Contains(e.text, s) {
			return true
		}
	}
	return false
}

func mustCheck(tb testing.TB, evs []history.Event) checker.Result {
	tb.Helper()
	r, err := checker.Check(evs, checker.Options{})
	if err != nil {
		tb.Fatalf("Check: %v", err)
	}
	return r
}

func TestTimelineSVG(t *testing.T) {
	h := smallHistory()
	res := mustCheck(t, h)
	svg, err := TimelineSVG(h, res)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, svg)
	if n := count(els, "rect", "hold"); n != 1 {
		t.Errorf("%d plain hold bars, want 1 (k1)", n)
	}
	if n := count(els, "rect", "hold overlap"); n != 2 {
		t.Errorf("%d overlap bars, want 2", n)
	}
	if n := count(els, "rect", "fault-band"); n != 1 {
		t.Errorf("%d fault bands, want 1", n)
	}
	for _, want := range []string{
		`fault 1: partition "a" & <b>, from 0.400 s to 0.800 s`, // tooltip, unescaped by the decoder
		"P1 holds k<0> from 0.200 s to 0.700 s",
		"overlaps another hold of k<0>",
		"P2", // a row label
		"1 s",
	} {
		if !hasText(els, want) {
			t.Errorf("no text %q in\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "merged") {
		t.Errorf("a small history is not merged:\n%s", svg)
	}
}

func TestTimelineSVGMalformed(t *testing.T) {
	h := []history.Event{{Type: history.Ok, F: history.Acquire, Process: 0, Key: "k", Token: "t", ValidUntil: 5, Time: 1}}
	if _, err := TimelineSVG(h, checker.Result{}); !errors.Is(err, checker.ErrMalformed) {
		t.Errorf("err = %v, want ErrMalformed", err)
	}
}

func TestPlotsSVG(t *testing.T) {
	h := smallHistory()
	res := mustCheck(t, h)
	for name, svg := range map[string]string{
		"throughput": ThroughputSVG(h, res),
		"latency":    LatencySVG(h, res),
	} {
		t.Run(name, func(t *testing.T) {
			els := parseSVG(t, svg)
			if n := count(els, "rect", "fault-band"); n != 1 {
				t.Errorf("%d fault bands, want 1", n)
			}
			if !hasText(els, `partition "a" & <b>`) {
				t.Error("no fault description")
			}
		})
	}
	// The span is 0 to 1.501 s: buckets of 100 ms, 15 of them, the
	// last widened to the end.
	els := parseSVG(t, ThroughputSVG(h, res))
	if n := count(els, "rect", "bucket"); n != 15 {
		t.Errorf("%d throughput buckets, want 15", n)
	}
	if !hasText(els, "0.200 s to 0.300 s: 1 ok (10.0/s), 0 failed or unknown") {
		t.Error("no tooltip for the bucket of the second acquire")
	}
	els = parseSVG(t, LatencySVG(h, res))
	if n := count(els, "g", "bucket"); n != 3 {
		t.Errorf("%d latency points, want 3 (one per ok acquire's bucket)", n)
	}
	if !hasText(els, "0.200 s to 0.300 s: 1 ok acquires, p50 195.00 ms, max 195.00 ms") {
		t.Error("no tooltip for the latency of the second acquire")
	}
}

func TestSVGEmptyHistory(t *testing.T) {
	svg, err := TimelineSVG(nil, checker.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if els := parseSVG(t, svg); !hasText(els, "no holds") {
		t.Error("empty timeline does not say so")
	}
	parseSVG(t, ThroughputSVG(nil, checker.Result{}))
	if els := parseSVG(t, LatencySVG(nil, checker.Result{})); !hasText(els, "no acquire returned ok") {
		t.Error("empty latency plot does not say so")
	}
}

func TestTimelineSVGBounded(t *testing.T) {
	// 20 clients, one key each, holds of 1 ms every 2 ms for 2 s: 20 000
	// holds, less than a pixel apart, merged into one bar per row. Key
	// "x" has two overlapping holds that must stay visible.
	hist := new(testutil.History)
	for p := range 20 {
		key := "k" + string(rune('a'+p))
		for i := range int64(1000) {
			t0 := i * 2 * ms
			hist.Acquire(p, key, "t", t0, t0+ms/2, t0+ms).Release(p, key, "t", t0+ms, t0+ms+1)
		}
	}
	h := hist.Acquire(20, "x", "a", 0, 1, 100*ms).Acquire(21, "x", "b", 0, 50*ms, 150*ms).Events()
	res := mustCheck(t, h)
	svg, err := TimelineSVG(h, res)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, svg)
	bars := count(els, "rect", "hold") + count(els, "rect", "hold overlap")
	if bars > MaxTimelineBars || bars == 0 {
		t.Errorf("%d bars, want 1 to %d", bars, MaxTimelineBars)
	}
	if n := count(els, "rect", "hold overlap"); n != 2 {
		t.Errorf("%d overlap bars, want 2", n)
	}
	// 20 rows merged into a bar each, and the two overlapping holds.
	if n := count(els, "rect", "hold"); n != 20 {
		t.Errorf("%d plain bars, want 20", n)
	}
	var note string
	for _, e := range els {
		if e.attrs["class"] == "note" {
			note = e.text
		}
	}
	if want := "20002 holds shown as 22 bars: holds of one client and key less than 1 px (1.78ms) apart are merged into one bar."; note != want {
		t.Errorf("note %q\nwant %q", note, want)
	}
}

func TestBoundBarsSamples(t *testing.T) {
	// Bars of 1 ms every 10 ms, a pixel being 0.1 ms: even 16 px
	// (1.6 ms) do not merge them, so they are sampled, keeping the
	// overlap.
	var bars []bar
	for i := range int64(100) {
		bars = append(bars, bar{process: 0, key: "k", start: 10 * i * ms, end: (10*i + 1) * ms, holds: 1})
	}
	bars = append(bars, bar{process: 1, key: "k", start: 5 * ms, end: 6 * ms, holds: 1, overlap: true})
	got, note := boundBars(bars, 21, float64(ms)/10)
	if len(got) > 21 {
		t.Errorf("%d bars, want at most 21", len(got))
	}
	if !got[0].overlap {
		t.Error("overlapping bar not kept first")
	}
	if want := "101 holds shown as 101 bars: holds of one client and key less than 16 px (1.6ms) apart are merged into one bar; of these only every 5th bar is drawn, plus all 1 bars of overlapping holds."; note != want {
		t.Errorf("note %q\nwant %q", note, want)
	}
	if got, note := boundBars(bars[:10], 21, 1); len(got) != 10 || note != "" {
		t.Errorf("under the limit: %d bars, note %q", len(got), note)
	}
}

func TestBoundBarsMergesWider(t *testing.T) {
	// Bars 3 ms apart, a pixel being 1 ms: merging at 1 and 2 px is not
	// enough, at 4 px it is.
	var bars []bar
	for i := range int64(40) {
		bars = append(bars, bar{process: 0, key: "k", start: 10 * i * ms, end: (10*i + 7) * ms, holds: 1})
	}
	got, note := boundBars(bars, 10, float64(ms))
	if len(got) != 1 || got[0].holds != 40 || got[0].start != 0 || got[0].end != 397*ms {
		t.Errorf("bars %+v, want one of 40 holds", got)
	}
	if want := "40 holds shown as 1 bars: holds of one client and key less than 4 px (4ms) apart are merged into one bar."; note != want {
		t.Errorf("note %q\nwant %q", note, want)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStrconvG(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{{0, "0"}, {math.Copysign(0, -1), "0"}, {-1e-9, "0"}, {2.5, "2.5"}, {0.1 + 0.2, "0.3"}, {10, "10"}, {1000, "1000"}} {
		if got := strconvG(tt.in); got != tt.want {
			t.Errorf("strconvG(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBucketWidth(t *testing.T) {
	sec := int64(time.Second)
	tests := []struct {
		span, want int64
	}{
		{10 * sec, sec},
		{60 * sec, sec},
		{120 * sec, sec},
		{600 * sec, 5 * sec},
		{3600 * sec, 50 * sec},
		{2 * sec, 100 * ms},
		{1, 1},
	}
	for _, tt := range tests {
		if got := bucketWidth(tt.span); got != tt.want {
			t.Errorf("bucketWidth(%v) = %v, want %v", time.Duration(tt.span), time.Duration(got), time.Duration(tt.want))
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{0.8, 1}, {1, 1}, {1.0005, 2}, {3, 5}, {7, 10}, {0.013, 0.02}, {0, 1}, {120, 200},
	} {
		if got := niceStep(tt.in); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TimelineSVG draws the holds of the history (see checker.Holds) as an
// SVG: one row per client, one bar per hold coloured by key, holds that
// overlap another hold of the same key in red, res.Stats.FaultWindows as
// numbered translucent bands over all rows with the fault as tooltip, and
// a time axis in seconds. At most MaxTimelineBars bars are drawn; the SVG
// says when holds were merged or sampled. The error is that of
// checker.Holds, for a malformed history.
func TimelineSVG(events []history.Event, res checker.Result) (string, error) {
	a, err := collect(events, res)
	if err != nil {
		return "", fmt.Errorf("report: timeline: %w", err)
	}
	return Timeline(&a), nil
}

// collect is the analysis of events for the plots, with the check's
// result res.
func collect(events []history.Event, res checker.Result) (checker.Analysis, error) {
	a, err := checker.Collect(events)
	a.Result = res
	return a, err
}

// ThroughputSVG plots, per time bucket (see bucketWidth: 1 s for runs of
// 10 s to 2 min), the acquires that returned ok per second as bars and
// those that failed or returned info per second as a line, by the time
// they returned, under res.Stats.FaultWindows as numbered bands.
func ThroughputSVG(events []history.Event, res checker.Result) string {
	a, _ := collect(events, res) // a malformed history: what was read
	return Throughput(&a)
}

// LatencySVG plots, per time bucket (as ThroughputSVG), the p50
// (nearest rank) and the maximum of the invoke-to-ok latency of the
// acquires that returned ok in it, on a logarithmic axis in milliseconds,
// under res.Stats.FaultWindows as numbered bands. Buckets without an ok
// acquire leave a gap in the lines.
func LatencySVG(events []history.Event, res checker.Result) string {
	a, _ := collect(events, res) // a malformed history: what was read
	return Latency(&a)
}

// TestTimelineLostNotice: a hold the lock ended with a loss notice gets a
// diamond at the notice on its client's row, and the legend names it; a
// timeline with no notice has neither.
func TestTimelineLostNotice(t *testing.T) {
	const ms = int64(time.Millisecond)
	h := new(testutil.History).
		Acquire(0, "k0", "t0", 0, 10*ms, 1<<62).
		Acquire(1, "k0", "t1", 500*ms, 510*ms, 1<<62).
		Lost(0, "k0", "t0", 800*ms).
		Release(1, "k0", "t1", 900*ms, 910*ms).Events()
	svg := Timeline(analyzed(t, h))
	els := parseSVG(t, svg)
	if n := count(els, "path", "lost-notice"); n != 1 {
		t.Errorf("%d loss notices drawn, want 1:\n%s", n, svg)
	}
	for _, want := range []string{"lost notice", "P0 was told at 0.800 s that it lost k0"} {
		if !hasText(els, want) {
			t.Errorf("no text %q in\n%s", want, svg)
		}
	}
	plain := Timeline(analyzed(t, new(testutil.History).Acquire(0, "k0", "t0", 0, 10*ms, 100*ms).Events()))
	if strings.Contains(plain, "lost-notice") || strings.Contains(plain, "lost notice") {
		t.Errorf("a timeline without a notice draws one:\n%s", plain)
	}
}
