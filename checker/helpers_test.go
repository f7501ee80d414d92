package checker

import (
	"sort"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// hist builds a history by hand, one operation (invoke and completion) a
// call. Events() sorts by time, keeping each process's order.
type hist struct {
	evs []history.Event
}

func (h *hist) add(es ...history.Event) *hist {
	h.evs = append(h.evs, es...)
	return h
}

// acquire: p acquires key, invoked at inv, ok at ret with token tok valid
// until vu.
func (h *hist) acquire(p int, key, tok string, inv, ret, vu int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Acquire, Process: p, Key: key, Time: inv},
		history.Event{Type: history.Ok, F: history.Acquire, Process: p, Key: key, Token: tok, ValidUntil: vu, Time: ret},
	)
}

// acquireFenced is acquire with a fencing token.
func (h *hist) acquireFenced(p int, key, tok string, fence, inv, ret, vu int64) *hist {
	h.acquire(p, key, tok, inv, ret, vu)
	h.evs[len(h.evs)-1].Fence = fence
	return h
}

// acquireEnds: an acquire that ended with typ (fail or info).
func (h *hist) acquireEnds(p int, key string, typ history.Type, inv, ret int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Acquire, Process: p, Key: key, Time: inv},
		history.Event{Type: typ, F: history.Acquire, Process: p, Key: key, Time: ret, Error: "refused"},
	)
}

// invoke: an operation that never completes.
func (h *hist) invoke(p int, f history.Func, key, tok string, t int64) *hist {
	return h.add(history.Event{Type: history.Invoke, F: f, Process: p, Key: key, Token: tok, Time: t})
}

func (h *hist) release(p int, key, tok string, inv, ret int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Release, Process: p, Key: key, Token: tok, Time: inv},
		history.Event{Type: history.Ok, F: history.Release, Process: p, Key: key, Token: tok, Time: ret},
	)
}

func (h *hist) extend(p int, key, tok string, inv, ret, vu int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Extend, Process: p, Key: key, Token: tok, Time: inv},
		history.Event{Type: history.Ok, F: history.Extend, Process: p, Key: key, Token: tok, ValidUntil: vu, Time: ret},
	)
}

// section: an ok section that read r and wrote r+1.
func (h *hist) section(p int, key string, inv, ret, r int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Section, Process: p, Key: key, Time: inv},
		history.Event{Type: history.Ok, F: history.Section, Process: p, Key: key, Time: ret, Read: history.Int64(r), Wrote: history.Int64(r + 1)},
	)
}

// sectionEnds: a section that ended with typ (fail or info).
func (h *hist) sectionEnds(p int, key string, typ history.Type, fence, inv, ret int64) *hist {
	return h.add(
		history.Event{Type: history.Invoke, F: history.Section, Process: p, Key: key, Fence: fence, Time: inv},
		history.Event{Type: typ, F: history.Section, Process: p, Key: key, Fence: fence, Time: ret, Error: "stale fence"},
	)
}

func (h *hist) fault(f history.Func, value string, t int64) *hist {
	return h.add(history.Event{Type: history.Info, F: f, Process: history.NemesisProcess, Value: value, Time: t})
}

// Events returns the events sorted by time; equal times keep their order,
// so each process's own order is kept.
func (h *hist) Events() []history.Event {
	out := append([]history.Event(nil), h.evs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// mustCheck runs Check and fails the test on an error.
func mustCheck(tb testing.TB, evs []history.Event, opts Options) Result {
	tb.Helper()
	r, err := Check(evs, opts)
	if err != nil {
		tb.Fatalf("Check: %v", err)
	}
	return r
}

// wantVerdicts fails the test unless r has the given verdicts and no
// disagreement.
func wantVerdicts(tb testing.TB, r Result, lease, resource Verdict) {
	tb.Helper()
	if r.Lease != lease || r.Resource != resource {
		tb.Errorf("verdicts lease=%s resource=%s, want lease=%s resource=%s (result %+v)", r.Lease, r.Resource, lease, resource, r)
	}
	if r.Disagreement != "" {
		tb.Errorf("disagreement: %s", r.Disagreement)
	}
}
