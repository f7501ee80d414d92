package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/nemesis"
)

// TestEtcdClockRefused: every kind that moves the nodes' clocks is
// refused on etcd members in one line, before anything starts, naming
// why: the members are Go programs, which read their clocks through the
// vDSO where the LD_PRELOAD shim cannot reach, and etcd times leases and
// elections on the monotonic clock.
func TestEtcdClockRefused(t *testing.T) {
	n := 0
	for _, k := range nemesis.Kinds() {
		if !k.Needs.Cluster.Clock {
			continue
		}
		n++
		out := filepath.Join(t.TempDir(), "runs")
		_, stderr, code := torture(t, "run", "--lock", "etcd-mutex", "--nemesis", k.Name, "--duration", "2s", "--out", out)
		line := strings.TrimSpace(stderr)
		if code != exitError || strings.Contains(line, "\n") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line", k.Name, code, stderr, exitError)
			continue
		}
		for _, want := range []string{k.Name + " refused", "etcd members", "vDSO", "LD_PRELOAD", "monotonic clock"} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: %q does not say %q", k.Name, line, want)
			}
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: the refused run made %s (%v)", k.Name, out, err)
		}
	}
	if n < 5 {
		t.Fatalf("%d kinds move the nodes' clocks; the table has more", n)
	}
}
