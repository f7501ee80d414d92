package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/internal/testutil"
)

// TestCheckEscapesHistory: `torture check` of a hand-written history whose
// keys, tokens, error texts and fault values carry escape sequences,
// carriage returns and bidirectional overrides, and of one whose broken
// line holds them, prints none of them raw, on stdout or stderr.
func TestCheckEscapesHistory(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "broken\x1b[2J.jsonl")
	line := "{\"type\":\"invoke\",\"f\":\"acquire\",\"process\":0,\"time\":1,\"key\":\"k0\"}\n"
	if err := os.WriteFile(broken, []byte(line+"{\"type\":\"ok\x1b]0;t\x07\r\u202e\",\"f\":\"acquire\"}\n"+line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{filepath.Join("..", "..", "report", "testdata", "hostile.jsonl"), exitViolation, `\x1b[2J`},
		{broken, exitError, "torture: "},
	} {
		stdout, stderr, code := torture(t, "check", tc.path)
		if code != tc.code {
			t.Errorf("check %q: exit %d, want %d\n%s%s", tc.path, code, tc.code, stdout, stderr)
		}
		for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if r, ok := testutil.RawControl(out); ok {
				t.Errorf("check %q: %s prints %U raw:\n%s", tc.path, name, r, out)
			}
		}
		if !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("check %q: no %q in\n%s%s", tc.path, tc.want, stdout, stderr)
		}
	}
}
