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
	// Events is the number of events.
	Events int `json:"events"`
	// Start and End are the times of the first and last event.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Duration is End - Start.
	Duration time.Duration `json:"duration_ns"`
	// Ops counts operations by f and outcome: "ok", "fail", "info", or
	// "unfinished" (invoked, never completed); nemesis events count as
	// "info" under their f.
	Ops map[string]map[string]int `json:"ops"`
	// FaultEvents is the number of nemesis events (fault-start and
	// fault-stop): two per fault that was started and healed.
	FaultEvents int `json:"fault_events"`
	// Holds is the number of holds (see Holds); EmptyHolds the number of
	// acquires that returned ok after their validity had passed, which
	// hold nothing.
	Holds      int `json:"holds"`
	EmptyHolds int `json:"empty_holds,omitempty"`
	// MaxKeyHolds is the number of holds of the key held most often: below
	// two, no key changed hands and no two holds could overlap.
	MaxKeyHolds int `json:"max_key_holds"`
	// LateExtends is the number of extends that returned ok although
	// they were invoked after their hold's validity had passed; each
	// started a new hold from its ok (see the package doc, Lease safety).
	LateExtends int `json:"late_extends,omitempty"`
	// LossNotices is the number of loss notices (history.Lost): times a
	// lock told its holder it no longer held the lease.
	LossNotices int `json:"loss_notices,omitempty"`
	// Sections is the number of critical sections, finished or not;
	// SectionsOK the number that returned ok (read and wrote).
	Sections   int `json:"sections"`
	SectionsOK int `json:"sections_ok"`
	// AcquireOK and AcquireCompleted count acquires that returned ok,
	// and that returned at all (ok, fail or info).
	AcquireOK        int `json:"acquire_ok"`
	AcquireCompleted int `json:"acquire_completed"`
	// AcquisitionsPerSecond is AcquireOK / Duration (0 when Duration is
	// 0).
	AcquisitionsPerSecond float64 `json:"acquisitions_per_second"`
	// SuccessRatio is AcquireOK / AcquireCompleted (0 when none
	// completed).
	SuccessRatio float64 `json:"success_ratio"`
	// AcquireLatency is the invoke-to-ok time of the ok acquires.
	AcquireLatency Latency `json:"acquire_latency"`
	// LongestGap is the longest liveness gap: the longest stretch in which
	// a key was free yet not acquired although acquires on it were in
	// progress; nil when no acquire ever found a key free. See Gap.
	LongestGap *Gap `json:"longest_gap,omitempty"`
	// LongestWait is the longest a client waited, under no fault, for a
	// key that other clients were granted meanwhile (starvation); nil
	// when no client ever waited while another got the key. See Wait.
	LongestWait *Wait `json:"longest_wait,omitempty"`
	// FaultWindows are the stretches in which a fault was active, sorted
	// by Start then End; see Window for how starts and stops are paired.
	FaultWindows []Window `json:"fault_windows,omitempty"`
	// AcquireCompletedDuringFaults and AcquireOKDuringFaults count the
	// acquires invoked during a fault (Window.Start ≤ invoke ≤ Window.End
	// for some window) that returned at all (ok, fail or info), and that
	// returned ok. Where they returned does not matter; an acquire that
	// never returned is not counted.
	AcquireCompletedDuringFaults int `json:"acquire_completed_during_faults"`
	AcquireOKDuringFaults        int `json:"acquire_ok_during_faults"`
	// AvailabilityDuringFaults is AcquireOKDuringFaults /
	// AcquireCompletedDuringFaults, in [0, 1]; it is -1, meaning "not
	// measured", when no acquire invoked during a fault completed, which
	// includes every history without faults. Callers that average it
	// must skip the -1s.
	AvailabilityDuringFaults float64 `json:"availability_during_faults"`
	// FaultAvailability is, for each stretch in which some fault was
	// active (the fault windows merged), the availability of the acquires
	// invoked before it (since the previous stretch ended), during it and
	// after it (until the next one began); see Availability.
	FaultAvailability []Availability `json:"fault_availability,omitempty"`
}

// Availability is the share of the acquires invoked before, during and
// after one stretch of faults that returned ok, of those that returned at
// all; -1 for a part in which none returned.
type Availability struct {
	// Start and End bound the stretch of faults.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Before, During and After are the availabilities, in [0, 1] or -1.
	Before float64 `json:"before"`
	During float64 `json:"during"`
	After  float64 `json:"after"`
}

// faultAvailability computes Stats.FaultAvailability from the merged
// windows and every key's attempts.
func faultAvailability(merged []Window, keys []string, d *scanned) []Availability {
	if len(merged) == 0 {
		return nil
	}
	// Parts: quiet 0, window 0, quiet 1, window 1, …, quiet n.
	ok := make([]int, 2*len(merged)+1)
	done := make([]int, len(ok))
	part := func(t int64) int {
		i := sort.Search(len(merged), func(i int) bool { return merged[i].Start > t }) // windows starting after t
		if i > 0 && t <= merged[i-1].End {
			return 2*(i-1) + 1
		}
		return 2 * i
	}
	for _, k := range keys {
		for _, a := range d.keys[k].attempts {
			if a.ret == math.MaxInt64 {
				continue
			}
			p := part(a.call)
			done[p]++
			if a.ok {
				ok[p]++
			}
		}
	}
	ratio := func(p int) float64 {
		if done[p] == 0 {
			return -1
		}
		return float64(ok[p]) / float64(done[p])
	}
	out := make([]Availability, len(merged))
	for i, w := range merged {
		out[i] = Availability{Start: w.Start, End: w.End, Before: ratio(2 * i), During: ratio(2*i + 1), After: ratio(2*i + 2)}
	}
	return out
}

// Window is a stretch of time in which one fault was active, from its
// fault-start to its fault-stop. Starts and stops are paired by Value,
// first in first out: a fault-stop closes the oldest open fault-start with
// the same Value. A fault-start never stopped lasts until the last event
// of the history (UntilEnd); a fault-stop with no open start is a window
// of zero length at the stop.
type Window struct {
	// Start and End are the times of the fault-start and the fault-stop,
	// offsets from the run's base like history.Event.Time. Start ≤ End.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Desc describes the fault: the Value of its events.
	Desc string `json:"desc"`
	// Family is the fault's family, the Family of its fault-start; "" when
	// the history did not record it.
	Family string `json:"family,omitempty"`
	// UntilEnd is set when the fault was never stopped; End is then the
	// time of the last event of the history.
	UntilEnd bool `json:"until_end,omitempty"`
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
	sort.SliceStable(f.wins, func(i, j int) bool {
		a, b := f.wins[i], f.wins[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End < b.End
	})
	return f.wins
}

// during reports whether t lies in one of the windows, which must be
// sorted by Start and merged so that none overlaps another (see
// mergeWindows).
func during(merged []Window, t int64) bool {
	i := sort.Search(len(merged), func(i int) bool { return merged[i].Start > t }) // first window starting after t
	return i > 0 && t <= merged[i-1].End
}

// mergeWindows returns the union of windows sorted by Start as disjoint
// windows, sorted; Desc and UntilEnd are not kept.
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

// Gap is a liveness gap: a stretch in which a key was free (no Hold
// covered it) while acquires on it were being attempted, and none
// succeeded.
//
// Per key, holds are half-open intervals [Start, End). A gap opens at
// the first instant at which the key is free and some acquire on it is in
// progress: at the invoke of an acquire that finds the key free, or at the
// end of a hold while an acquire invoked earlier is still open (a lock
// that retries inside one acquire). It closes at the next acquire ok on
// the key; acquires that fail in between do not close it. When no acquire
// succeeds any more, it ends with the last attempt on the key (a run that
// stops trying, e.g. at its end, is not stuck); an acquire with no
// completion stays in progress to the end of the history.
type Gap struct {
	// Key is the lock key.
	Key string `json:"key"`
	// Start is when the gap began.
	Start int64 `json:"start"`
	// Duration is how long it lasted.
	Duration time.Duration `json:"duration_ns"`
	// UntilEnd is set when no acquire succeeded after the gap began
	// (it lasted until the last attempt on the key ended).
	UntilEnd bool `json:"until_end,omitempty"`
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
			if a.ret != math.MaxInt64 {
				st.AcquireCompleted++
				if during(merged, a.call) {
					st.AcquireCompletedDuringFaults++
					if a.ok {
						st.AcquireOKDuringFaults++
					}
				}
			}
			if a.ok {
				st.AcquireOK++
			}
		}
		if g, ok := longestGap(k, kd, d.last); ok {
			if st.LongestGap == nil || g.Duration > st.LongestGap.Duration {
				st.LongestGap = &g
			}
		}
		if w, ok := longestWait(k, kd, d.last, merged); ok && (st.LongestWait == nil || w.Quiet > st.LongestWait.Quiet) {
			st.LongestWait = &w
		}
	}
	if st.Duration > 0 {
		st.AcquisitionsPerSecond = float64(st.AcquireOK) / st.Duration.Seconds()
	}
	if st.AcquireCompleted > 0 {
		st.SuccessRatio = float64(st.AcquireOK) / float64(st.AcquireCompleted)
	}
	if st.AcquireCompletedDuringFaults > 0 {
		st.AvailabilityDuringFaults = float64(st.AcquireOKDuringFaults) / float64(st.AcquireCompletedDuringFaults)
	}
	st.AcquireLatency = latency(d.latencies)
	st.FaultAvailability = faultAvailability(merged, keys, d)
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

// longestGap finds the longest liveness gap of one key; end is the time of
// the last event of the history.
func longestGap(key string, kd *keyData, end int64) (Gap, bool) {
	var best Gap
	found := false
	for _, g := range keyGaps(key, kd, end) {
		if !found || g.Duration > best.Duration {
			best, found = g, true
		}
	}
	return best, found
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
	for _, a := range kd.attempts {
		lastTry = max(lastTry, min(a.ret, end))
	}
	for _, h := range kd.holds {
		pts = append(pts, point{h.Start, holdBeg}, point{h.End, holdEnd})
	}
	for _, a := range kd.attempts {
		pts = append(pts, point{a.call, invoke})
		if a.ret != math.MaxInt64 {
			pts = append(pts, point{a.ret, complete})
		}
		if a.ok {
			pts = append(pts, point{a.ret, okAt})
		}
	}
	slices.SortFunc(pts, func(a, b point) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})

	var gaps []Gap
	record := func(g Gap) { gaps = append(gaps, g) }
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
					record(Gap{Key: key, Start: openAt, Duration: time.Duration(t - openAt)})
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
		record(Gap{Key: key, Start: openAt, Duration: time.Duration(max(lastTry-openAt, 0)), UntilEnd: true})
	}
	return gaps
}
