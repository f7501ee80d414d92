package main

import (
	"sync"

	"github.com/locktorture/locktorture/history"
)

// watcher spots the first violation while a run is recorded, so that the
// run can stop there (harness.WithStop): a hold that starts while another
// hold of the key is open and still valid, or an ok section that read a
// value an earlier ok section of the key read (a lost update). It sees
// the events in an order consistent with causality (see harness.WithStop),
// which is all it needs; the checker gives the verdict afterwards.
type watcher struct {
	mu    sync.Mutex
	open  map[string]map[string]int64 // key → token → valid until, of open holds
	reads map[string]map[int64]bool   // key → values ok sections read
	found bool
	at    int64
	what  string
}

func newWatcher() *watcher {
	return &watcher{open: make(map[string]map[string]int64), reads: make(map[string]map[int64]bool)}
}

// observe takes one recorded event; it reports whether a violation has
// been seen.
func (w *watcher) observe(e history.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found {
		return true
	}
	switch {
	case e.F == history.Acquire && e.Type == history.Ok:
		holds := w.open[e.Key]
		if holds == nil {
			holds = make(map[string]int64)
			w.open[e.Key] = holds
		}
		for tok, until := range holds {
			if until <= e.Time {
				delete(holds, tok) // expired
				continue
			}
			w.found, w.at, w.what = true, e.Time, "lease"
		}
		holds[e.Token] = e.ValidUntil
	case e.F == history.Extend && e.Type == history.Ok:
		if _, ok := w.open[e.Key][e.Token]; ok {
			w.open[e.Key][e.Token] = e.ValidUntil
		}
	case e.F == history.Release && e.Type == history.Invoke:
		delete(w.open[e.Key], e.Token)
	case e.F == history.Section && e.Type == history.Ok && e.Read != nil:
		seen := w.reads[e.Key]
		if seen == nil {
			seen = make(map[int64]bool)
			w.reads[e.Key] = seen
		}
		if seen[*e.Read] {
			w.found, w.at, w.what = true, e.Time, "resource"
		}
		seen[*e.Read] = true
	}
	return w.found
}
