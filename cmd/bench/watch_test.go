package main

import (
	"path/filepath"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
)

func TestWatcher(t *testing.T) {
	acq := func(p int, tok string, at, until int64) history.Event {
		return history.Event{Type: history.Ok, F: history.Acquire, Process: p, Key: "k", Token: tok, Time: at, ValidUntil: until}
	}
	rel := func(p int, tok string, at int64) history.Event {
		return history.Event{Type: history.Invoke, F: history.Release, Process: p, Key: "k", Token: tok, Time: at}
	}
	sec := func(p int, read, at int64) history.Event {
		return history.Event{Type: history.Ok, F: history.Section, Process: p, Key: "k", Time: at, Read: history.Int64(read), Wrote: history.Int64(read + 1)}
	}
	for _, tc := range []struct {
		name string
		evs  []history.Event
		want string
	}{
		{"serial", []history.Event{acq(0, "a", 1, 100), sec(0, 0, 2), rel(0, "a", 3), acq(1, "b", 4, 100), sec(1, 1, 5)}, ""},
		{"expired", []history.Event{acq(0, "a", 1, 10), acq(1, "b", 10, 100)}, ""},
		{"overlap", []history.Event{acq(0, "a", 1, 100), acq(1, "b", 50, 200)}, "lease"},
		{"lost update", []history.Event{sec(0, 4, 1), sec(1, 4, 2)}, "resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher()
			stop := false
			for _, e := range tc.evs {
				stop = w.observe(e)
			}
			if stop != (tc.want != "") || w.what != tc.want {
				t.Fatalf("stop %v, what %q; want %q", stop, w.what, tc.want)
			}
		})
	}
}

// TestGenHistory: the generated histories check as they claim, and the
// first violation is the injected one.
func TestGenHistory(t *testing.T) {
	for _, violation := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		n, at, err := genHistory(path, 4000, 10, 5, violation)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := history.ReadFile(path)
		if err != nil || len(evs) != n {
			t.Fatalf("read %d events of %d: %v", len(evs), n, err)
		}
		r, err := checker.Check(evs, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := checker.Valid
		if violation {
			want = checker.Invalid
		}
		if r.Lease != want || r.Resource != want || r.Disagreement != "" {
			t.Fatalf("violation %v: verdicts %s/%s %s", violation, r.Lease, r.Resource, r.Disagreement)
		}
		if violation && (r.FirstLeaseViolation == nil || *r.FirstLeaseViolation != at || r.FirstResourceViolation == nil || *r.FirstResourceViolation < at) {
			t.Fatalf("first violations %v, %v; injected at %d", r.FirstLeaseViolation, r.FirstResourceViolation, at)
		}
		want4k := 4000
		if violation {
			want4k += 2 // the failing acquire that succeeded ran a section and a release
		}
		if ops := r.Stats.Ops["acquire"]["ok"] + r.Stats.Ops["acquire"]["fail"] + r.Stats.Ops["section"]["ok"] + r.Stats.Ops["release"]["ok"]; ops != want4k {
			t.Errorf("%d operations, want %d", ops, want4k)
		}
	}
}
