package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/matrix"
)

// progress shows a run's progress: one line rewritten in place on a
// terminal, plain log lines otherwise (CI logs).
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	last int
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty}
}

func (p *progress) update(s harness.Progress) {
	left := max(s.Duration-s.Elapsed, 0).Round(time.Second)
	p.show(fmt.Sprintf("%5.1fs  %d acquired / %d attempts  %d events  %s left",
		s.Elapsed.Seconds(), s.Acquired, s.Attempts, s.Events, left))
}

// show rewrites the line in place on a terminal, or logs it.
func (p *progress) show(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r%-*s", p.last, line)
		p.last = len(line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.last > 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// matrix shows a matrix run's progress: cells done, the current cell,
// time left.
func (p *progress) matrix(s matrix.Progress) {
	line := fmt.Sprintf("[%d/%d] %s seed %d  elapsed %s, about %s left", s.Done, s.Total, s.Cell, s.Seed,
		s.Elapsed.Round(time.Second), s.Left.Round(time.Second))
	if s.Cell == "" {
		line = fmt.Sprintf("[%d/%d] done in %s", s.Done, s.Total, s.Elapsed.Round(time.Second))
	}
	p.show(line)
}

// logLines is an io.Writer that shows each line written to it through a
// progress, so log lines and the progress line do not garble each other.
type logLines struct{ p *progress }

func (l logLines) Write(b []byte) (int, error) {
	for line := range strings.Lines(string(b)) {
		l.p.log(strings.TrimRight(line, "\n"))
	}
	return len(b), nil
}

// log prints line on a line of its own, above the progress line on a
// terminal.
func (p *progress) log(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.last > 0 {
		fmt.Fprint(p.w, "\r\033[K")
		p.last = 0
	}
	fmt.Fprintln(p.w, line)
}
