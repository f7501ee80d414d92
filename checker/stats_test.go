package checker

import (
	"math"
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
		acquire(0, "a", "t0", 0, 10, 100).release(0, "a", "t0", 20, 21).
		acquire(1, "b", "t1", 100, 120, 200).release(1, "b", "t1", 130, 131).
		acquire(2, "c", "t2", 200, 230, 300).release(2, "c", "t2", 240, 241).
		acquire(3, "d", "t3", 300, 340, 400).release(3, "d", "t3", 350, 351).
		acquireEnds(4, "a", history.Fail, 400, 401).
		acquireEnds(5, "a", history.Info, 500, 501).
		invoke(6, history.Acquire, "a", "", 600).
		section(7, "e", 700, 800, 0).
		fault(history.FaultStart, "partition", 1000).
		fault(history.FaultStop, "partition", 2*sec)
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
	if s.Holds != 4 || s.Sections != 1 || s.Faults != 2 {
		t.Errorf("holds %d sections %d faults %d", s.Holds, s.Sections, s.Faults)
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
	h := new(hist).acquire(0, "a", "t", 5, 5, 10)
	s := mustCheck(t, h.Events(), Options{}).Stats
	if s.AcquisitionsPerSecond != 0 || s.SuccessRatio != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestLongestStall(t *testing.T) {
	tests := []struct {
		name string
		h    *hist
		want *Stall
	}{
		{"a lone acquire stalls for its latency", new(hist).acquire(0, "k", "a", 0, 10, 50), &Stall{Key: "k", Start: 0, Duration: 10}},
		{"no acquires at all", new(hist).section(0, "k", 0, 10, 0), nil},
		{"attempts while held do not count, attempts while free do", new(hist).
			acquire(0, "k", "a", 0, 10, 50). // held [10, 50]
			acquireEnds(1, "k", history.Fail, 20, 25).
			acquireEnds(1, "k", history.Fail, 60, 65).
			acquireEnds(1, "k", history.Fail, 70, 75).
			acquire(1, "k", "b", 76, 90, 200),
			&Stall{Key: "k", Start: 60, Duration: 30}},
		{"an acquire in progress when the hold ends", new(hist).
			acquire(0, "k", "a", 0, 10, 50).
			acquire(1, "k", "b", 40, 75, 200),
			&Stall{Key: "k", Start: 50, Duration: 25}},
		{"an acquire in progress when a released hold ends", new(hist).
			acquire(0, "k", "a", 0, 10, 500).release(0, "k", "a", 50, 51).
			acquire(1, "k", "b", 40, 75, 200),
			&Stall{Key: "k", Start: 50, Duration: 25}},
		{"no ok until the end", new(hist).
			acquire(0, "k", "a", 0, 1, 50).
			acquireEnds(1, "k", history.Fail, 60, 65).
			fault(history.FaultStart, "x", 160),
			&Stall{Key: "k", Start: 60, Duration: 100, UntilEnd: true}},
		{"an unfinished acquire opens a stall", new(hist).
			acquire(0, "k", "a", 0, 1, 50).
			invoke(1, history.Acquire, "k", "", 30).
			fault(history.FaultStart, "x", 130),
			&Stall{Key: "k", Start: 50, Duration: 80, UntilEnd: true}},
		{"touching holds: an ok at the hold's end closes at once", new(hist).
			acquire(0, "k", "a", 0, 1, 50).
			acquire(1, "k", "b", 40, 50, 100),
			&Stall{Key: "k", Start: 0, Duration: 1}},
		{"longest over keys", new(hist).
			acquireEnds(0, "x", history.Fail, 0, 5).acquire(0, "x", "a", 10, 30, 100).
			acquireEnds(1, "y", history.Fail, 0, 5).acquire(1, "y", "b", 10, 20, 100),
			&Stall{Key: "x", Start: 0, Duration: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCheck(t, tt.h.Events(), Options{}).Stats.LongestStall
			switch {
			case got == nil && tt.want == nil:
			case got == nil || tt.want == nil || *got != *tt.want:
				t.Errorf("LongestStall = %+v, want %+v", got, tt.want)
			}
		})
	}
}
