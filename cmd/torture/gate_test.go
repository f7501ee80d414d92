package main

import (
	"strings"
	"testing"
)

// TestGateCommand: `torture gate --list` shows a lock's cells as its
// matrix rows have them, with the promises they rest on; bad input is
// one line and exit 2.
func TestGateCommand(t *testing.T) {
	stdout, stderr, code := torture(t, "gate", "--lock", "redsync", "--list")
	if code != exitValid {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"redsync declares: quorum, elapsed, extends", "redsync/partition ", "promise: quorum: a grant needs a majority",
		"redsync/clock-partition ", "redsync/clock-minority ", "redsync/client-crash ", "not run: failover, "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("gate --list lacks %q:\n%s", want, stdout)
		}
	}
	for _, args := range [][]string{
		{"gate"},
		{"gate", "--lock", "nope"},
		{"gate", "--lock", "redsync", "--budget", "10s"},
		{"gate", "--lock", "redsync", "--seeds", "0"},
		{"gate", "--lock", "redsync", "extra"},
	} {
		_, stderr, code := torture(t, args...)
		if code != exitError || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("torture %v: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}
}
