package matrix

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/report"
)

// TestMergeHostileSummary: a shard's summary.json is an artifact from
// elsewhere; whatever shape its numbers take, merge refuses it in one
// line (ErrShards) before they size an allocation or a loop: a shard
// count of 2⁶² took 5.4 GB and ended in "fatal error: out of memory", a
// plan with no seeds panicked.
func TestMergeHostileSummary(t *testing.T) {
	specs := []Spec{
		testSpec("a/none", "setnx", report.ExpectSafe, nil),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	for _, tc := range []struct {
		name string
		edit func(m *report.Matrix)
		raw  string // replaces summary.json of every shard when set
		want string
	}{
		{"huge shard count", func(m *report.Matrix) { m.Shard.Count = 1 << 62 }, "", "shard 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, and 4611686018427387892 more of 4611686018427387904 missing"},
		{"max shard count", func(m *report.Matrix) { m.Shard.Count = math.MaxInt }, "", "more of 9223372036854775807 missing"},
		{"negative shard count", func(m *report.Matrix) { m.Shard.Count = -1 }, "", "shard count"},
		{"no seeds", func(m *report.Matrix) { m.Seeds = nil }, "", "no seed"},
		{"no cells in the plan", func(m *report.Matrix) { m.Shard.Cells = nil }, "", "no cell"},
		{"no runs in the plan", func(m *report.Matrix) { m.Shard.Runs = nil }, "", ""},
		{"huge shard index", func(m *report.Matrix) { m.Shard.Index = 1 << 62 }, "", "is shard 4611686018427387904/2"},
		{"a null summary", nil, "null", ""},
		{"a null shard", nil, `{"shard": null}`, "not a shard"},
		{"an empty shard", nil, `{"shard": {}}`, ""},
		{"a nested run", nil, `{"shard": {"index": 1, "count": 2, "runs": [[1]]}}`, ""},
		{"NaN", nil, `{"seeds": [NaN], "shard": {"index": 1, "count": 2}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := fakeShards(t, specs, []int64{1, 2}, 2, nil)
			for _, d := range dirs {
				if tc.raw != "" {
					if err := os.WriteFile(filepath.Join(d, "summary.json"), []byte(tc.raw), 0o600); err != nil {
						t.Fatal(err)
					}
					continue
				}
				editSummary(t, d, tc.edit)
			}
			out := filepath.Join(t.TempDir(), "merged")
			_, err := Merge(out, dirs)
			if err == nil || !errors.Is(err, ErrShards) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("merge: %v; want one line wrapping ErrShards with %q", err, tc.want)
			}
			if len(err.Error()) > 1000 {
				t.Fatalf("merge: an error of %d bytes", len(err.Error()))
			}
			if _, serr := os.Stat(out); !os.IsNotExist(serr) {
				t.Fatalf("refused, yet %s was made", out)
			}
		})
	}
}
