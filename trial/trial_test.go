package trial

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/report"
)

// TestVerdictAboutNothing: a run that was to inject faults and injected
// none, whose targeted strikes all missed or left no window, in which no
// key changed hands, or whose clients starved (faults or none), is
// unknown, saying why; a violation always stands; a run that tested
// something is left alone.
func TestVerdictAboutNothing(t *testing.T) {
	faulty := runContext{cfg: harness.Config{Faults: harness.Faults{Nemesis: []string{"kill-quorum"}}}, faults: 2}
	quiet := runContext{}
	win := report.Strike{Outcome: report.StrikeWindow}
	missed := report.Strike{Outcome: report.StrikeMissed, Why: "no hold fit"}
	closed := report.Strike{Outcome: report.StrikeNoWindow, Why: "released first"}
	stats := func(faultEvents, maxHolds, ok, completed int) checker.Stats {
		return checker.Stats{FaultEvents: faultEvents, MaxKeyHolds: maxHolds, Holds: maxHolds, AcquireOK: ok, AcquireCompleted: completed}
	}
	for _, tc := range []struct {
		name            string
		run             runContext
		strikes         []report.Strike
		stats           checker.Stats
		lease, resource checker.Verdict
		want            string // the reason's prefix, "" for verdicts left alone
	}{
		{"struck with a window", faulty, []report.Strike{win, closed}, stats(4, 50, 50, 60), checker.Valid, checker.Valid, ""},
		{"no fault event", faulty, []report.Strike{missed, missed}, stats(0, 50, 50, 60), checker.Valid, checker.Valid, checker.ReasonNoFault},
		{"struck, no window", faulty, []report.Strike{closed, closed}, stats(4, 50, 50, 60), checker.Valid, checker.Valid, ReasonNoWindow},
		{"missed and no window", faulty, []report.Strike{missed, closed}, stats(2, 50, 50, 60), checker.Valid, checker.Valid, ReasonNoWindow},
		{"no window, but a violation", faulty, []report.Strike{closed, closed}, stats(4, 50, 50, 60), checker.Invalid, checker.Valid, ReasonNoWindow},
		{"random steps beside", runContext{cfg: faulty.cfg, faults: 3}, []report.Strike{closed, closed}, stats(6, 50, 50, 60), checker.Valid, checker.Valid, ""},
		{"no key held twice", quiet, nil, stats(0, 1, 1, 14913), checker.Valid, checker.Valid, ReasonNoHandover},
		{"starved", quiet, nil, stats(0, 40, 80, 10000), checker.Valid, checker.Valid, ReasonStarved},
		// Under faults too: 59 ok of 20,286 with one latency fault was
		// judged valid.
		{"starved under faults", faulty, []report.Strike{win}, stats(2, 40, 59, 20286), checker.Valid, checker.Valid, ReasonStarved},
		{"refusals under faults", faulty, []report.Strike{win}, stats(2, 40, 200, 10000), checker.Valid, checker.Valid, ""},
		// Trials do not lift the floor: 8 ok of 1,421 under reset-peer
		// (1,084 of them unknown outcomes) with 3 contended steps tested
		// lost replies, hardly a grant.
		{"starved, with trials", runContext{cfg: faulty.cfg, faults: 2, trials: report.Trials{Kind: report.TrialStep, Count: 3}}, nil, stats(2, 8, 8, 1421), checker.Valid, checker.Valid, ReasonStarved},
		{"plenty", quiet, nil, stats(0, 500, 1000, 1400), checker.Valid, checker.Valid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checker.Result{Lease: tc.lease, Resource: tc.resource, Stats: tc.stats}
			judge(&res, tc.run, tc.strikes)
			if tc.want == "" {
				if res.Lease != tc.lease || res.Resource != tc.resource {
					t.Fatalf("verdicts %s/%s changed (%q)", res.Lease, res.Resource, res.ResourceReason)
				}
				return
			}
			if tc.lease == checker.Invalid && res.Lease != checker.Invalid {
				t.Fatalf("a violation was turned into %s", res.Lease)
			}
			if res.Resource != checker.Unknown || !strings.HasPrefix(res.ResourceReason, tc.want) {
				t.Fatalf("resource %s %q, want unknown: %s…", res.Resource, res.ResourceReason, tc.want)
			}
		})
	}
}

// TestStrikes: a strike is judged against the history: a hold that stayed
// open a node call after it while another client tried the key is a
// window; one its holder released first, or that nobody contended, is
// not; a step that found no hold missed.
func TestStrikes(t *testing.T) {
	const ms = int64(time.Millisecond)
	// Client 0 holds k from 1 s; client 1 tries k from 1.05 s to 1.95 s.
	hist := ev(0, "invoke", "acquire", "", 990*ms, 0) + ev(0, "ok", "acquire", "a", 1000*ms, 1990*ms) +
		ev(1, "invoke", "acquire", "", 1050*ms, 0) +
		ev(0, "invoke", "release", "a", releaseAt, 0) + ev(0, "ok", "release", "a", releaseAt+ms, 0) +
		ev(1, "fail", "acquire", "", 1950*ms, 0)
	step := func(at string, client int) string {
		return `{"kind":"kill-quorum","at":"500ms","for":"2s","desc":"kill-quorum","params":{"pick":0,"min_left":"250ms","window":"2s","active":"1s","decision":{"at":"` + at +
			`","trigger":{"change":"granted","client":` + itoa(int64(client)) + `,"key":"k","granted":[0,1],"left":"900ms"},"targets":[1]}}}`
	}
	sched := `{"seed":1,"kinds":["kill-quorum"],"interval":"250ms","steps":[` +
		step("1s", 0) + "," + // the hold lasts 1 s after: a window
		step("1.95s", 0) + "," + // released 1 node call later? no: 50 ms < TTL/10
		step("1s", 7) + "," + // no hold of client 7: the lock refused the grant
		`{"kind":"kill-quorum","at":"3s","for":"2s","desc":"kill-quorum","params":{"pick":0,"min_left":"250ms","window":"2s","active":"1s","decision":{"at":"0s","targets":null,"missed":"no hold fit"}}}` +
		`]}`
	strikes := strikesOf(t, hist, sched)
	want := []string{report.StrikeWindow, report.StrikeNoWindow, report.StrikeWindow, report.StrikeMissed}
	if len(strikes) != len(want) {
		t.Fatalf("%d strikes: %+v", len(strikes), strikes)
	}
	for i, w := range want {
		if strikes[i].Outcome != w || (i > 0 && strikes[i].Why == "") {
			t.Errorf("strike %d: %+v, want %s with a reason", i, strikes[i], w)
		}
	}
	if !strings.Contains(strikes[1].Why, "before anyone else could be granted") {
		t.Errorf("strike 1: %q", strikes[1].Why)
	}
}

// TestStrikeAtLostHold: a strike at a hold that the lock then ended by
// telling its holder it lost the lease, 14 ms later (rueidislock after a
// power loss), met the lock's defence: a window, not a hold its holder
// released too soon; the same hold released by its holder 14 ms after
// the strike is one; a notice after another client's grant is told as too
// late, never as a defence.
func TestStrikeAtLostHold(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		tail      string // what follows, in time order
		want, why string
	}{
		{ev(0, "info", "lost", "a", 1014*ms, 0) + ev(1, "fail", "acquire", "", 1500*ms, 0), report.StrikeWindow, "before another client was granted it: the fault met the lock's defence"},
		{ev(0, "invoke", "release", "a", 1014*ms, 0) + ev(0, "ok", "release", "a", 1015*ms, 0) + ev(1, "fail", "acquire", "", 1500*ms, 0), report.StrikeNoWindow, "released before anyone else"},
		// Told only after client 1 was granted the key: too late, never a
		// defence that held.
		{ev(1, "ok", "acquire", "b", 1500*ms, 2500*ms) + ev(0, "info", "lost", "a", 1600*ms, 0), report.StrikeWindow, "the lock told client 0 it lost k 0.600 s after the strike, 0.100 s after client 1 was granted it: too late"},
	} {
		hist := ev(0, "invoke", "acquire", "", 990*ms, 0) + ev(0, "ok", "acquire", "a", 1000*ms, 1<<62) +
			ev(1, "invoke", "acquire", "", 1005*ms, 0) + tc.tail
		sched := `{"seed":1,"kinds":["power-loss-holder"],"interval":"1s","steps":[{"kind":"power-loss-holder","at":"500ms","for":"3s","desc":"power-loss-holder","params":{"pick":0,"min_left":"500ms","window":"2s","active":"1s","decision":{"at":"1s","trigger":{"change":"granted","client":0,"key":"k","granted":[0],"left":"990ms"},"targets":[0]}}}]}`
		strikes := strikesOf(t, hist, sched)
		if len(strikes) != 1 || strikes[0].Outcome != tc.want || !strings.Contains(strikes[0].Why, tc.why) {
			t.Errorf("strikes %+v, want one %s saying %q", strikes, tc.want, tc.why)
		}
	}
}

// TestStrikeWindowWithOnlyTimeouts: a struck hold that stayed open while
// another client tried the key is a window only if that try got an
// answer; one that timed out (a slow machine, nodes that did not answer)
// tested nothing.
func TestStrikeWindowWithOnlyTimeouts(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, tc := range []struct{ end, want string }{
		{"fail", report.StrikeWindow},
		{"info", report.StrikeNoWindow},
	} {
		hist := ev(0, "invoke", "acquire", "", 990*ms, 0) + ev(0, "ok", "acquire", "a", 1000*ms, 1990*ms) +
			ev(1, "invoke", "acquire", "", 1005*ms, 0) + ev(1, tc.end, "acquire", "", 1500*ms, 0) +
			ev(0, "invoke", "release", "a", 1800*ms, 0) + ev(0, "ok", "release", "a", 1801*ms, 0)
		sched := `{"seed":1,"kinds":["kill-quorum"],"interval":"250ms","steps":[{"kind":"kill-quorum","at":"500ms","for":"2s","desc":"kill-quorum","params":{"pick":0,"min_left":"250ms","window":"2s","active":"1s","decision":{"at":"1s","trigger":{"change":"granted","client":0,"key":"k","granted":[0,1],"left":"900ms"},"targets":[1]}}}]}`
		strikes := strikesOf(t, hist, sched)
		if len(strikes) != 1 || strikes[0].Outcome != tc.want {
			t.Errorf("contender's %s: strikes %+v, want one %s", tc.end, strikes, tc.want)
		}
	}
}

// strikesOf checks the history hist and judges the schedule sched's
// strikes against it, with a TTL of 1 s.
func strikesOf(t *testing.T, hist, sched string) []report.Strike {
	t.Helper()
	dir := t.TempDir()
	hpath := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(hpath, []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _, err := Check(hpath, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spath := filepath.Join(dir, "schedule.json")
	if err := os.WriteFile(spath, []byte(sched), 0o600); err != nil {
		t.Fatal(err)
	}
	strikes, err := Strikes(spath, &a, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return strikes
}

const releaseAt = int64(2000 * time.Millisecond)

// ev is one event of process p on key k, as a line of history.jsonl: a
// token and a validity when not empty.
func ev(p int, typ, f, tok string, at int64, valid int64) string {
	s := `{"process":` + itoa(int64(p)) + `,"type":"` + typ + `","f":"` + f + `","key":"k","time":` + itoa(at)
	if tok != "" {
		s += `,"token":"` + tok + `"`
	}
	if valid != 0 {
		s += `,"valid_until":` + itoa(valid)
	}
	return s + "}\n"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestOneTrial: outside the checker and this package (tests aside), no
// code of the module checks a history itself: every verdict goes through
// Run, Check or Recheck, so every entry point judges a run the same way.
func TestOneTrial(t *testing.T) {
	calls := regexp.MustCompile(`\bchecker\.(Check|CheckDecoder|Analyze|AnalyzeDecoder|NewStream|Collect)\(`)
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(rel, "checker"+string(filepath.Separator)) || strings.HasPrefix(rel, "trial"+string(filepath.Separator)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := calls.Find(b); m != nil {
			t.Errorf("%s calls %s: judge a run with package trial", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlowStuck: a key the checker found stuck is unknown when, less the
// stretches in which the machine was too slow, its time free yet
// unacquired is within the bound; stuck when the healthy rest passes it,
// or when the machine was healthy throughout.
func TestSlowStuck(t *testing.T) {
	const s = int64(time.Second)
	stuck := func() *checker.Result {
		return &checker.Result{Liveness: checker.LivenessStuck, LivenessBound: 2 * time.Second,
			Stuck: &checker.Stuck{Key: "k0", Start: 0, From: 0, End: 6 * s, Quiet: 6 * time.Second}}
	}
	for _, tc := range []struct {
		name string
		h    health.Report
		want checker.Liveness
	}{
		{"healthy", slowHealth(), checker.LivenessStuck},
		{"slow for 4.5 of 6 s", slowHealth([2]int64{0, 2 * s}, [2]int64{3 * s, 5*s + s/2}), checker.LivenessUnknown},
		{"slow for 1 of 6 s", slowHealth([2]int64{s, 2 * s}), checker.LivenessStuck},
		{"slow outside the stretch", slowHealth([2]int64{7 * s, 20 * s}), checker.LivenessStuck},
	} {
		res := stuck()
		slowStuck(res, runContext{health: tc.h})
		if res.Liveness != tc.want {
			t.Errorf("%s: liveness %s (%s), want %s", tc.name, res.Liveness, res.LivenessReason, tc.want)
		}
	}
}

// TestSlowCuts: holds cut short with no fault are unknown when every one
// met a stretch in which the machine was too slow, a spurious loss when
// one did not, or when the machine was healthy throughout.
func TestSlowCuts(t *testing.T) {
	const s = int64(time.Second)
	cut := func() *checker.Result {
		return &checker.Result{Holds: checker.Invalid, SpuriousCount: 2, CutCount: 2,
			Cuts: []checker.Cut{{Key: "k0", Start: 0, At: 2 * s, How: checker.CutLost}, {Key: "k1", Start: 5 * s, At: 6 * s, How: checker.CutExtend}}}
	}
	for _, tc := range []struct {
		name string
		h    health.Report
		want checker.Verdict
	}{
		{"healthy", slowHealth(), checker.Invalid},
		{"both cuts slow", slowHealth([2]int64{s, s + s/2}, [2]int64{5*s + s/2, 7 * s}), checker.Unknown},
		{"one cut in healthy time", slowHealth([2]int64{s, s + s/2}), checker.Invalid},
	} {
		res := cut()
		slowCuts(res, runContext{health: tc.h})
		if res.Holds != tc.want {
			t.Errorf("%s: holds %s (%s), want %s", tc.name, res.Holds, res.HoldsReason, tc.want)
		}
	}
}

// slowHealth is the health of a run too slow in the stretches given (from
// and to, in nanoseconds), with a threshold of 100 ms.
func slowHealth(stretches ...[2]int64) health.Report {
	h := health.Report{Threshold: 100 * time.Millisecond, Samples: 600}
	for _, st := range stretches {
		h.Unhealthy = append(h.Unhealthy, health.Stretch{From: st[0], To: st[1], MaxLate: time.Second})
	}
	return h
}
