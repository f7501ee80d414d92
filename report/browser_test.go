package report

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
)

// chromium returns the path of a Chromium (or Chrome) binary. When none
// is on the PATH it runs scripts/deps, which installs Debian's chromium,
// and skips the test only if that cannot install it, saying why.
func chromium(tb testing.TB) string {
	tb.Helper()
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join("..", "scripts", "deps")).CombinedOutput()
	if p := find(); p != "" {
		return p
	}
	tb.Skipf("no chromium on the PATH, and scripts/deps could not install it (%v): %s", err, strings.TrimSpace(string(out)))
	return ""
}

// beacons is an HTTP server for the pages under test: it serves dir, and
// counts every request to /beacon, which each payload makes when its
// markup is parsed (an <img src=/beacon?...>) or its script runs.
type beacons struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string
}

func serve(tb testing.TB, dir string) *beacons {
	tb.Helper()
	b := &beacons{}
	files := http.FileServer(http.Dir(dir))
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/beacon") {
			b.mu.Lock()
			b.hits = append(b.hits, r.URL.RequestURI())
			b.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		files.ServeHTTP(w, r)
	}))
	tb.Cleanup(b.srv.Close)
	return b
}

func (b *beacons) count() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.hits...)
}

// hoverScript fires, on every element that porcupine's visualization
// listens to (its .target-rect history boxes: mouseover, mousemove,
// mouseout, click; the background: click; the jump link: click), the
// events a person's mouse would, and reports what it saw: how many
// targets, every tooltip text shown, and markup found in the tooltip.
const hoverScript = `(() => {
  const fire = (el, type) => {
    const r = el.getBoundingClientRect();
    el.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2}));
  };
  const seen = {targets: 0, tooltips: [], markup: [], title: document.title};
  const look = () => {
    const tip = document.querySelector('.tooltip');
    if (!tip) return;
    seen.tooltips.push(tip.textContent);
    for (const el of tip.querySelectorAll('*')) {
      if (!['BR', 'STRONG'].includes(el.tagName)) seen.markup.push(el.outerHTML);
    }
  };
  const targets = Array.from(document.querySelectorAll('.target-rect'));
  seen.targets = targets.length;
  for (const t of targets) {
    fire(t, 'mouseover'); fire(t, 'mousemove'); look(); fire(t, 'mouseout');
  }
  for (const t of targets) {
    fire(t, 'click'); look();
    for (const u of targets) { fire(u, 'mouseover'); fire(u, 'mousemove'); look(); }
    fire(t, 'click');
  }
  for (const el of document.querySelectorAll('.bg, #jump-link, text, rect, g, title')) {
    fire(el, 'mouseover'); fire(el, 'mousemove'); fire(el, 'click'); fire(el, 'mouseout');
  }
  seen.title = document.title;
  return seen;
})()`

// frameReport is what hoverScript saw in one frame.
type frameReport struct {
	URL      string   `json:"-"`
	Targets  int      `json:"targets"`
	Tooltips []string `json:"tooltips"`
	Markup   []string `json:"markup"`
	Title    string   `json:"title"`
}

// hoverAll loads url in headless Chromium and runs hoverScript in the page
// and in every frame in it (porcupine's visualizations are sandboxed
// iframes), each in an isolated world of its own: it shares the frame's
// DOM, so its events reach the page's listeners, but none of the page's
// scripts can reach it. The page's own scripts run in the main world as
// usual; a payload that runs sets document.title, which every world sees,
// and requests /beacon.
func hoverAll(tb testing.TB, exe, url string) []frameReport {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root; the page is ours
		// Keep sandboxed iframes in the page's process, so that one
		// DevTools session reaches every frame.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,IsolateSandboxedIframes,site-per-process"),
		chromedp.Flag("disable-site-isolation-trials", true),
	)
	actx, cancel := chromedp.NewExecAllocator(tb.Context(), opts...)
	tb.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(cancel)
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	var reports []frameReport
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			tree, err := cdp.Call(ctx, t, cdppage.GetFrameTree, cdp.Empty{})
			if err != nil {
				return err
			}
			var frames []*cdp.Frame
			var walk func(*cdppage.FrameTree)
			walk = func(ft *cdppage.FrameTree) {
				frames = append(frames, ft.Frame)
				for _, c := range ft.ChildFrames {
					walk(c)
				}
			}
			walk(tree.FrameTree)
			byValue := true
			for _, f := range frames {
				world, err := cdp.Call(ctx, t, cdppage.CreateIsolatedWorld, cdppage.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: "hover"})
				if err != nil {
					return fmt.Errorf("frame %s: %w", f.URL, err)
				}
				res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: hoverScript, ContextID: world.ExecutionContextID, ReturnByValue: &byValue})
				if err != nil {
					return fmt.Errorf("frame %s: %w", f.URL, err)
				}
				if res.ExceptionDetails != nil {
					return fmt.Errorf("frame %s: %s", f.URL, res.ExceptionDetails.Text)
				}
				var r frameReport
				if err := json.Unmarshal(res.Result.Value, &r); err != nil {
					return fmt.Errorf("frame %s: %w", f.URL, err)
				}
				r.URL = f.URL
				reports = append(reports, r)
			}
			return nil
		}),
	)
	if err != nil {
		tb.Fatalf("chromium on %s: %v", url, err)
	}
	return reports
}

// hostileResults checks testdata/hostile.jsonl, whose keys, tokens,
// error texts and fault value carry HTML and script payloads.
func hostileResults(tb testing.TB) ([]history.Event, Results) {
	tb.Helper()
	events, err := history.ReadFile("testdata/hostile.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	res, err := checker.Check(events, checker.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return events, Results{
		RunID:   `run"><img src=/beacon?runid onerror="document.title='pwned runid'">`,
		Command: `torture run --lock "<script>new Image().src='/beacon?command'</script>"`,
		Config:  map[string]any{"lock": "<img src=/beacon?config>"},
		Lease:   res.Lease, Resource: res.Resource, Check: res,
	}
}

// payloadRan lists the signs that a payload ran or became markup.
func payloadRan(reports []frameReport, hits []string) []string {
	var signs []string
	for _, h := range hits {
		signs = append(signs, "request to "+h)
	}
	for _, r := range reports {
		if strings.HasPrefix(r.Title, "pwned") { // what every payload sets; the title may quote one as text
			signs = append(signs, fmt.Sprintf("frame %.40s: title %q", r.URL, r.Title))
		}
		for _, m := range r.Markup {
			signs = append(signs, fmt.Sprintf("frame %.40s: markup in a tooltip: %s", r.URL, m))
		}
	}
	return signs
}

// TestReportRunsNoPayload renders report.html from a history whose keys,
// tokens, error texts and fault values carry HTML and script payloads,
// and a matrix index.html whose command, cell and errors do, loads each
// in headless Chromium, hovers and clicks every element of porcupine's
// visualizations (tooltips included), and finds that no payload ran or
// became markup; the payloads show as text. A control page, porcupine's
// visualization with the tokens put in its state descriptions raw, shows
// that the same probe sees a payload that runs.
func TestReportRunsNoPayload(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	events, r := hostileResults(t)
	if r.Lease != checker.Invalid {
		t.Fatalf("the hostile history should violate the lease: %s", r.Lease)
	}
	if err := WriteHTML(filepath.Join(dir, "report.html"), r, analyzed(t, events), checker.Options{}); err != nil {
		t.Fatal(err)
	}
	m := Matrix{
		Command: `torture matrix <img src=/beacon?matrix-command onerror="document.title='pwned'">`,
		Cells: []Cell{{
			Name: `cell"><script>new Image().src='/beacon?cell'</script>`, Lock: "setnx", Nemesis: "<b>none</b>",
			Outcome: checker.OutcomeViolation, Expect: ExpectSafe,
			Runs: []CellRun{{Seed: 1, Dir: `runs/"><img src=/beacon?dir>`, Error: `<img src=/beacon?error onerror="document.title='pwned'">`}},
		}},
	}
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	b := serve(t, dir)

	for _, name := range []string{"report.html", "index.html"} {
		before := len(b.count())
		reports := hoverAll(t, exe, b.srv.URL+"/"+name)
		if signs := payloadRan(reports, b.count()[before:]); len(signs) > 0 {
			t.Errorf("%s: a payload ran or became markup:\n%s", name, strings.Join(signs, "\n"))
		}
		if name != "report.html" {
			continue
		}
		targets, shown := 0, false
		for _, fr := range reports {
			targets += fr.Targets
			for _, tip := range fr.Tooltips {
				shown = shown || strings.Contains(tip, `"><img src=/beacon?t0-img onerror=`)
			}
		}
		t.Logf("%s: %d frames, %d history boxes hovered", name, len(reports), targets)
		if len(reports) < 3 || targets == 0 {
			t.Errorf("%s: %d frames, %d history boxes: the visualizations were not probed", name, len(reports), targets)
		}
		if !shown {
			t.Errorf("%s: no tooltip shows the token as text", name)
		}
	}

	// The control: the same probe on a visualization whose state
	// descriptions carry the tokens raw, framed as report.html frames it.
	holdToken := map[int]string{}
	var ops []porcupine.Operation
	for i, e := range events {
		if e.F == history.Acquire && e.Type == history.Ok {
			holdToken[i] = e.Token
			ops = append(ops, porcupine.Operation{ClientId: e.Process, Input: i, Call: e.Time, Output: nil, Return: e.Time + 1})
		}
	}
	raw := porcupine.Model{
		Init:              func() any { return -1 },
		Step:              func(_, in, _ any) (bool, any) { return true, in },
		Equal:             func(a, b any) bool { return a == b },
		DescribeOperation: func(in, _ any) string { return "lock" },
		DescribeState: func(s any) string {
			return "held with token " + holdToken[s.(int)] // raw: the bug
		},
	}
	_, info := porcupine.CheckOperationsVerbose(raw, ops, time.Second)
	var doc strings.Builder
	if err := porcupine.Visualize(raw, info, &doc); err != nil {
		t.Fatal(err)
	}
	control := `<!DOCTYPE html><html><body><iframe sandbox="allow-scripts" srcdoc="` + html.EscapeString(doc.String()) + `"></iframe></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "control.html"), []byte(control), 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(b.count())
	reports := hoverAll(t, exe, b.srv.URL+"/control.html")
	if signs := payloadRan(reports, b.count()[before:]); len(signs) == 0 {
		t.Errorf("control: the probe saw no payload run in a visualization that puts tokens raw into its tooltips: %+v", reports)
	} else {
		t.Logf("control: %d signs, e.g. %s", len(signs), signs[0])
	}
}
