package checker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

// TestCheckClaims has, for every claim of the checker, one history with
// the violation and one without. Each history tests one property: the
// lease histories have no section (resource Unknown), the section
// histories no acquire (lease Unknown); see TestCheckNothingTested.
func TestCheckClaims(t *testing.T) {
	const k = "k"
	tests := []struct {
		name     string
		h        *hist
		lease    Verdict
		resource Verdict
	}{
		// Overlap.
		{"overlapping holds", new(hist).
			Acquire(0, k, "a", 0, 10, 100).
			Acquire(1, k, "b", 40, 50, 200),
			Invalid, Unknown},
		{"serial holds", new(hist).
			Acquire(0, k, "a", 0, 10, 100).Release(0, k, "a", 40, 45).
			Acquire(1, k, "b", 41, 50, 200),
			Valid, Unknown},

		// Ties.
		{"touching holds, ended by release", new(hist).
			Acquire(0, k, "a", 0, 10, 100).Release(0, k, "a", 50, 55).
			Acquire(1, k, "b", 20, 50, 200),
			Valid, Unknown},
		{"touching holds, ended by validity", new(hist).
			Acquire(0, k, "a", 0, 10, 50).
			Acquire(1, k, "b", 20, 50, 200),
			Valid, Unknown},
		{"holds overlapping by 1ns", new(hist).
			Acquire(0, k, "a", 0, 10, 50).
			Acquire(1, k, "b", 20, 49, 200),
			Invalid, Unknown},
		{"zero-length hold inside another", new(hist).
			Acquire(0, k, "a", 0, 10, 100).
			Acquire(1, k, "b", 20, 50, 50),
			Invalid, Unknown},
		{"zero-length hold touching another", new(hist).
			Acquire(0, k, "a", 0, 10, 50).
			Acquire(1, k, "b", 20, 50, 50).
			Acquire(2, k, "c", 20, 50, 90),
			Valid, Unknown},

		// Validity ends a hold.
		{"hold expires before the next acquire, no release", new(hist).
			Acquire(0, k, "a", 0, 10, 50).
			Acquire(1, k, "b", 20, 60, 200),
			Valid, Unknown},
		{"next acquire before the validity ends, no release", new(hist).
			Acquire(0, k, "a", 0, 10, 50).
			Acquire(1, k, "b", 20, 40, 200),
			Invalid, Unknown},
		{"release after validity, other acquired after validity", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Release(0, k, "a", 70, 75).
			Acquire(1, k, "b", 20, 60, 200),
			Valid, Unknown},
		{"release after validity, other acquired before validity", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Release(0, k, "a", 70, 75).
			Acquire(1, k, "b", 20, 45, 200),
			Invalid, Unknown},

		// Extend.
		{"extend pushes validity over another acquire", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 40, 42, 150).
			Acquire(1, k, "b", 20, 100, 300),
			Invalid, Unknown},
		{"extended hold released before another acquire", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 40, 42, 150).Release(0, k, "a", 90, 95).
			Acquire(1, k, "b", 20, 100, 300),
			Valid, Unknown},
		{"extend invoked after validity starts a new hold at its ok", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 60, 62, 200).
			Acquire(1, k, "b", 20, 100, 300),
			Invalid, Unknown},
		{"late extend ok after another's hold ended overlaps nothing", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Acquire(1, k, "b", 20, 55, 300).Release(1, k, "b", 58, 59).
			Extend(0, k, "a", 60, 62, 200),
			Valid, Unknown},
		{"extend invoked just before validity extends", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 49, 62, 200).
			Acquire(1, k, "b", 20, 100, 300),
			Invalid, Unknown},
		{"extend invoked exactly at validity is late", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 50, 62, 200).
			Acquire(1, k, "b", 20, 100, 110),
			Invalid, Unknown},
		{"late extend's new hold starts at its ok, not its invoke", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "a", 50, 62, 200).
			Acquire(1, k, "b", 20, 55, 62),
			Valid, Unknown},
		{"extend of another token does not extend", new(hist).
			Acquire(0, k, "a", 0, 10, 50).Extend(0, k, "zz", 40, 42, 200).
			Acquire(1, k, "b", 20, 100, 300),
			Valid, Unknown},

		// A client's own token, granted again (a token fixed per
		// client): a release ends the client's current grant of it.
		{"own token re-acquired after a lapse, released, then another's grant", new(hist).
			Acquire(0, k, "t1", 10, 11, 17).Acquire(0, k, "t1", 19, 20, 34).Release(0, k, "t1", 21, 22).
			Acquire(2, k, "t2", 25, 26, 40),
			Valid, Unknown},
		{"own token re-acquired, another's grant before the release", new(hist).
			Acquire(0, k, "t1", 10, 11, 17).Acquire(0, k, "t1", 19, 20, 34).Release(0, k, "t1", 27, 28).
			Acquire(2, k, "t2", 25, 26, 40),
			Invalid, Unknown},
		{"own token re-acquired while held: one holder, not two", new(hist).
			Acquire(0, k, "t1", 10, 11, 30).Acquire(0, k, "t1", 19, 20, 34).Release(0, k, "t1", 21, 22).
			Acquire(2, k, "t2", 25, 26, 40),
			Valid, Unknown},
		{"own token re-acquired, extended, released: the extend is the current grant's", new(hist).
			Acquire(0, k, "t1", 10, 11, 17).Acquire(0, k, "t1", 19, 20, 24).Extend(0, k, "t1", 22, 23, 60).Release(0, k, "t1", 50, 51).
			Acquire(2, k, "t2", 40, 45, 80),
			Invalid, Unknown},

		// Loss notices: a hold ends at the earliest of its release, its
		// validity and the lock's notice that it was lost.
		{"told of the loss before another's grant", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Lost(0, k, "a", 30).Release(0, k, "a", 90, 95).
			Acquire(1, k, "b", 20, 40, 200),
			Valid, Unknown},
		{"told of the loss after another's grant", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Lost(0, k, "a", 50).Release(0, k, "a", 90, 95).
			Acquire(1, k, "b", 20, 40, 200),
			Invalid, Unknown},
		{"told at the other's grant: touching", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Lost(0, k, "a", 40).
			Acquire(1, k, "b", 20, 40, 200),
			Valid, Unknown},
		{"told while a section is open", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Invoke(0, history.Section, k, "a", 12).Lost(0, k, "a", 30).
			Acquire(1, k, "b", 20, 40, 200),
			Valid, Unknown},
		{"a notice after the release changes nothing", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Release(0, k, "a", 30, 35).Lost(0, k, "a", 300).
			Acquire(1, k, "b", 20, 40, 200),
			Valid, Unknown},
		{"a notice after the validity changes nothing", new(hist).
			Acquire(0, k, "a", 0, 10, 30).Lost(0, k, "a", 300).
			Acquire(1, k, "b", 20, 40, 200),
			Valid, Unknown},
		{"a notice of another token ends nothing", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Lost(0, k, "zz", 30).
			Acquire(1, k, "b", 20, 40, 200),
			Invalid, Unknown},
		{"a notice of another process ends nothing", new(hist).
			Acquire(0, k, "a", 0, 10, 1000).Lost(2, k, "a", 30).
			Acquire(1, k, "b", 20, 40, 200),
			Invalid, Unknown},
		{"a notice ends the current grant of a reused token", new(hist).
			Acquire(0, k, "t1", 0, 10, 17).Acquire(0, k, "t1", 19, 20, 1000).Lost(0, k, "t1", 30).
			Acquire(1, k, "b", 25, 40, 200),
			Valid, Unknown},

		// Acquires that create no hold.
		{"info acquire creates no hold", new(hist).
			AcquireEnds(0, k, history.Info, 0, 10).
			Acquire(1, k, "b", 5, 20, 300),
			Valid, Unknown},
		{"fail acquire creates no hold", new(hist).
			AcquireEnds(0, k, history.Fail, 0, 10).
			Acquire(1, k, "b", 5, 20, 300),
			Valid, Unknown},
		{"unfinished acquire creates no hold", new(hist).
			Invoke(0, history.Acquire, k, "", 0).
			Acquire(1, k, "b", 5, 20, 300),
			Valid, Unknown},
		{"ok acquire instead of info creates a hold", new(hist).
			Acquire(0, k, "a", 0, 10, 100).
			Acquire(1, k, "b", 5, 20, 300),
			Invalid, Unknown},
		{"ok acquire after its validity creates no hold", new(hist).
			Acquire(0, k, "a", 0, 10, 5).
			Acquire(1, k, "b", 5, 20, 300),
			Valid, Unknown},

		// Keys are independent.
		{"holds of different keys may overlap", new(hist).
			Acquire(0, "x", "a", 0, 10, 100).
			Acquire(1, "y", "b", 5, 20, 300),
			Valid, Unknown},

		// Sections.
		{"lost update", new(hist).
			Section(0, k, 10, 20, 0).
			Section(1, k, 15, 25, 0),
			Unknown, Invalid},
		{"both read 5 and wrote 6", new(hist).
			Section(0, k, 0, 1, 0).Section(0, k, 2, 3, 1).Section(0, k, 4, 5, 2).Section(0, k, 6, 7, 3).Section(0, k, 8, 9, 4).
			Section(1, k, 10, 20, 5).
			Section(2, k, 12, 22, 5),
			Unknown, Invalid},
		{"serial sections", new(hist).
			Section(0, k, 10, 20, 0).
			Section(1, k, 21, 25, 1).
			Section(0, k, 30, 40, 2),
			Unknown, Valid},
		{"concurrent sections without a lost update", new(hist).
			Section(0, k, 10, 20, 0).
			Section(1, k, 15, 25, 1),
			Unknown, Valid},
		{"stale read after a completed write", new(hist).
			Section(0, k, 10, 20, 0).
			Section(1, k, 21, 25, 0),
			Unknown, Invalid},
		{"fenced-refused section", new(hist).
			Section(0, k, 10, 20, 0).
			SectionEnds(1, k, history.Fail, 1, 15, 25).
			Section(0, k, 30, 40, 1),
			Unknown, Valid},
		{"stale section that was not refused", new(hist).
			Section(0, k, 10, 20, 0).
			Section(1, k, 15, 25, 0).
			Section(0, k, 30, 40, 1),
			Unknown, Invalid},
		{"info section that wrote", new(hist).
			SectionEnds(0, k, history.Info, 0, 10, 20).
			Section(1, k, 30, 40, 1),
			Unknown, Valid},
		{"info section that did not write", new(hist).
			SectionEnds(0, k, history.Info, 0, 10, 20).
			Section(1, k, 30, 40, 0),
			Unknown, Valid},
		{"info section cannot write twice", new(hist).
			SectionEnds(0, k, history.Info, 0, 10, 20).
			Section(1, k, 30, 40, 2),
			Unknown, Invalid},
		{"info section cannot write after its info", new(hist).
			SectionEnds(0, k, history.Info, 0, 10, 20).
			Section(1, k, 30, 40, 0).
			Section(2, k, 50, 60, 2),
			Unknown, Invalid},
		{"unfinished section may write any time later", new(hist).
			Invoke(0, history.Section, k, "", 10).
			Section(1, k, 30, 40, 0).
			Section(2, k, 50, 60, 2),
			Unknown, Valid},
		{"unfinished section writes at most once", new(hist).
			Invoke(0, history.Section, k, "", 10).
			Section(1, k, 30, 40, 0).
			Section(2, k, 50, 60, 3),
			Unknown, Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustCheck(t, tt.h.Events(), Options{})
			wantVerdicts(t, r, tt.lease, tt.resource)
			if got := len(r.LeaseViolations) > 0; got != (tt.lease == Invalid) {
				t.Errorf("%d lease violations from the sweep with verdict %s", len(r.LeaseViolations), tt.lease)
			}
			if got := len(r.LeaseFailedKeys) > 0; got != (tt.lease == Invalid) {
				t.Errorf("lease failed keys %v with verdict %s", r.LeaseFailedKeys, tt.lease)
			}
			if got := len(r.ResourceFailedKeys) > 0; got != (tt.resource == Invalid) {
				t.Errorf("resource failed keys %v with verdict %s", r.ResourceFailedKeys, tt.resource)
			}
			if r.Valid() != (tt.lease == Valid && tt.resource == Valid) {
				t.Errorf("Valid() = %v", r.Valid())
			}
		})
	}
}

func TestCheckReportsViolation(t *testing.T) {
	h := new(hist).
		AcquireFenced(0, "k", "a", 7, 0, 10, 100).
		Acquire(1, "k", "b", 40, 50, 200).
		Acquire(2, "other", "c", 0, 5, 300).
		Acquire(3, "other", "d", 0, 60, 300)
	r := mustCheck(t, h.Events(), Options{})
	wantVerdicts(t, r, Invalid, Unknown)
	if r.LeaseViolationCount != 2 || len(r.LeaseViolations) != 2 {
		t.Fatalf("violations %d %v, want 2", r.LeaseViolationCount, r.LeaseViolations)
	}
	want := Overlap{
		Key:   "k",
		A:     Hold{Key: "k", Process: 0, Token: "a", Fence: 7, Start: 10, End: 100},
		B:     Hold{Key: "k", Process: 1, Token: "b", Start: 50, End: 200},
		Start: 50, End: 100,
	}
	if r.LeaseViolations[0] != want {
		t.Errorf("first violation %+v, want %+v", r.LeaseViolations[0], want)
	}
	if r.FirstLeaseViolation == nil || *r.FirstLeaseViolation != 50 {
		t.Errorf("FirstLeaseViolation = %v, want 50", r.FirstLeaseViolation)
	}
	if got := strings.Join(r.LeaseFailedKeys, ","); got != "k,other" {
		t.Errorf("LeaseFailedKeys = %q", got)
	}
	if s := want.String(); !strings.Contains(s, `key "k"`) || !strings.Contains(s, "[50, 100]") {
		t.Errorf("String() = %q", s)
	}
}

func TestHolds(t *testing.T) {
	const k = "k"
	type span struct{ start, end int64 }
	tests := []struct {
		name string
		h    *hist
		want []span
	}{
		{"release ends a hold at its invoke", new(hist).Acquire(0, k, "a", 0, 10, 100).Release(0, k, "a", 40, 45), []span{{10, 40}}},
		{"validity ends a hold before a late release", new(hist).Acquire(0, k, "a", 0, 10, 30).Release(0, k, "a", 40, 45), []span{{10, 30}}},
		{"validity ends a hold never released", new(hist).Acquire(0, k, "a", 0, 10, 30), []span{{10, 30}}},
		{"extend moves the validity", new(hist).Acquire(0, k, "a", 0, 10, 30).Extend(0, k, "a", 20, 25, 80), []span{{10, 80}}},
		{"extends chain", new(hist).Acquire(0, k, "a", 0, 10, 30).Extend(0, k, "a", 20, 25, 80).Extend(0, k, "a", 70, 75, 120).Release(0, k, "a", 100, 101), []span{{10, 100}}},
		{"late extend starts a new hold at its ok", new(hist).Acquire(0, k, "a", 0, 10, 30).Extend(0, k, "a", 31, 35, 80).Extend(0, k, "a", 40, 45, 120), []span{{10, 30}, {35, 120}}},
		{"late extend that returns after its new validity holds nothing", new(hist).Acquire(0, k, "a", 0, 10, 30).Extend(0, k, "a", 31, 35, 33), []span{{10, 30}}},
		{"extend may shorten it", new(hist).Acquire(0, k, "a", 0, 10, 100).Extend(0, k, "a", 20, 25, 60), []span{{10, 60}}},
		{"release without token ends the process's hold", new(hist).Acquire(0, k, "a", 0, 10, 100).Release(0, k, "", 40, 45), []span{{10, 40}}},
		{"release of another process does not end it", new(hist).Acquire(0, k, "a", 0, 10, 100).Release(1, k, "a", 40, 45), []span{{10, 100}}},
		{"release of another key does not end it", new(hist).Acquire(0, k, "a", 0, 10, 100).Release(0, "x", "a", 40, 45), []span{{10, 100}}},
		{"failed release still ends it", new(hist).Acquire(0, k, "a", 0, 10, 100).Add(
			history.Event{Type: history.Invoke, F: history.Release, Process: 0, Key: k, Token: "a", Time: 40},
			history.Event{Type: history.Fail, F: history.Release, Process: 0, Key: k, Token: "a", Time: 50}), []span{{10, 40}}},
		{"unfinished release still ends it", new(hist).Acquire(0, k, "a", 0, 10, 100).Invoke(0, history.Release, k, "a", 40), []span{{10, 40}}},
		{"no hold from info", new(hist).AcquireEnds(0, k, history.Info, 0, 10), nil},
		{"sorted by start", new(hist).Acquire(1, k, "b", 0, 50, 60).Acquire(0, k, "a", 0, 10, 20), []span{{10, 20}, {50, 60}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			holds, err := Holds(tt.h.Events())
			if err != nil {
				t.Fatal(err)
			}
			var got []span
			for _, h := range holds[k] {
				got = append(got, span{h.Start, h.End})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("holds %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("holds %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestCheckMalformed(t *testing.T) {
	ok := func(p int, f history.Func, tm int64) history.Event {
		return history.Event{Type: history.Ok, F: f, Process: p, Key: "k", Time: tm}
	}
	inv := func(p int, f history.Func, tm int64) history.Event {
		return history.Event{Type: history.Invoke, F: f, Process: p, Key: "k", Time: tm}
	}
	tests := []struct {
		name   string
		events []history.Event
		want   string // in the error
	}{
		{"completion without invoke", []history.Event{ok(0, history.Release, 5)}, "event 0 (time 5)"},
		{"completion by another process", []history.Event{inv(0, history.Release, 1), ok(1, history.Release, 5)}, "event 1 (time 5)"},
		{"double invoke", []history.Event{inv(0, history.Release, 1), inv(0, history.Section, 2)}, "event 1 (time 2)"},
		{"completion of another f", []history.Event{inv(0, history.Release, 1), ok(0, history.Section, 2)}, "event 1"},
		{"completion of another key", []history.Event{inv(0, history.Release, 1), {Type: history.Ok, F: history.Release, Process: 0, Key: "x", Time: 2}}, "event 1"},
		{"completion before invoke", []history.Event{inv(0, history.Release, 10), ok(0, history.Release, 5)}, "event 1"},
		{"section ok without read", []history.Event{inv(0, history.Section, 1), ok(0, history.Section, 2)}, "without read"},
		{"section ok that did not write read+1", []history.Event{inv(0, history.Section, 1),
			{Type: history.Ok, F: history.Section, Process: 0, Key: "k", Time: 2, Read: history.Int64(3), Wrote: history.Int64(5)}}, "wrote 5"},
		{"acquire ok without token", []history.Event{inv(0, history.Acquire, 1), {Type: history.Ok, F: history.Acquire, Process: 0, Key: "k", Time: 2, ValidUntil: 9}}, "without a token"},
		{"fault as invoke", []history.Event{{Type: history.Invoke, F: history.FaultStart, Process: -1, Time: 2}}, "must be of type info"},
		{"release invoked before its acquire's ok", []history.Event{inv(0, history.Acquire, 1),
			{Type: history.Ok, F: history.Acquire, Process: 0, Key: "k", Time: 20, Token: "a", ValidUntil: 90}, inv(0, history.Release, 10)},
			"event 2 (time 10): process 0 invokes release at 10, earlier than its acquire ok at 20 (event 1): a process does one thing at a time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(tt.events, Options{})
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Check error %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, tt.want)
			}
			if _, err := Holds(tt.events); !errors.Is(err, ErrMalformed) {
				t.Errorf("Holds error %v, want ErrMalformed", err)
			}
		})
	}
}

// TestCheckNothingTested: a verdict about nothing is Unknown with its
// reason, never Valid; an empty history is an error.
func TestCheckNothingTested(t *testing.T) {
	if _, err := Check(nil, Options{}); !errors.Is(err, ErrMalformed) || err.Error() != "checker: malformed history: no event: a history without events tests nothing" {
		t.Errorf("Check(no events) = %v, want ErrMalformed naming the empty history", err)
	}
	const k = "k"
	failed := func(p int, f history.Func, text string, inv, ret int64) []history.Event {
		return []history.Event{
			{Type: history.Invoke, F: f, Process: p, Key: k, Time: inv},
			{Type: history.Fail, F: f, Process: p, Key: k, Time: ret, Error: text},
		}
	}
	for _, tc := range []struct {
		name                  string
		h                     *hist
		lease, resource       Verdict
		leaseWhy, resourceWhy string
	}{
		{"faults only", new(hist).Fault(history.FaultStart, "kill n1", 5).Fault(history.FaultStop, "kill n1", 9),
			Unknown, Unknown,
			"no acquire succeeded: the history has no acquire",
			"no section completed: no acquire succeeded, so no section ran"},
		{"no acquire succeeded", new(hist).
			AcquireEnds(0, k, history.Fail, 0, 10).AcquireEnds(1, k, history.Fail, 1, 11).AcquireEnds(2, k, history.Info, 2, 12).
			Add(failed(0, history.Acquire, "node n1: i/o timeout\nnode n2: i/o timeout", 20, 30)...).
			Invoke(3, history.Acquire, k, "", 3),
			Unknown, Unknown,
			`no acquire succeeded: 5 acquires, none ok (3 fail, 1 info, 1 unfinished; most often "refused" (3 times))`,
			"no section completed: no acquire succeeded, so no section ran"},
		{"multi-line error with control characters", new(hist).
			Add(failed(0, history.Acquire, "node n1: \x1b[31mi/o timeout\nnode n2", 0, 10)...),
			Unknown, Unknown,
			`no acquire succeeded: 1 acquire, none ok (1 fail; most often "node n1: \x1b[31mi/o timeout"… (1 time))`,
			"no section completed: no acquire succeeded, so no section ran"},
		{"the only acquire ok returned after its validity", new(hist).Acquire(0, k, "a", 0, 10, 5),
			Unknown, Unknown,
			"no hold: the only acquire that succeeded returned after its validity had passed",
			"no section completed: the history has no section"},
		{"no section completed", new(hist).
			Acquire(0, k, "a", 0, 10, 100).
			SectionEnds(0, k, history.Fail, 0, 11, 20).
			SectionEnds(0, k, history.Info, 0, 21, 30).
			Add(failed(0, history.Section, "harness: lease expired", 31, 40)...).
			Add(failed(0, history.Section, "harness: lease expired", 41, 50)...).
			Add(failed(0, history.Section, "harness: lease expired", 51, 60)...),
			Valid, Unknown, "",
			`no section completed: 5 sections, none ok (4 fail, 1 info; most often "harness: lease expired" (3 times))`},
		{"sections without acquires", new(hist).Section(0, k, 10, 20, 0),
			Unknown, Valid, "no acquire succeeded: the history has no acquire", ""},
		{"a lease violation and no section", new(hist).Acquire(0, k, "a", 0, 10, 100).Acquire(1, k, "b", 40, 50, 200),
			Invalid, Unknown, "", "no section completed: the history has no section"},
		{"both tested", new(hist).Acquire(0, k, "a", 0, 10, 100).Section(0, k, 11, 20, 0),
			Valid, Valid, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{})
			wantVerdicts(t, r, tc.lease, tc.resource)
			if r.LeaseReason != tc.leaseWhy || r.ResourceReason != tc.resourceWhy {
				t.Errorf("reasons:\n lease    %q\n resource %q\nwant\n lease    %q\n resource %q", r.LeaseReason, r.ResourceReason, tc.leaseWhy, tc.resourceWhy)
			}
		})
	}
}

// TestCheckTimeoutBudget: a budget spent before porcupine starts leaves
// every key Unknown, never valid.
func TestCheckTimeoutBudget(t *testing.T) {
	h := new(hist).
		Acquire(0, "k", "a", 0, 10, 100).Release(0, "k", "a", 40, 45).
		Section(0, "k", 11, 20, 0)
	r := mustCheck(t, h.Events(), Options{Timeout: time.Nanosecond})
	wantVerdicts(t, r, Unknown, Unknown)
	if r.Valid() {
		t.Error("Valid() with an Unknown verdict")
	}
	if len(r.LeaseUnknownKeys) != 1 || len(r.ResourceUnknownKeys) != 1 {
		t.Errorf("unknown keys %v %v", r.LeaseUnknownKeys, r.ResourceUnknownKeys)
	}
	if want := `porcupine ran out of its 1ns on 1 key ("k")`; r.LeaseReason != want || r.ResourceReason != want {
		t.Errorf("reasons %q, %q; want %q", r.LeaseReason, r.ResourceReason, want)
	}
}

// TestCheckPorcupineTimeout: porcupine itself gives up. 40 sections never
// complete, then a section reads a value they cannot reach: porcupine
// tries every subset of the 40 before it can say Illegal.
func TestCheckPorcupineTimeout(t *testing.T) {
	h := new(hist)
	for p := range 40 {
		h.Invoke(p, history.Section, "k", "", int64(p))
	}
	h.Section(40, "k", 100, 110, 1000)
	h.Section(41, "other", 0, 10, 0) // a key that does finish
	start := time.Now()
	r := mustCheck(t, h.Events(), Options{Timeout: 200 * time.Millisecond})
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Check took %v with a 200ms timeout", el)
	}
	wantVerdicts(t, r, Unknown, Unknown)
	if got := strings.Join(r.ResourceUnknownKeys, ","); got != "k" {
		t.Errorf("ResourceUnknownKeys = %q, want k", got)
	}
	if r.Valid() {
		t.Error("Valid() with an Unknown verdict")
	}

	// A definite violation elsewhere still makes the verdict Invalid.
	h.Section(42, "other", 20, 30, 5)
	r = mustCheck(t, h.Events(), Options{Timeout: 200 * time.Millisecond})
	wantVerdicts(t, r, Unknown, Invalid)
}

func TestOptionsTimeout(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{{0, DefaultTimeout}, {-1, DefaultTimeout}, {time.Second, time.Second}} {
		if got := (Options{Timeout: tc.in}).timeout(); got != tc.want {
			t.Errorf("timeout(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
