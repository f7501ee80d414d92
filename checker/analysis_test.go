package checker

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestAnalyze: the analysis of a history carries the same Result as
// Check, and per key the leases (with their granting nodes and release),
// the ok sections, the node observations and the lost update; over every
// checkable history of testdata/ the Result is Check's, but for the
// verdicts only an Analysis gives.
func TestAnalyze(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "lease-*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no histories: %v", err)
	}
	for _, p := range paths {
		evs, err := history.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Analyze(evs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Answers and split votes need the observations only an
		// Analysis keeps: Check leaves them empty.
		got := a.Result
		got.Answers, got.AnswersReason, got.Contradicted = "", "", 0
		got.SplitVotes, got.SplitVotesReason, got.SplitVote, got.SplitVoteBound = "", "", nil, 0
		if r := mustCheck(t, evs, Options{}); !reflect.DeepEqual(got, r) {
			t.Errorf("%s: Analyze's result %+v, Check's %+v", p, a.Result, r)
		}
	}

	evs, err := history.ReadFile(filepath.Join("testdata", "lease-invalid_resource-invalid_cause-clock-jump.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(evs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Observed || !a.Reported {
		t.Errorf("observed %v, reported %v; want both", a.Observed, a.Reported)
	}
	ke := a.Keys["k1"]
	if ke == nil || len(ke.Leases()) != 2 || len(a.Sections("k1")) != 2 || len(ke.Nodes) != 8 {
		t.Fatalf("k1: %+v", ke)
	}
	want := Lease{Process: 0, Token: "aaaaaaaa11", Invoked: 100e6, Start: 110e6, ValidUntil: 3000e6, Granted: []int{0, 1}, Released: 2600e6}
	got := ke.Leases()[0]
	if r := got.Release; r == nil || r.Invoked != 2600e6 || r.Completed == 0 {
		t.Errorf("lease 0's release %+v, want its completion", r)
	}
	got.Release = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lease 0: %+v, want %+v", got, want)
	}
	if l, ok := a.Lease("k1", "bbbbbbbb22"); !ok || l.Process != 1 || !reflect.DeepEqual(l.Granted, []int{1, 2}) {
		t.Errorf("Lease(k1, bbbbbbbb22) = %+v, %v", l, ok)
	}
	if ke.Nodes[2] != (NodeObservation{Time: 1100e6, Node: 1, Event: "expired"}) {
		t.Errorf("third observation %+v", ke.Nodes[2])
	}
	if len(a.LostUpdates) != 1 || a.LostUpdates[0].A.Process != 1 || a.LostUpdates[0].B.Process != 0 || a.LostUpdates[0].At != 2500e6 {
		t.Errorf("lost updates %+v", a.LostUpdates)
	}

	// A history without violation has none to hand on; a stream that
	// does not Analyze hands on the Result alone.
	evs, err = history.ReadFile(filepath.Join("testdata", "lease-valid_resource-unknown_serial.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if a, err = Analyze(evs, Options{}); err != nil || len(a.LostUpdates) != 0 || a.Observed || len(a.Keys) == 0 {
		t.Errorf("serial: %+v, %v", a, err)
	}
	st := NewStream()
	for i := range evs {
		if err := st.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if a, err = st.FinishAnalysis(Options{}); err != nil || a.Keys != nil || a.Result.Lease != Valid {
		t.Errorf("without Analyze: %+v, %v", a, err)
	}
}

// TestLeaseAt: a token fixed per client is granted many times; LeaseAt
// gives the grant current at a time (a hold's start, a section's call),
// and the released one is the one the release ended.
func TestLeaseAt(t *testing.T) {
	evs, err := history.ReadFile(filepath.Join("testdata", "lease-valid_resource-unknown_client-token-reacquired.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(evs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at                  int64
		start, valid, freed int64
	}{
		{5, 11, 17, 0}, // before any grant: the first
		{11, 11, 17, 0},
		{19, 11, 17, 0},
		{20, 20, 34, 21},
		{30, 20, 34, 21},
	} {
		l, ok := a.LeaseAt("k0", "t1", tc.at)
		if !ok || l.Start != tc.start || l.ValidUntil != tc.valid || l.Released != tc.freed {
			t.Errorf("LeaseAt(k0, t1, %d) = %+v, %v; want start %d, valid until %d, released %d", tc.at, l, ok, tc.start, tc.valid, tc.freed)
		}
	}
	if _, ok := a.LeaseAt("k0", "nope", 30); ok {
		t.Error("LeaseAt found a lease of a token never granted")
	}
}

// TestLossNotices: a loss notice is counted, and the analysis gives each
// lease the time of its first notice, also one after its release.
func TestLossNotices(t *testing.T) {
	evs := new(hist).
		Acquire(0, "k", "a", 0, 10, 1000).Lost(0, "k", "a", 30).Lost(0, "k", "a", 35).Release(0, "k", "a", 90, 95).
		Acquire(1, "k", "b", 100, 110, 1000).Release(1, "k", "b", 120, 125).Lost(1, "k", "b", 130).
		Acquire(2, "k", "c", 200, 210, 1000).Release(2, "k", "c", 220, 225).
		Events()
	a, err := Analyze(evs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Stats.LossNotices != 3 || a.Result.Stats.Ops["lost"]["info"] != 3 {
		t.Errorf("loss notices %d, ops %v; want 3", a.Result.Stats.LossNotices, a.Result.Stats.Ops["lost"])
	}
	for _, tc := range []struct {
		token string
		lost  int64
	}{{"a", 30}, {"b", 130}, {"c", 0}} {
		if l, ok := a.LeaseAt("k", tc.token, 1000); !ok || l.Lost != tc.lost {
			t.Errorf("lease %s: %+v, %v; want lost at %d", tc.token, l, ok, tc.lost)
		}
	}
	holds := a.Holds()["k"]
	if len(holds) != 3 || holds[0].End != 30 || holds[1].End != 120 {
		t.Errorf("holds %+v; want the first to end at its notice (30), the second at its release (120)", holds)
	}
}
