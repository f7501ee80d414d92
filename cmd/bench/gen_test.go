package main

import (
	"path/filepath"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
)

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
