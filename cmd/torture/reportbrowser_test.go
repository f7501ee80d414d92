package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/locktorture/locktorture/report"
)

// chromium returns the path of a Chromium (or Chrome) binary on the
// PATH, or skips the test, saying why (scripts/deps installs Debian's).
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Skip("no chromium on the PATH (scripts/deps installs it)")
	return ""
}

// TestReportScreenshotClientStop: report.html of a client-stop run of
// setnx-watchdog (the self-renewing lock whose stopped holder is told of
// its loss only once it runs again), opened in a headless Chromium and
// photographed: one finding per fault step that broke something (not one
// per overlap), the loss notice drawn on the timeline and named in its
// legend, the fault band as long as the stop (the stop is recorded when
// the process is continued, not at the step's end), and the strike's
// line saying the notice came too late.
func TestReportScreenshotClientStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torture for 10 s and a headless browser")
	}
	exe := chromium(t)
	out := t.TempDir()
	stdout, stderr, code := torture(t, "run", "--lock", "setnx-watchdog", "--nemesis", "client-stop", "--seed", "1", "--keys", "1", "--hold", "3s", "--out", out)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d (the stopped holder's lease broken):\n%s\n%s", code, exitViolation, stdout, stderr)
	}
	if strings.Contains(stderr, "met the lock's defence") || !strings.Contains(stderr, "too late") {
		t.Errorf("the strike's line reads like a pass after a broken lease:\n%s", stderr)
	}
	dirs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("run folders %v (%v), want one", dirs, err)
	}
	r, err := report.ReadResults(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int]bool{}
	for _, f := range r.Findings {
		steps[f.Fault] = true
	}
	if len(r.Findings) == 0 || len(steps) != len(r.Findings) {
		t.Errorf("findings %+v: want one per fault step", r.Findings)
	}
	wins := r.Check.Stats.FaultWindows
	if len(wins) != 1 {
		t.Fatalf("fault windows %+v, want the one stop", wins)
	}
	var pause time.Duration
	for _, s := range r.Strikes {
		if i := strings.Index(s.Desc, "'s process for "); i >= 0 {
			pause, _ = time.ParseDuration(strings.TrimSuffix(strings.Fields(s.Desc[i+len("'s process for "):])[0], ","))
		}
	}
	ttl := time.Second // setnx-watchdog's default
	if w := time.Duration(wins[0].End - wins[0].Start); pause == 0 || w >= pause+ttl {
		t.Errorf("the fault's window lasts %v for a stop of %v: it ends with the step (stop + TTL), not with the stop", w, pause)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 2000))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	type shown struct {
		Findings int      `json:"findings"`
		Heads    []string `json:"heads"`
		Rows     int      `json:"rows"`
		Notices  int      `json:"notices"`
		Visible  bool     `json:"visible"`
		Legend   bool     `json:"legend"`
	}
	const probe = `(() => {
  const notices = Array.from(document.querySelectorAll('svg path.lost-notice'));
  const r = notices.length ? notices[0].getBoundingClientRect() : null;
  return {
    findings: document.querySelectorAll('ol.findings > li.finding').length,
    heads: Array.from(document.querySelectorAll('ol.findings > li.finding .cause')).map(e => e.textContent),
    rows: document.querySelectorAll('tr.overlap-row').length,
    notices: notices.length,
    visible: !!r && r.width > 0 && r.height > 0,
    legend: Array.from(document.querySelectorAll('svg text')).some(e => e.textContent === 'lost notice'),
  };
})()`
	url := "file://" + filepath.Join(dirs[0], "report.html")
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("chromium on %s: %v", url, err)
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[shown](probe))
	if err != nil {
		t.Fatalf("chromium on %s: %v", url, err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", url, err)
	}
	if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
		t.Errorf("the screenshot is no PNG: %v", err)
	}
	path := filepath.Join(t.ArtifactDir(), "report.png")
	if err := os.WriteFile(path, shot, 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(seen)
	t.Logf("screenshot %s (%d bytes); the page shows %s", path, len(shot), b)
	if seen.Findings != len(steps) {
		t.Errorf("the page shows %d findings for %d fault steps: %q", seen.Findings, len(steps), seen.Heads)
	}
	if seen.Rows > len(steps) {
		t.Errorf("the overlap table has %d rows for %d fault steps", seen.Rows, len(steps))
	}
	if seen.Notices == 0 || !seen.Visible || !seen.Legend {
		t.Errorf("the loss notice is not drawn: %s", b)
	}
}
