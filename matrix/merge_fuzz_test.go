package matrix

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/report"
)

// FuzzMerge: matrix merge of two shards, the second's summary.json
// anything (null, missing, negative, NaN, nested, huge counts): a merged
// matrix, or one error line that leaves OUT unmade; never a panic, and
// memory bounded whatever counts the summary claims.
func FuzzMerge(f *testing.F) {
	specs := []Spec{
		testSpec("a/none", "setnx", report.ExpectSafe, nil),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	seeds := []int64{1, 2}
	model := fakeShards(f, specs, seeds, 2, nil)
	valid, err := os.ReadFile(filepath.Join(model[1], "summary.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(valid), "", "null", "[]", "{}", "{", `{"shard": null}`, `{"shard": {}}`,
		`{"seeds": [NaN], "shard": {"index": 2, "count": 2}}`,
		`{"seeds": null, "shard": {"index": 2, "count": 2}}`,
		`{"seeds": [1, 2], "shard": {"index": 2, "count": 4611686018427387904}}`,
		`{"seeds": [1, 2], "shard": {"index": -1, "count": -1}}`,
		`{"seeds": [1, 2], "shard": {"index": 2, "count": 2, "runs": [[1]]}}`,
		`{"seeds": [1, 2], "shard": {"index": 2, "count": 2, "cells": null, "runs": null}}`,
		`{"seeds": [1, 2], "cells": [{"name": "a/none", "runs": [{"dir": "runs/x"}, {"dir": "runs/x"}]}], "shard": {"index": 2, "count": 2}}`,
		`{"seeds": [1, 2], "cells": [{"name": "a/none", "runs": [null]}], "shard": {"index": 2, "count": 2}}`,
		`{"seeds": [-9223372036854775808, 9223372036854775807], "shard": {"index": 2, "count": 2}}`,
		strings.Replace(string(valid), `"count": 2`, `"count": 9223372036854775807`, 1),
		strings.Replace(string(valid), `"index": 2`, `"index": -2`, 1),
		strings.Repeat(`{"shard": `, 200) + strings.Repeat(`}`, 200),
	} {
		f.Add([]byte(s))
	}
	// The shards are made once: merge only reads them, and each input
	// replaces the second's summary.json.
	dirs := fakeShards(f, specs, seeds, 2, nil)
	f.Fuzz(func(t *testing.T, summary []byte) {
		if err := os.WriteFile(filepath.Join(dirs[1], "summary.json"), summary, 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "merged")
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Merge(out, dirs)
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64<<20+100*len(summary)); got > limit {
			t.Fatalf("merge allocated %d MB (more than %d MB)", got>>20, limit>>20)
		}
		if err == nil {
			return
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 4000 {
			t.Fatalf("merge: an error of %d bytes or several lines: %.300q", len(msg), msg)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Fatalf("merge refused (%v), yet %s was made", err, out)
		}
	})
}
