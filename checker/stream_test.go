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
		{"valid", new(hist).section(0, "k", 10, 20, 0).section(1, "k", 30, 40, 1), -1},
		{"two read 0", new(hist).section(0, "k", 10, 30, 0).section(1, "k", 20, 40, 0), 40},
		{"later pair", new(hist).section(0, "k", 10, 20, 0).section(1, "k", 30, 60, 1).section(2, "k", 35, 50, 1), 60},
		{"earliest key", new(hist).
			section(0, "a", 10, 20, 0).section(1, "a", 15, 90, 0).
			section(2, "b", 10, 20, 0).section(3, "b", 30, 40, 1).section(4, "b", 45, 70, 1), 70},
		{"a fail reads nothing", new(hist).section(0, "k", 10, 20, 0).sectionEnds(1, "k", history.Fail, 0, 15, 25).section(2, "k", 30, 40, 1), -1},
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
