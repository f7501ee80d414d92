package trial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/report"
)

// TestTrials: a fault step is a trial for each held key that was
// contended while it was active (an answer, not a timeout); without faults every
// contended hold is one; a trial that meets an unhealthy stretch is
// counted apart; ToFirst numbers the trial of the first violation.
func TestTrials(t *testing.T) {
	const ms = int64(time.Millisecond)
	fault := func(p string, at int64) string {
		return `{"process":-1,"type":"info","f":"fault-` + p + `","time":` + itoa(at) + `,"value":"f"}` + "\n"
	}
	// Client 0 holds k over [1 s, 1.5 s] and [3 s, 3.5 s]; client 1 is
	// refused during the first, times out during the second.
	holds := ev(0, "invoke", "acquire", "", 990*ms, 0) + ev(0, "ok", "acquire", "a", 1000*ms, 1990*ms) +
		ev(1, "invoke", "acquire", "", 1100*ms, 0) + ev(1, "fail", "acquire", "", 1200*ms, 0) +
		ev(0, "invoke", "release", "a", 1500*ms, 0) + ev(0, "ok", "release", "a", 1501*ms, 0) +
		ev(0, "invoke", "acquire", "", 2990*ms, 0) + ev(0, "ok", "acquire", "b", 3000*ms, 3990*ms) +
		ev(1, "invoke", "acquire", "", 3100*ms, 0) + ev(1, "info", "acquire", "", 3200*ms, 0) +
		ev(0, "invoke", "release", "b", 3500*ms, 0) + ev(0, "ok", "release", "b", 3501*ms, 0)
	// Clients 2 and 3 contend for another key, j, as 0 and 1 do for k in
	// the first second: a lock of its own, so a trial of its own.
	otherKey := strings.ReplaceAll(ev(2, "invoke", "acquire", "", 990*ms, 0)+ev(2, "ok", "acquire", "e", 1000*ms, 1990*ms)+
		ev(3, "invoke", "acquire", "", 1100*ms, 0)+ev(3, "fail", "acquire", "", 1200*ms, 0)+
		ev(2, "invoke", "release", "e", 1500*ms, 0)+ev(2, "ok", "release", "e", 1501*ms, 0), `"key":"k"`, `"key":"j"`)
	// An overlap at 5.1 s: client 1 granted while client 0 holds.
	overlap := ev(0, "invoke", "acquire", "", 4990*ms, 0) + ev(0, "ok", "acquire", "c", 5000*ms, 5990*ms) +
		ev(1, "invoke", "acquire", "", 5050*ms, 0) + ev(1, "ok", "acquire", "d", 5100*ms, 6090*ms)
	check := func(t *testing.T, hist string) checker.Analysis {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		if err := os.WriteFile(path, []byte(hist), 0o600); err != nil {
			t.Fatal(err)
		}
		a, _, err := Check(path, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	sick := health.Report{Unhealthy: []health.Stretch{{From: 1400 * ms, To: 1450 * ms, MaxLate: 300 * time.Millisecond}}}
	for _, tc := range []struct {
		name string
		hist string
		h    health.Report
		want report.Trials
	}{
		{"two steps, one contended by an answer", fault("start", 900*ms) + holds + fault("stop", 1600*ms) + fault("start", 2900*ms) + fault("stop", 3600*ms),
			health.Report{}, report.Trials{Kind: report.TrialStep, Count: 1}},
		{"a step that struck two contended keys is two trials", fault("start", 900*ms) + holds + otherKey + fault("stop", 1600*ms),
			health.Report{}, report.Trials{Kind: report.TrialStep, Count: 2}},
		{"the contended step met a slow stretch", fault("start", 900*ms) + holds + fault("stop", 1600*ms), sick,
			report.Trials{Kind: report.TrialStep, Unhealthy: 1}},
		{"no fault: contended holds", holds + overlap, health.Report{},
			report.Trials{Kind: report.TrialHandover, Count: 2, ToFirst: 2}},
		{"a violation after every trial is one more", fault("start", 900*ms) + holds + fault("stop", 1600*ms) + overlap, health.Report{},
			report.Trials{Kind: report.TrialStep, Count: 2, ToFirst: 2}},
		{"a violation in a slow trial stands", holds + overlap, health.Report{Unhealthy: []health.Stretch{{From: 5000 * ms, To: 5200 * ms}}},
			report.Trials{Kind: report.TrialHandover, Count: 2, ToFirst: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := check(t, tc.hist)
			if got := Trials(&a, nil, time.Second, tc.h); got != tc.want {
				t.Fatalf("trials %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestExcludedRate: n trials without a violation exclude a per-trial rate
// of about 3/n at 95 %; TrialsFor inverts it.
func TestExcludedRate(t *testing.T) {
	if r := report.ExcludedRate(11); r > 0.25 || r < 0.2 {
		t.Errorf("11 trials exclude %.3f, want just under 0.25", r)
	}
	if n := report.TrialsFor(0.25); n != 11 {
		t.Errorf("a rate of 25 %% needs %d trials, want 11", n)
	}
	if r := report.ExcludedRate(300); r < 0.0099 || r > 0.0101 {
		t.Errorf("300 trials exclude %.4f, want about 1 %%", r)
	}
	if report.ExcludedRate(0) != 1 || report.TrialsFor(0) != 0 || report.TrialsFor(1) != 0 {
		t.Error("no trial excludes nothing; rates outside (0, 1) need no count")
	}
}
