package checker

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

func TestLatency(t *testing.T) {
	seq := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(n - i) // reversed, to check the sort
		}
		return s
	}
	tests := []struct {
		name    string
		samples []int64
		want    Latency
	}{
		{"none", nil, Latency{}},
		{"one", []int64{7}, Latency{N: 1, P50: 7, P99: 7, Max: 7}},
		{"four", []int64{40, 10, 30, 20}, Latency{N: 4, P50: 20, P99: 40, Max: 40}},
		{"hundred", seq(100), Latency{N: 100, P50: 50, P99: 99, Max: 100}},
		{"thousand", seq(1000), Latency{N: 1000, P50: 500, P99: 990, Max: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := latency(tt.samples); got != tt.want {
				t.Errorf("latency = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	const sec = int64(time.Second)
	h := new(hist).
		Acquire(0, "a", "t0", 0, 10, 100).Release(0, "a", "t0", 20, 21).
		Acquire(1, "b", "t1", 100, 120, 200).Release(1, "b", "t1", 130, 131).
		Acquire(2, "c", "t2", 200, 230, 300).Release(2, "c", "t2", 240, 241).
		Acquire(3, "d", "t3", 300, 340, 400).Release(3, "d", "t3", 350, 351).
		AcquireEnds(4, "a", history.Fail, 400, 401).
		AcquireEnds(5, "a", history.Info, 500, 501).
		Invoke(6, history.Acquire, "a", "", 600).
		Section(7, "e", 700, 800, 0).
		Fault(history.FaultStart, "partition", 1000).
		Fault(history.FaultStop, "partition", 2*sec)
	r := mustCheck(t, h.Events(), Options{})
	wantVerdicts(t, r, Valid, Valid)
	s := r.Stats
	if s.Events != 25 || s.Start != 0 || s.End != 2*sec || s.Duration != 2*time.Second {
		t.Errorf("events %d start %d end %d duration %v", s.Events, s.Start, s.End, s.Duration)
	}
	if s.AcquireOK != 4 || s.AcquireCompleted != 6 {
		t.Errorf("acquires ok %d completed %d, want 4, 6", s.AcquireOK, s.AcquireCompleted)
	}
	if s.AcquisitionsPerSecond != 2 {
		t.Errorf("acquisitions/s = %v, want 2", s.AcquisitionsPerSecond)
	}
	if math.Abs(s.SuccessRatio-4.0/6) > 1e-12 {
		t.Errorf("success ratio %v, want 4/6", s.SuccessRatio)
	}
	if want := (Latency{N: 4, P50: 20, P99: 40, Max: 40}); s.AcquireLatency != want {
		t.Errorf("latency %+v, want %+v", s.AcquireLatency, want)
	}
	if s.Holds != 4 || s.Sections != 1 || s.FaultEvents != 2 {
		t.Errorf("holds %d sections %d faults %d", s.Holds, s.Sections, s.FaultEvents)
	}
	wantOps := map[string]map[string]int{
		"acquire":     {"ok": 4, "fail": 1, "info": 1, "unfinished": 1},
		"release":     {"ok": 4},
		"section":     {"ok": 1},
		"fault-start": {"info": 1},
		"fault-stop":  {"info": 1},
	}
	for f, m := range wantOps {
		for o, n := range m {
			if s.Ops[f][o] != n {
				t.Errorf("ops[%s][%s] = %d, want %d", f, o, s.Ops[f][o], n)
			}
		}
	}
	if len(s.Ops) != len(wantOps) {
		t.Errorf("ops %v", s.Ops)
	}
}

func TestStatsZeroDuration(t *testing.T) {
	h := new(hist).Acquire(0, "a", "t", 5, 5, 10)
	s := mustCheck(t, h.Events(), Options{}).Stats
	if s.AcquisitionsPerSecond != 0 || s.SuccessRatio != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestLongestGap(t *testing.T) {
	tests := []struct {
		name string
		h    *hist
		want *Gap
	}{
		{"a lone acquire waits a gap of its latency", new(hist).Acquire(0, "k", "a", 0, 10, 50), &Gap{Key: "k", Start: 0, Duration: 10}},
		{"no acquires at all", new(hist).Section(0, "k", 0, 10, 0), nil},
		{"attempts while held do not count, attempts while free do", new(hist).
			Acquire(0, "k", "a", 0, 10, 50). // held [10, 50]
			AcquireEnds(1, "k", history.Fail, 20, 25).
			AcquireEnds(1, "k", history.Fail, 60, 65).
			AcquireEnds(1, "k", history.Fail, 70, 75).
			Acquire(1, "k", "b", 76, 90, 200),
			&Gap{Key: "k", Start: 60, Duration: 30}},
		{"an acquire in progress when the hold ends", new(hist).
			Acquire(0, "k", "a", 0, 10, 50).
			Acquire(1, "k", "b", 40, 75, 200),
			&Gap{Key: "k", Start: 50, Duration: 25}},
		{"an acquire in progress when a released hold ends", new(hist).
			Acquire(0, "k", "a", 0, 10, 500).Release(0, "k", "a", 50, 51).
			Acquire(1, "k", "b", 40, 75, 200),
			&Gap{Key: "k", Start: 50, Duration: 25}},
		{"no ok until the end: the gap ends with the last attempt", new(hist).
			Acquire(0, "k", "a", 0, 1, 50).
			AcquireEnds(1, "k", history.Fail, 60, 65).
			AcquireEnds(2, "k", history.Info, 70, 90).
			Fault(history.FaultStart, "x", 160),
			&Gap{Key: "k", Start: 60, Duration: 30, UntilEnd: true}},
		{"an unfinished acquire opens a gap", new(hist).
			Acquire(0, "k", "a", 0, 1, 50).
			Invoke(1, history.Acquire, "k", "", 30).
			Fault(history.FaultStart, "x", 130),
			&Gap{Key: "k", Start: 50, Duration: 80, UntilEnd: true}},
		{"touching holds: an ok at the hold's end closes at once", new(hist).
			Acquire(0, "k", "a", 0, 1, 50).
			Acquire(1, "k", "b", 40, 50, 100),
			&Gap{Key: "k", Start: 0, Duration: 1}},
		{"longest over keys", new(hist).
			AcquireEnds(0, "x", history.Fail, 0, 5).Acquire(0, "x", "a", 10, 30, 100).
			AcquireEnds(1, "y", history.Fail, 0, 5).Acquire(1, "y", "b", 10, 20, 100),
			&Gap{Key: "x", Start: 0, Duration: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCheck(t, tt.h.Events(), Options{}).Stats.LongestGap
			switch {
			case got == nil && tt.want == nil:
			case got == nil || tt.want == nil || *got != *tt.want:
				t.Errorf("LongestGap = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFaultWindowsAndAvailability(t *testing.T) {
	tests := []struct {
		name string
		h    *hist
		// wantAvail is AvailabilityDuringFaults; wantOK and wantDone the
		// counts behind it.
		wantAvail        float64
		wantOK, wantDone int
		wantWindows      []Window
	}{
		{
			name:      "no faults: not measured",
			h:         new(hist).Acquire(0, "k", "a", 0, 10, 100).AcquireEnds(1, "k", history.Fail, 20, 30),
			wantAvail: -1,
		},
		{
			name: "only acquires invoked inside the window count, however they end",
			h: new(hist).
				Fault(history.FaultStart, "pause n1", 100).
				AcquireEnds(0, "k", history.Fail, 50, 150). // invoked before: not counted
				Acquire(1, "k", "a", 110, 120, 130).
				AcquireEnds(2, "k", history.Fail, 140, 150).
				AcquireEnds(3, "k", history.Info, 160, 400). // returns after the stop: counted
				Fault(history.FaultStop, "pause n1", 200).
				Acquire(4, "k", "b", 250, 260, 300), // invoked after: not counted
			wantAvail: 1.0 / 3, wantOK: 1, wantDone: 3,
			wantWindows: []Window{{Start: 100, End: 200, Desc: "pause n1"}},
		},
		{
			name: "invokes at the start and at the stop are inside",
			h: new(hist).
				Fault(history.FaultStart, "x", 100).
				Acquire(0, "k", "a", 100, 105, 110).
				AcquireEnds(1, "k", history.Fail, 200, 210).
				Fault(history.FaultStop, "x", 200),
			wantAvail: 0.5, wantOK: 1, wantDone: 2,
			wantWindows: []Window{{Start: 100, End: 200, Desc: "x"}},
		},
		{
			name: "an unmatched start lasts until the end",
			h: new(hist).
				Fault(history.FaultStart, "kill n2", 100).
				Acquire(0, "k", "a", 500, 510, 600).
				Acquire(1, "k", "b", 900, 1000, 1100),
			wantAvail: 1, wantOK: 2, wantDone: 2,
			wantWindows: []Window{{Start: 100, End: 1000, Desc: "kill n2", UntilEnd: true}},
		},
		{
			name: "an unfinished acquire is not counted",
			h: new(hist).
				Fault(history.FaultStart, "x", 0).
				AcquireEnds(0, "k", history.Fail, 10, 20).
				Invoke(1, history.Acquire, "k", "", 30).
				Fault(history.FaultStop, "x", 100),
			wantAvail: 0, wantOK: 0, wantDone: 1,
			wantWindows: []Window{{Start: 0, End: 100, Desc: "x"}},
		},
		{
			name: "faults but no acquire invoked during them: not measured",
			h: new(hist).
				Acquire(0, "k", "a", 0, 10, 20).
				Fault(history.FaultStart, "x", 50).
				Fault(history.FaultStop, "x", 60).
				Acquire(0, "k", "b", 70, 80, 90),
			wantAvail:   -1,
			wantWindows: []Window{{Start: 50, End: 60, Desc: "x"}},
		},
		{
			name: "overlapping faults count an acquire once",
			h: new(hist).
				Fault(history.FaultStart, "a", 100).
				Fault(history.FaultStart, "b", 150).
				Acquire(0, "k", "t", 170, 180, 190).
				Fault(history.FaultStop, "a", 200).
				AcquireEnds(1, "k", history.Fail, 220, 230).
				Fault(history.FaultStop, "b", 250).
				Acquire(2, "k", "u", 300, 310, 320),
			wantAvail: 0.5, wantOK: 1, wantDone: 2,
			wantWindows: []Window{{Start: 100, End: 200, Desc: "a"}, {Start: 150, End: 250, Desc: "b"}},
		},
		{
			name: "same value twice pairs first in first out; the gap is not a fault",
			h: new(hist).
				Fault(history.FaultStart, "p", 100).
				Fault(history.FaultStop, "p", 200).
				AcquireEnds(0, "k", history.Fail, 250, 260).
				Fault(history.FaultStart, "p", 300).
				Acquire(1, "k", "a", 310, 320, 330).
				Fault(history.FaultStop, "p", 400),
			wantAvail: 1, wantOK: 1, wantDone: 1,
			wantWindows: []Window{{Start: 100, End: 200, Desc: "p"}, {Start: 300, End: 400, Desc: "p"}},
		},
		{
			name: "a stop without a start is a window of zero length",
			h: new(hist).
				AcquireEnds(0, "k", history.Fail, 0, 10).
				Fault(history.FaultStop, "ghost", 50).
				Acquire(1, "k", "a", 50, 60, 70).
				Acquire(1, "k", "b", 80, 90, 100),
			wantAvail: 1, wantOK: 1, wantDone: 1,
			wantWindows: []Window{{Start: 50, End: 50, Desc: "ghost"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCheck(t, tt.h.Events(), Options{}).Stats
			if s.AvailabilityDuringFaults != tt.wantAvail {
				t.Errorf("AvailabilityDuringFaults = %v, want %v", s.AvailabilityDuringFaults, tt.wantAvail)
			}
			if s.AcquireOKDuringFaults != tt.wantOK || s.AcquireCompletedDuringFaults != tt.wantDone {
				t.Errorf("during faults: %d ok of %d completed, want %d of %d", s.AcquireOKDuringFaults, s.AcquireCompletedDuringFaults, tt.wantOK, tt.wantDone)
			}
			if !slices.Equal(s.FaultWindows, tt.wantWindows) {
				t.Errorf("FaultWindows = %+v, want %+v", s.FaultWindows, tt.wantWindows)
			}
		})
	}
}

func TestDuring(t *testing.T) {
	merged := mergeWindows([]Window{{Start: 10, End: 20}, {Start: 15, End: 30}, {Start: 40, End: 40}, {Start: 50, End: 60}})
	if want := []Window{{Start: 10, End: 30}, {Start: 40, End: 40}, {Start: 50, End: 60}}; !slices.Equal(merged, want) {
		t.Fatalf("mergeWindows = %+v, want %+v", merged, want)
	}
	for _, tc := range []struct {
		t    int64
		want bool
	}{{0, false}, {10, true}, {25, true}, {30, true}, {31, false}, {40, true}, {45, false}, {60, true}, {61, false}} {
		if got := during(merged, tc.t); got != tc.want {
			t.Errorf("during(%d) = %v, want %v", tc.t, got, tc.want)
		}
	}
	if during(nil, 5) {
		t.Error("during(nil) = true")
	}
}
