package checker

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestStreamIsCheck: checking a history as it is decoded gives what Check
// gives on the whole history, on every history of testdata/; a malformed
// one is rejected the same way.
func TestStreamIsCheck(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, n, serr := CheckDecoder(history.NewDecoder(f), Options{})
			evs, rerr := history.ReadFile(path)
			var want Result
			if rerr == nil {
				want, rerr = Check(evs, Options{})
			}
			if (serr == nil) != (rerr == nil) {
				t.Fatalf("stream error %v, Check error %v", serr, rerr)
			}
			if serr != nil {
				if !errors.Is(serr, ErrMalformed) && !errors.Is(serr, history.ErrInvalid) {
					t.Fatalf("stream error %v is neither ErrMalformed nor history.ErrInvalid", serr)
				}
				return
			}
			if n != len(evs) {
				t.Errorf("stream counted %d events, the file has %d", n, len(evs))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stream result\n%+v\nCheck result\n%+v", got, want)
			}
		})
	}
}

func TestStreamErrorsStick(t *testing.T) {
	st := NewStream()
	bad := history.Event{Type: history.Ok, F: history.Release, Process: 1, Key: "k", Time: 5}
	err := st.Add(&bad)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("completion without invoke: %v", err)
	}
	good := history.Event{Type: history.Invoke, F: history.Acquire, Process: 2, Key: "k", Time: 6}
	if err2 := st.Add(&good); err2 != err {
		t.Errorf("Add after an error returned %v, want the first error %v", err2, err)
	}
	if _, err2 := st.Finish(Options{}); err2 != err {
		t.Errorf("Finish after an error returned %v, want the first error %v", err2, err)
	}

	st = NewStream()
	if err := st.Add(&good); err != nil {
		t.Fatal(err)
	}
	var tm Timings
	r, err := st.Finish(Options{Timings: &tm})
	if err != nil || r.Lease != Unknown || r.Resource != Unknown || r.Stats.Events != 1 {
		t.Fatalf("Finish: %+v, %v; want both verdicts unknown (no acquire succeeded)", r, err)
	}
	if _, err := st.Finish(Options{}); err == nil {
		t.Error("a second Finish succeeded")
	}
	if err := st.Add(&good); err == nil {
		t.Error("Add after Finish succeeded")
	}
}

// TestStreamEmpty: a stream finished without events is an error, and so
// is a decoder's history without a complete event.
func TestStreamEmpty(t *testing.T) {
	if _, err := NewStream().Finish(Options{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("Finish without events: %v, want ErrMalformed", err)
	}
	for _, in := range []string{"", "\n\n", "{\"type\":\"inv"} {
		_, n, err := CheckDecoder(history.NewDecoder(strings.NewReader(in)), Options{})
		if !errors.Is(err, history.ErrEmpty) || n != 0 {
			t.Errorf("CheckDecoder(%q): %d events, %v; want history.ErrEmpty", in, n, err)
		}
	}
}

func TestFirstResourceViolation(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *hist
		want int64 // -1: nil
	}{
		{"valid", new(hist).Section(0, "k", 10, 20, 0).Section(1, "k", 30, 40, 1), -1},
		{"two read 0", new(hist).Section(0, "k", 10, 30, 0).Section(1, "k", 20, 40, 0), 40},
		{"later pair", new(hist).Section(0, "k", 10, 20, 0).Section(1, "k", 30, 60, 1).Section(2, "k", 35, 50, 1), 60},
		{"earliest key", new(hist).
			Section(0, "a", 10, 20, 0).Section(1, "a", 15, 90, 0).
			Section(2, "b", 10, 20, 0).Section(3, "b", 30, 40, 1).Section(4, "b", 45, 70, 1), 70},
		{"a fail reads nothing", new(hist).Section(0, "k", 10, 20, 0).SectionEnds(1, "k", history.Fail, 0, 15, 25).Section(2, "k", 30, 40, 1), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{})
			switch {
			case tc.want < 0 && r.FirstResourceViolation != nil:
				t.Fatalf("FirstResourceViolation = %d, want nil (resource %s)", *r.FirstResourceViolation, r.Resource)
			case tc.want >= 0 && (r.FirstResourceViolation == nil || *r.FirstResourceViolation != tc.want):
				t.Fatalf("FirstResourceViolation = %v, want %d (resource %s)", r.FirstResourceViolation, tc.want, r.Resource)
			case tc.want >= 0 && r.Resource != Invalid:
				t.Fatalf("resource %s with a lost update", r.Resource)
			}
		})
	}
}

// TestStreamWatch: a watching stream sees the first lease or resource
// violation as the events come, at the event that shows it, and nothing in
// a history without one; its verdicts are Finish's as ever.
func TestStreamWatch(t *testing.T) {
	const k = "k"
	tests := []struct {
		name     string
		h        *hist
		property string // "" for none
		at       int64
	}{
		{"serial", new(hist).Acquire(0, k, "a", 0, 1, 100).Section(0, k, 2, 3, 0).Release(0, k, "a", 4, 5).
			Acquire(1, k, "b", 6, 7, 100).Section(1, k, 8, 9, 1).Release(1, k, "b", 10, 11), "", 0},
		{"the first expired before the second", new(hist).Acquire(0, k, "a", 0, 1, 10).Acquire(1, k, "b", 5, 10, 100), "", 0},
		{"overlap", new(hist).Acquire(0, k, "a", 0, 1, 100).Acquire(1, k, "b", 40, 50, 200), "lease", 50},
		{"lost update", new(hist).Section(0, k, 0, 1, 4).Section(1, k, 0, 2, 4), "resource", 2},
		{"overlap, then lost update", new(hist).Acquire(0, k, "a", 0, 1, 100).Acquire(1, k, "b", 40, 50, 200).
			Section(0, k, 51, 60, 0).Section(1, k, 52, 61, 0), "lease", 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStream()
			st.Watch()
			evs := tt.h.Events()
			for i := range evs {
				if err := st.Add(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			v, seen := st.FirstViolation()
			if seen != (tt.property != "") || v.Property != tt.property || v.Time != tt.at || (seen && evs[v.Event].Time != tt.at) {
				t.Fatalf("first violation %+v (seen %v), want %q at %d", v, seen, tt.property, tt.at)
			}
			r, err := st.Finish(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if seen && r.Outcome() != OutcomeViolation {
				t.Errorf("watch saw %s, Finish says %s/%s", v.Property, r.Lease, r.Resource)
			}
		})
	}
	// Without Watch, nothing is seen.
	st := NewStream()
	for _, e := range new(hist).Section(0, k, 0, 1, 4).Section(1, k, 0, 2, 4).Events() {
		if err := st.Add(&e); err != nil {
			t.Fatal(err)
		}
	}
	if _, seen := st.FirstViolation(); seen {
		t.Error("a stream that does not watch saw a violation")
	}
}
