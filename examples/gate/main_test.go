package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/gate"
)

// gateOf registers the lock as name, releasing with release, and runs a
// short gate on it: its client-pause cell, seeds of 6 s until its lease
// promise excludes a per-trial violation rate of 50 % (5 trials; a release
// runs every cell its promises give it, to the default 25 %: drop --cells,
// --duration and --rate). It returns the exit status and the verdict
// printed.
func gateOf(t *testing.T, name, release string) (int, string) {
	t.Helper()
	if err := Register(name, release); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := gate.Command(t.Context(), []string{"--lock", name, "--cells", "^[^+]*/client-pause$", "--seeds", "1", "--duration", "6s", "--rate", "0.5", "--out", t.TempDir()}, &stdout, &stderr)
	return gate.ExitCode(err, &stderr), stdout.String() + stderr.String()
}

// TestCorrectLockPasses: the lock as written keeps its promises: under
// client pauses the stalled holder loses updates, as the literature
// expects of any lock without fencing, and its leases never overlap.
func TestCorrectLockPasses(t *testing.T) {
	if code, out := gateOf(t, "mylock", CompareAndDelete); code != gate.ExitPass {
		t.Fatalf("exit %d, want %d:\n%s", code, gate.ExitPass, out)
	}
}

// TestPlainDelFails: the same lock whose release is a plain DEL (the one
// changed line) deletes the next holder's key after a pause: two leases
// overlap, which breaks its lease promise: exit 1, the promise named.
func TestPlainDelFails(t *testing.T) {
	code, out := gateOf(t, "mylock-plain-del", PlainDel)
	if code != gate.ExitBroken {
		t.Fatalf("exit %d, want %d:\n%s", code, gate.ExitBroken, out)
	}
	if !strings.Contains(out, "**mylock-plain-del/client-pause: lease broken** (promised: lease safety under a client pause") ||
		!strings.Contains(out, "lease broken in 1/1 runs (promised safe), resource lost in 1/1 runs (expected)") {
		t.Fatalf("the verdict does not name the broken promise:\n%s", out)
	}
}
