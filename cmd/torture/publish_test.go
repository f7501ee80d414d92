package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishCmd: publish wants two folders, refuses a folder that is not
// a matrix's output in one line with exit 2, and writes the bundle.
func TestPublishCmd(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "publish"}, "want MATRIXDIR and OUT"},
		{[]string{"matrix", "publish", dir, filepath.Join(dir, "out")}, "summary.json"},
	} {
		_, stderr, code := torture(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "runs.tar.xz")); err == nil {
		t.Error("a failed publish left a bundle")
	}
}
