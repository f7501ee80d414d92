package harness_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/locks"
)

// TestClientClockRefusesGoLock: a Go lock under client-clock is refused
// before anything starts, in one line.
func TestClientClockRefusesGoLock(t *testing.T) {
	_, err := harness.NewPlan(harness.Config{
		Workload: harness.Workload{Lock: "setnx", Duration: 3 * time.Second},
		Faults:   harness.Faults{Nemesis: []string{"client-clock"}, NemesisInterval: 500 * time.Millisecond},
	})
	if err == nil || !strings.Contains(err.Error(), "time.Now reads the clock without libc") || strings.Contains(err.Error(), "\n") {
		t.Errorf("NewPlan: %v, want a one-line refusal", err)
	}
}

// TestClientClockRun: a run of a Python lock under client-clock starts
// its clients with the run's own offset file, which the faults move and
// the heal sets back to 0.
func TestClientClockRun(t *testing.T) {
	if _, err := locks.PythonWithRedis(); err != nil {
		t.Skip(err)
	}
	p, err := harness.NewPlan(harness.Config{
		Workload: harness.Workload{Lock: "redlock-py", Clients: 2, Duration: 3 * time.Second, TTL: 500 * time.Millisecond},
		Cluster:  harness.Cluster{Nodes: 3},
		Faults:   harness.Faults{Nemesis: []string{"client-clock"}, NemesisInterval: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	sum, err := p.Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Faults == 0 {
		t.Fatal("no fault drawn")
	}
	b, err := os.ReadFile(filepath.Join(dir, "client-clock.offset"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 8 || int64(binary.NativeEndian.Uint64(b)) != 0 {
		t.Errorf("offset file %v after the run: want 8 bytes of offset 0", b)
	}
	h, err := os.ReadFile(sum.HistoryPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), "client clock ") {
		t.Error("no client clock fault in the history")
	}
}
