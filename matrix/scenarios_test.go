package matrix

import (
	"testing"

	"github.com/locktorture/locktorture/report"
)

// TestScenarios: every scenario has a source, a claim and rows of the
// table; each measures cells of the matrix, or says why none.
func TestScenarios(t *testing.T) {
	for _, sc := range ScenariosOf(Cells(false)) {
		if sc.Name == "" || sc.Source == "" || sc.Claim == "" {
			t.Errorf("scenario %+v: want a name, a source and a claim", sc)
		}
		if len(sc.Cells) == 0 && sc.Missing == "" {
			t.Errorf("%s: no cell, and no reason", sc.Name)
		}
	}
	if n := len(ScenariosOf(Cells(false))); n != len(Scenarios()) {
		t.Errorf("%d of %d scenarios measured by the matrix", n, len(Scenarios()))
	}
	// A scenario selects cells by row and by the traits of their lock.
	clock := func(lock, trait string) Spec {
		return Spec{Name: lock + "/clock", Row: "clock", Traits: []string{trait}, Expect: report.ExpectAll(report.ExpectViolation)}
	}
	got := ScenariosOf([]Spec{clock("setnx", "single"), clock("redlock", "quorum")})
	if len(got) < 2 || got[0].Cells[0] != "redlock/clock" || got[1].Cells[0] != "setnx/clock" {
		t.Errorf("ScenariosOf two clock cells: %+v", got)
	}
}
