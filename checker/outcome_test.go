package checker

import "testing"

// TestFold: one violation is a violation whatever the other verdict; safe
// needs both valid; anything else, a missing verdict included, is unknown.
func TestFold(t *testing.T) {
	tests := []struct {
		lease, resource Verdict
		want            Outcome
	}{
		{Valid, Valid, OutcomeSafe},
		{Invalid, Valid, OutcomeViolation},
		{Valid, Invalid, OutcomeViolation},
		{Invalid, Unknown, OutcomeViolation},
		{Unknown, Invalid, OutcomeViolation},
		{Unknown, Valid, OutcomeUnknown},
		{Valid, Unknown, OutcomeUnknown},
		{"", "", OutcomeUnknown},
		{Valid, "", OutcomeUnknown},
	}
	for _, tt := range tests {
		if got := Fold(tt.lease, tt.resource); got != tt.want {
			t.Errorf("Fold(%q, %q) = %q, want %q", tt.lease, tt.resource, got, tt.want)
		}
		r := Result{Lease: tt.lease, Resource: tt.resource}
		if r.Outcome() != tt.want || r.Valid() != (tt.want == OutcomeSafe) {
			t.Errorf("Result{%q, %q}: Outcome %q, Valid %v", tt.lease, tt.resource, r.Outcome(), r.Valid())
		}
	}
}
