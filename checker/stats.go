package checker

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/locktorture/locktorture/history"
)

// Stats are liveness and latency figures of a history. Times are
// nanosecond offsets from the run's base, like history.Event.Time;
// durations are in nanoseconds in JSON.
type Stats struct {
	// Events is the number of events, Start and End the times of the
	// first and last, Duration End - Start.
	Events   int           `json:"events"`
	Start    int64         `json:"start"`
	End      int64         `json:"end"`
	Duration time.Duration `json:"duration_ns"`
	// Ops counts operations by f and outcome: "ok", "fail", "info", or
	// "unfinished" (invoked, never completed); nemesis events count as
	// "info" under their f.
	Ops map[string]map[string]int `json:"ops"`
	// FaultEvents is the number of fault-start and fault-stop events.
	FaultEvents int `json:"fault_events"`
	// Holds is the number of holds (see Holds); EmptyHolds the acquires
	// that returned ok after their validity had passed, which hold
	// nothing; MaxKeyHolds the holds of the key held most often (below
	// two, no two holds could overlap).
	Holds       int `json:"holds"`
	EmptyHolds  int `json:"empty_holds,omitempty"`
	MaxKeyHolds int `json:"max_key_holds"`
	// LateExtends counts the extends that returned ok although invoked
	// after their hold's validity (see the package doc), LossNotices the
	// loss notices (history.Lost).
	LateExtends int `json:"late_extends,omitempty"`
	LossNotices int `json:"loss_notices,omitempty"`
	// Sections counts the critical sections, finished or not; SectionsOK
	// those that returned ok.
	Sections   int `json:"sections"`
	SectionsOK int `json:"sections_ok"`
	// AcquireOK and AcquireCompleted count the acquires that returned ok,
	// and that returned at all.
	AcquireOK        int `json:"acquire_ok"`
	AcquireCompleted int `json:"acquire_completed"`
	// AcquisitionsPerSecond is AcquireOK / Duration, SuccessRatio
	// AcquireOK / AcquireCompleted (0 when the divisor is).
	AcquisitionsPerSecond float64 `json:"acquisitions_per_second"`
	SuccessRatio          float64 `json:"success_ratio"`
	// AcquireLatency is the invoke-to-ok time of the ok acquires.
	AcquireLatency Latency `json:"acquire_latency"`
	// LongestGap is the longest liveness gap (see Gap), nil when no
	// acquire ever found a key free.
	LongestGap *Gap `json:"longest_gap,omitempty"`
	// LongestWait is the longest a client waited, under no fault, for a
	// key others were granted meanwhile (see Wait); nil for none.
	LongestWait *Wait `json:"longest_wait,omitempty"`
	// FaultWindows are the stretches in which a fault was active, sorted
	// by Start then End (see Window).
	FaultWindows []Window `json:"fault_windows,omitempty"`
	// AcquireCompletedDuringFaults and AcquireOKDuringFaults count the
	// acquires invoked during a fault (Window.Start ≤ invoke ≤
	// Window.End) that returned at all, and that returned ok.
	AcquireCompletedDuringFaults int `json:"acquire_completed_during_faults"`
	AcquireOKDuringFaults        int `json:"acquire_ok_during_faults"`
	// AvailabilityDuringFaults is AcquireOKDuringFaults /
	// AcquireCompletedDuringFaults, or -1, "not measured", when that is 0
	// (every history without faults): callers that average it must skip
	// the -1s.
	AvailabilityDuringFaults float64 `json:"availability_during_faults"`
	// FaultAvailability is, for each stretch of faults (the windows
	// merged), the availability before, during and after it.
	FaultAvailability []Availability `json:"fault_availability,omitempty"`
}

// Availability is the share of the acquires invoked before (since the
// previous stretch), during and after (until the next) one stretch of
// faults, Start to End, that returned ok, of those that returned at all;
// -1 for a part in which none returned.
type Availability struct {
	Start  int64   `json:"start"`
	End    int64   `json:"end"`
	Before float64 `json:"before"`
	During float64 `json:"during"`
	After  float64 `json:"after"`
}

// Window is a stretch of time in which one fault was active, from the
// Time of its fault-start to its fault-stop's (Start ≤ End). Starts and
// stops are paired by Value (Desc), first in first out. A fault-start
// never stopped lasts until the last event of the history (UntilEnd); a
// fault-stop with no open start is a window of zero length. Family is the
// fault-start's, "" when the history did not record it.
type Window struct {
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Desc     string `json:"desc"`
	Family   string `json:"family,omitempty"`
	UntilEnd bool   `json:"until_end,omitempty"`
}

// faultWindows pairs fault-starts with fault-stops as a scan goes.
type faultWindows struct {
	wins []Window
	open map[string][]int // Value → indices into wins of open windows, oldest first
}

// add takes a fault-start or fault-stop event; other events are ignored.
func (f *faultWindows) add(e *history.Event) {
	switch e.F {
	case history.FaultStart:
		if f.open == nil {
			f.open = make(map[string][]int)
		}
		f.open[e.Value] = append(f.open[e.Value], len(f.wins))
		f.wins = append(f.wins, Window{Start: e.Time, End: e.Time, Desc: e.Value, Family: e.Family})
	case history.FaultStop:
		q := f.open[e.Value]
		if len(q) == 0 {
			f.wins = append(f.wins, Window{Start: e.Time, End: e.Time, Desc: e.Value})
			return
		}
		w := &f.wins[q[0]]
		w.End = max(e.Time, w.Start)
		f.open[e.Value] = q[1:]
	}
}

// finish closes the windows still open at end, the time of the last
// event, and returns all of them sorted by Start then End.
func (f *faultWindows) finish(end int64) []Window {
	for _, q := range f.open {
		for _, i := range q {
			f.wins[i].End = max(end, f.wins[i].Start)
			f.wins[i].UntilEnd = true
		}
	}
	f.open = nil
	slices.SortStableFunc(f.wins, func(a, b Window) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	return f.wins
}

// during reports whether t lies in one of the merged windows (see
// mergeWindows).
func during(merged []Window, t int64) bool { return faultPart(merged, t)%2 == 1 }

// faultPart is the part of the run t lies in: 2i+1 in merged window i,
// 2i in the quiet time before it (2n after the last).
func faultPart(merged []Window, t int64) int {
	i := sort.Search(len(merged), func(i int) bool { return merged[i].Start > t }) // first window starting after t
	if i > 0 && t <= merged[i-1].End {
		return 2*i - 1
	}
	return 2 * i
}

// mergeWindows returns the union of windows sorted by Start as disjoint
// sorted windows, without Desc and UntilEnd.
func mergeWindows(wins []Window) []Window {
	var out []Window
	for _, w := range wins {
		if n := len(out); n > 0 && w.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, w.End)
			continue
		}
		out = append(out, Window{Start: w.Start, End: w.End})
	}
	return out
}

// Latency summarises a set of durations. Percentiles are nearest-rank:
// the p-th percentile of n sorted samples is sample number ⌈p·n/100⌉.
type Latency struct {
	// N is the number of samples; the rest are zero when N is 0.
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

// Gap is a liveness gap: a stretch in which Key was free (no Hold, a
// half-open [Start, End), covered it) while acquires on it were in
// progress and none succeeded. It opens at the first such instant (an
// acquire invoked on a free key, or a hold ending while an acquire is
// open) and closes at the next acquire ok; failures do not close it.
// When no acquire succeeds any more (UntilEnd), it ends with the last
// attempt on the key: a run that stops trying is not stuck. An acquire
// that never completed stays in progress to the end of the history.
type Gap struct {
	Key      string        `json:"key"`
	Start    int64         `json:"start"`
	Duration time.Duration `json:"duration_ns"`
	UntilEnd bool          `json:"until_end,omitempty"`
}

// stats computes the statistics; keys are the sorted keys of d.
func (d *scanned) stats(keys []string) Stats {
	st := Stats{
		Events:      d.events,
		Start:       d.first,
		End:         d.last,
		Duration:    time.Duration(d.last - d.first),
		Ops:         d.ops,
		FaultEvents: d.faultEvents,
		EmptyHolds:  d.emptyHolds,
		LateExtends: d.lateExtends,
		LossNotices: d.lossNotices,

		FaultWindows:             d.windows,
		AvailabilityDuringFaults: -1,
	}
	merged := mergeWindows(d.windows)
	// The completed acquires by the part of the run they were invoked
	// in: quiet 0, faults 0, quiet 1, faults 1, …, quiet n.
	oks := make([]int, 2*len(merged)+1)
	dones := make([]int, len(oks))
	for _, k := range keys {
		kd := d.keys[k]
		st.Holds += len(kd.holds)
		st.MaxKeyHolds = max(st.MaxKeyHolds, len(kd.holds))
		st.Sections += len(kd.sections)
		for _, sec := range kd.sections {
			if sec.kind == sectionOK {
				st.SectionsOK++
			}
		}
		for _, a := range kd.attempts {
			if a.ok {
				st.AcquireOK++
			}
			if a.ret == math.MaxInt64 {
				continue
			}
			st.AcquireCompleted++
			p := faultPart(merged, a.call)
			dones[p]++
			if a.ok {
				oks[p]++
			}
		}
		for _, g := range keyGaps(k, kd, d.last) {
			if st.LongestGap == nil || g.Duration > st.LongestGap.Duration {
				st.LongestGap = &g
			}
		}
		if w, ok := longestWait(k, kd, d.last, merged); ok && (st.LongestWait == nil || w.Quiet > st.LongestWait.Quiet) {
			st.LongestWait = &w
		}
	}
	for p := 1; p < len(oks); p += 2 {
		st.AcquireCompletedDuringFaults += dones[p]
		st.AcquireOKDuringFaults += oks[p]
	}
	ratio := func(ok, done int) float64 {
		if done == 0 {
			return -1
		}
		return float64(ok) / float64(done)
	}
	for i, w := range merged {
		p := 2 * i
		st.FaultAvailability = append(st.FaultAvailability, Availability{Start: w.Start, End: w.End,
			Before: ratio(oks[p], dones[p]), During: ratio(oks[p+1], dones[p+1]), After: ratio(oks[p+2], dones[p+2])})
	}
	if st.Duration > 0 {
		st.AcquisitionsPerSecond = float64(st.AcquireOK) / st.Duration.Seconds()
	}
	if st.AcquireCompleted > 0 {
		st.SuccessRatio = float64(st.AcquireOK) / float64(st.AcquireCompleted)
	}
	st.AvailabilityDuringFaults = ratio(st.AcquireOKDuringFaults, st.AcquireCompletedDuringFaults)
	st.AcquireLatency = latency(d.latencies)
	return st
}

// latency summarises samples (nanoseconds); it sorts them in place.
func latency(samples []int64) Latency {
	n := len(samples)
	if n == 0 {
		return Latency{}
	}
	slices.Sort(samples)
	rank := func(p int) time.Duration {
		i := (p*n + 99) / 100 // ⌈p·n/100⌉, 1-based
		return time.Duration(samples[max(i, 1)-1])
	}
	return Latency{N: n, P50: rank(50), P99: rank(99), Max: time.Duration(samples[n-1])}
}

// keyGaps finds every liveness gap of one key, in time order; end is the
// time of the last event of the history.
func keyGaps(key string, kd *keyData, end int64) []Gap {
	if len(kd.attempts) == 0 {
		return nil
	}
	// Points in time at which something changes, processed per instant:
	// (1) an acquire ok closes an open gap; (2) holds end and start;
	// (3) acquires are invoked; (4) a gap opens if the key is free and
	// an acquire is in progress; (5) acquires that completed at this
	// instant stop being in progress.
	type point struct {
		t    int64
		kind int8 // see below
	}
	const (
		okAt     = iota // an acquire returned ok
		holdEnd         // held count -1
		holdBeg         // held count +1
		invoke          // in progress +1
		complete        // in progress -1, after the check
	)
	pts := make([]point, 0, 2*len(kd.holds)+3*len(kd.attempts))
	lastTry := int64(0) // when the last attempt on the key ended
	for _, h := range kd.holds {
		pts = append(pts, point{h.Start, holdBeg}, point{h.End, holdEnd})
	}
	for _, a := range kd.attempts {
		lastTry = max(lastTry, min(a.ret, end))
		pts = append(pts, point{a.call, invoke})
		if a.ret != math.MaxInt64 {
			pts = append(pts, point{a.ret, complete})
		}
		if a.ok {
			pts = append(pts, point{a.ret, okAt})
		}
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.kind, b.kind)) })

	var gaps []Gap
	held, inProgress := 0, 0
	open := false
	var openAt int64
	for i := 0; i < len(pts); {
		t := pts[i].t
		j := i
		for ; j < len(pts) && pts[j].t == t; j++ {
			switch pts[j].kind {
			case okAt:
				if open {
					gaps = append(gaps, Gap{Key: key, Start: openAt, Duration: time.Duration(t - openAt)})
					open = false
				}
			case holdEnd:
				held--
			case holdBeg:
				held++
			case invoke:
				inProgress++
			}
		}
		if !open && held == 0 && inProgress > 0 {
			open, openAt = true, t
		}
		for k := i; k < j; k++ {
			if pts[k].kind == complete {
				inProgress--
			}
		}
		i = j
	}
	if open {
		gaps = append(gaps, Gap{Key: key, Start: openAt, Duration: time.Duration(max(lastTry-openAt, 0)), UntilEnd: true})
	}
	return gaps
}
