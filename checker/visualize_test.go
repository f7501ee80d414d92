package checker

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

func TestVisualize(t *testing.T) {
	h := new(hist).
		Fault(history.FaultStart, "partition n1", 5).
		AcquireFenced(0, "k", "tokA", 3, 0, 10, 100).
		Section(0, "k", 11, 20, 0).
		Acquire(1, "k", "tokB", 40, 50, 200).
		Section(1, "k", 51, 60, 0).
		Fault(history.FaultStop, "partition n1", 70).
		Fault(history.FaultStop, "orphan stop", 75).
		Fault(history.FaultStart, "pause P0", 80)
	evs := h.Events()
	tests := []struct {
		which string
		want  []string
	}{
		{VisualizeLease, []string{"lock P0 token tokA fence 3", "unlock P1 token tokB", "held by P0", "hold tokA", "partition n1", "pause P0", "orphan stop", "nemesis"}},
		{VisualizeResource, []string{"read 0, wrote 1", "partition n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.which, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Visualize(&buf, evs, "k", tt.which, Options{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, "<html") {
				t.Fatalf("not HTML: %.200s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("visualization lacks %q", w)
				}
			}
		})
	}
}

func TestVisualizeErrors(t *testing.T) {
	evs := new(hist).Acquire(0, "k", "a", 0, 10, 100).Events()
	tests := []struct {
		name, key, which string
		events           []history.Event
	}{
		{"unknown model", "k", "both", evs},
		{"no holds on key", "other", VisualizeLease, evs},
		{"no sections on key", "k", VisualizeResource, evs},
		{"malformed", "k", VisualizeLease, []history.Event{{Type: history.Ok, F: history.Release, Key: "k"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Visualize(&buf, tt.events, tt.key, tt.which, Options{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestFaultAnnotations(t *testing.T) {
	evs := new(hist).
		Fault(history.FaultStart, "a", 1).
		Fault(history.FaultStart, "a", 2).
		Fault(history.FaultStop, "a", 3).
		Fault(history.FaultStop, "b", 4).
		Fault(history.FaultStop, "a", 5).
		Fault(history.FaultStart, "c", 6).Events()
	s := newScanner()
	for i := range evs {
		if err := s.add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	got := faultAnnotations(s.finish().windows)
	type band struct {
		desc       string
		start, end int64
	}
	want := []band{{"a", 1, 3}, {"a", 2, 5}, {"b", 4, 4}, {"c", 6, 6}}
	if len(got) != len(want) {
		t.Fatalf("%d annotations, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		if (band{a.Description, a.Start, a.End}) != want[i] || a.Tag != "nemesis" {
			t.Errorf("annotation %d = %+v, want %+v", i, a, want[i])
		}
	}
}

// TestVisualizeBigKey: a long key is drawn in part, the part with the
// violation.
func TestVisualizeBigKey(t *testing.T) {
	// 2000 serial cycles; at the 1500th, two overlapping holds and a lost
	// update on the value 1500.
	h := new(hist)
	var tm int64
	for i := range int64(2000) {
		p := int(i % 3)
		if i == 1500 {
			h.Acquire(5, "k", "late", tm, tm+1, tm+5)
			h.Section(5, "k", tm+2, tm+4, i)
		}
		h.Acquire(p, "k", fmt.Sprintf("tok%d", i), tm, tm+1, tm+5)
		read := i
		if i > 1500 {
			read = i - 1 // the lost update shifts every later read
		}
		h.Section(p, "k", tm+2, tm+3, read)
		tm += 10
	}
	evs := h.Events()
	r := mustCheck(t, evs, Options{})
	wantVerdicts(t, r, Invalid, Invalid)
	tests := []struct {
		which       string
		want, avoid string
	}{
		{VisualizeLease, "P5 token late", "tok10 "},
		{VisualizeResource, "read 1500, wrote 1501", "read 10, wrote 11"},
	}
	for _, tt := range tests {
		t.Run(tt.which, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Visualize(&buf, evs, "k", tt.which, Options{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, tt.want) || strings.Contains(out, tt.avoid) || !strings.Contains(out, " of 4") {
				t.Errorf("want %q and a part of 4, not %q", tt.want, tt.avoid)
			}
			if buf.Len() > 1<<20 {
				t.Errorf("visualization of one part is %d bytes", buf.Len())
			}
		})
	}
}
