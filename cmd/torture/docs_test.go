package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeHistory checks the README's example history (section
// "History format") as the README says it checks: both verdicts valid,
// exit 0. It once read 41 from a store that starts at 0.
func TestReadmeHistory(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const intro = "Example — client 0 holds `k0` and increments it"
	_, after, ok := strings.Cut(readme, intro)
	if !ok {
		t.Fatalf("README.md has no %q", intro)
	}
	_, after, ok = strings.Cut(after, "```json\n")
	example, rest, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 || strings.Count(example, "\n") < 2 {
		t.Fatalf("README.md: no json block after %q", intro)
	}
	if claim := "`torture check` on this history reports both verdicts `valid` and exits 0"; !strings.Contains(rest[:min(len(rest), 400)], claim) {
		t.Errorf("README.md no longer says, after the example, %q; update this test with it", claim)
	}
	path := filepath.Join(t.TempDir(), "example.jsonl")
	if err := os.WriteFile(path, []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := torture(t, "check", path)
	if code != exitValid || !strings.Contains(stdout, "  lease safety:    valid\n  resource safety: valid\n") {
		t.Fatalf("the README's example history: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
