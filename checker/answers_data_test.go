package checker

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestContradictionsTestdata: over every history that once exposed a
// bug, the extend granted after its key expired is contradicted by its
// node, and no history whose lease held shows a contradicted reply.
func TestContradictionsTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		evs, err := history.ReadFile(f)
		if err != nil {
			continue // the malformed ones are another test's
		}
		a, err := Analyze(evs, Options{})
		if err != nil {
			continue
		}
		cs := a.Contradictions()
		name := filepath.Base(f)
		switch {
		case strings.Contains(name, "extend-after-expiry") && (len(cs) == 0 || cs[0].Op != history.Extend):
			t.Errorf("%s: contradictions %+v, want the extend granted after expiry", name, cs)
		case strings.HasPrefix(name, "lease-valid") && len(cs) > 0:
			t.Errorf("%s: contradictions %+v in a history whose lease held", name, cs)
		}
		t.Logf("%s: %d contradictions", name, len(cs))
	}
}
