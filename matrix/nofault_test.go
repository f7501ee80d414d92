package matrix

import (
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
)

// A run that was to inject faults and injected none is not a pass: its
// valid verdicts become unknown with the reason; a violation stands; a
// run with a fault event, or without a schedule, is left alone.
func TestNoFaultIsNotAPass(t *testing.T) {
	sum := harness.Summary{Faults: 2}
	sum.Config.Nemesis = []string{"clock-holder"}
	tests := []struct {
		name               string
		sum                harness.Summary
		faultEvents        int
		lease, resource    checker.Verdict
		wantLease, wantRes checker.Verdict
		wantReason         bool
	}{
		{"missed, valid", sum, 0, checker.Valid, checker.Valid, checker.Unknown, checker.Unknown, true},
		{"missed, lease invalid", sum, 0, checker.Invalid, checker.Valid, checker.Invalid, checker.Unknown, true},
		{"struck", sum, 2, checker.Valid, checker.Valid, checker.Valid, checker.Valid, false},
		{"no schedule", harness.Summary{}, 0, checker.Valid, checker.Valid, checker.Valid, checker.Valid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := checker.Result{Lease: tt.lease, Resource: tt.resource}
			res.Stats.FaultEvents = tt.faultEvents
			explainUntested(&res, tt.sum)
			if res.Lease != tt.wantLease || res.Resource != tt.wantRes {
				t.Fatalf("lease %s resource %s, want %s %s", res.Lease, res.Resource, tt.wantLease, tt.wantRes)
			}
			got := strings.HasPrefix(res.ResourceReason, checker.ReasonNoFault)
			if got != tt.wantReason {
				t.Fatalf("resource reason %q", res.ResourceReason)
			}
			if tt.wantReason && (!strings.Contains(res.ResourceReason, "clock-holder") || res.Outcome() == checker.OutcomeSafe) {
				t.Fatalf("reason %q, outcome %s", res.ResourceReason, res.Outcome())
			}
		})
	}
}
