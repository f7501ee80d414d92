package report

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// TestSummaryBeside: the summary prints a contradicted reply's verdict
// only when broken, and the longest wait and split vote beside their
// bounds wherever they were judged; nothing of them where they were not.
func TestSummaryBeside(t *testing.T) {
	res := checker.Result{Lease: checker.Valid, Resource: checker.Valid,
		Answers: checker.Invalid, AnswersReason: "1 repl(ies) of the lock the nodes contradict",
		Starvation: checker.Valid, StarvationBound: 3100 * time.Millisecond,
		SplitVotes: checker.Invalid, SplitVotesReason: "split votes longer than the bound of 1s",
		Stats: checker.Stats{LongestWait: &checker.Wait{Quiet: 1200 * time.Millisecond}}}
	var b strings.Builder
	Summary(&b, "run", res, nil)
	for _, want := range []string{
		"answers:         invalid — 1 repl(ies) of the lock the nodes contradict",
		"starvation:      valid — the longest wait, 1.2s under no fault, within the bound of 3.1s",
		"split votes:     invalid — split votes longer than the bound of 1s",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Summary(&b, "run", checker.Result{Lease: checker.Valid, Resource: checker.Valid, Answers: checker.Valid, Starvation: checker.Unknown, SplitVotes: checker.Unknown}, nil)
	for _, not := range []string{"answers:", "starvation:", "split votes:"} {
		if strings.Contains(b.String(), not) {
			t.Errorf("summary prints %q for a property kept or not judged:\n%s", not, b.String())
		}
	}
}
