package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/locktorture/locktorture/harness"
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
	p.mu.Lock()
	defer p.mu.Unlock()
	left := max(s.Duration-s.Elapsed, 0).Round(time.Second)
	line := fmt.Sprintf("%5.1fs  %d acquired / %d attempts  %d events  %s left",
		s.Elapsed.Seconds(), s.Acquired, s.Attempts, s.Events, left)
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
