package checker

import (
	"testing"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

// hist builds a history by hand (testutil.History).
type hist = testutil.History

// mustCheck runs Check and fails the test on an error.
func mustCheck(tb testing.TB, evs []history.Event, opts Options) Result {
	tb.Helper()
	r, err := Check(evs, opts)
	if err != nil {
		tb.Fatalf("Check: %v", err)
	}
	return r
}

// wantVerdicts fails the test unless r has the given verdicts and no
// disagreement.
func wantVerdicts(tb testing.TB, r Result, lease, resource Verdict) {
	tb.Helper()
	if r.Lease != lease || r.Resource != resource {
		tb.Errorf("verdicts lease=%s resource=%s, want lease=%s resource=%s (result %+v)", r.Lease, r.Resource, lease, resource, r)
	}
	if r.Disagreement != "" {
		tb.Errorf("disagreement: %s", r.Disagreement)
	}
}
