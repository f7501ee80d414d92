package testutil

import (
	"sort"

	"github.com/locktorture/locktorture/history"
)

// History builds a history by hand, one operation (invoke and completion)
// a call, for the checker's and the report's tests. Events sorts it by
// time, keeping each process's own order.
type History struct {
	evs []history.Event
}

// Add appends events as they are.
func (h *History) Add(es ...history.Event) *History {
	h.evs = append(h.evs, es...)
	return h
}

// Acquire: process p acquires key, invoked at inv, ok at ret with token
// tok valid until vu.
func (h *History) Acquire(p int, key, tok string, inv, ret, vu int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Acquire, Process: p, Key: key, Time: inv},
		history.Event{Type: history.Ok, F: history.Acquire, Process: p, Key: key, Token: tok, ValidUntil: vu, Time: ret},
	)
}

// AcquireFenced is Acquire with a fencing token.
func (h *History) AcquireFenced(p int, key, tok string, fence, inv, ret, vu int64) *History {
	h.Acquire(p, key, tok, inv, ret, vu)
	h.evs[len(h.evs)-1].Fence = fence
	return h
}

// AcquireEnds: an acquire that ended with typ (fail or info).
func (h *History) AcquireEnds(p int, key string, typ history.Type, inv, ret int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Acquire, Process: p, Key: key, Time: inv},
		history.Event{Type: typ, F: history.Acquire, Process: p, Key: key, Time: ret, Error: "refused"},
	)
}

// Invoke: an operation that never completes.
func (h *History) Invoke(p int, f history.Func, key, tok string, t int64) *History {
	return h.Add(history.Event{Type: history.Invoke, F: f, Process: p, Key: key, Token: tok, Time: t})
}

// Release: p releases tok, invoked at inv, ok at ret.
func (h *History) Release(p int, key, tok string, inv, ret int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Release, Process: p, Key: key, Token: tok, Time: inv},
		history.Event{Type: history.Ok, F: history.Release, Process: p, Key: key, Token: tok, Time: ret},
	)
}

// Extend: p extends tok until vu, invoked at inv, ok at ret.
func (h *History) Extend(p int, key, tok string, inv, ret, vu int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Extend, Process: p, Key: key, Token: tok, Time: inv},
		history.Event{Type: history.Ok, F: history.Extend, Process: p, Key: key, Token: tok, ValidUntil: vu, Time: ret},
	)
}

// Section: an ok critical section that read r and wrote r+1.
func (h *History) Section(p int, key string, inv, ret, r int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Section, Process: p, Key: key, Time: inv},
		history.Event{Type: history.Ok, F: history.Section, Process: p, Key: key, Time: ret, Read: history.Int64(r), Wrote: history.Int64(r + 1)},
	)
}

// SectionEnds: a section with a fencing token that ended with typ (fail
// or info).
func (h *History) SectionEnds(p int, key string, typ history.Type, fence, inv, ret int64) *History {
	return h.Add(
		history.Event{Type: history.Invoke, F: history.Section, Process: p, Key: key, Fence: fence, Time: inv},
		history.Event{Type: typ, F: history.Section, Process: p, Key: key, Fence: fence, Time: ret, Error: "stale fence"},
	)
}

// Lost: the lock tells p, at t, that it lost the lease tok on key.
func (h *History) Lost(p int, key, tok string, t int64) *History {
	return h.Add(history.Event{Type: history.Info, F: history.Lost, Process: p, Key: key, Token: tok, Time: t, Error: "renewal refused"})
}

// Fault: a nemesis event (history.FaultStart or FaultStop) with value.
func (h *History) Fault(f history.Func, value string, t int64) *History {
	return h.Add(history.Event{Type: history.Info, F: f, Process: history.NemesisProcess, Value: value, Time: t})
}

// Events returns the events sorted by time; equal times keep their order,
// so each process's own order is kept.
func (h *History) Events() []history.Event {
	out := append([]history.Event(nil), h.evs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}
