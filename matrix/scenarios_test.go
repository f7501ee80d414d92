package matrix

import "testing"

// TestScenarios: twelve scenarios, each with a source and a claim, each
// cell one of the matrix's; a scenario without a cell says why.
func TestScenarios(t *testing.T) {
	have := map[string]bool{}
	for _, sp := range Cells(false) {
		have[sp.Name] = true
	}
	s := Scenarios()
	if len(s) != 12 {
		t.Errorf("%d scenarios, want the literature's twelve", len(s))
	}
	for _, sc := range s {
		if sc.Name == "" || sc.Source == "" || sc.Claim == "" {
			t.Errorf("scenario %+v: want a name, a source and a claim", sc)
		}
		if len(sc.Cells) == 0 && sc.Missing == "" {
			t.Errorf("%s: no cell, and no reason", sc.Name)
		}
		for _, c := range sc.Cells {
			if !have[c] {
				t.Errorf("%s: no cell %s", sc.Name, c)
			}
		}
	}
	got := ScenariosOf([]Spec{{Name: "setnx/clock"}, {Name: "redlock/clock"}})
	if len(got) != 2 || len(got[0].Cells) != 1 || got[0].Cells[0] != "redlock/clock" || got[1].Cells[0] != "setnx/clock" {
		t.Errorf("ScenariosOf two clock cells: %+v", got)
	}
}
