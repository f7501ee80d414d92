package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

// TestSpuriousCut: a hold cut short with no fault active is a finding of
// the holds property, its cause told by the nodes: the key expired on a
// granting node before the notice (the lock let it lapse), or no node had
// removed it (the lock gave up a live hold); the same cut under a fault is
// no finding.
func TestSpuriousCut(t *testing.T) {
	const k, century = "k", int64(1) << 62
	observe := func(h *testutil.History, node int, ev string, at int64) *testutil.History {
		return h.Add(history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess, Time: at, Key: k, Node: history.Int(node), Value: ev})
	}
	base := func() *testutil.History {
		return observe(new(testutil.History).Acquire(0, k, "a", 0, 10e6, century), 0, "set", 5e6)
	}
	for _, tc := range []struct {
		name  string
		h     *testutil.History
		cause explain.Cause
	}{
		{"the key expired first", observe(base(), 0, "expired", 400e6).Lost(0, k, "a", 500e6), explain.ExpiredUnderHolder},
		{"no node removed the key", base().Lost(0, k, "a", 500e6), explain.GaveUp},
		{"under a partition", base().Fault(history.FaultStart, "partition n1", 100e6).Fault(history.FaultStop, "partition n1", 200e6).Lost(0, k, "a", 500e6), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := checker.Analyze(tc.h.Events(), checker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, _ := explain.Findings(&a)
			var holds []explain.Finding
			for _, f := range fs {
				if f.Property == "holds" {
					holds = append(holds, f)
				}
			}
			if tc.cause == "" {
				if len(holds) > 0 {
					t.Fatalf("a cut under a fault is a finding: %+v", holds)
				}
				return
			}
			if len(holds) != 1 || holds[0].Cause != tc.cause || !strings.Contains(holds[0].Text, "no fault was active") {
				t.Fatalf("findings %+v, want one holds finding caused by %q", holds, tc.cause)
			}
		})
	}
}

// TestBenign: a latency below a tenth of the TTL, jitter included, cannot
// cut a healthy hold short; a longer one, or any other fault, can.
func TestBenign(t *testing.T) {
	b := explain.Benign(time.Second)
	for desc, want := range map[string]bool{
		"latency-group: replies to client group 0 late by 50ms":  true,
		"latency-group: replies to client group 1 late by 100ms": false,
		"latency 50ms±10ms on n1 (down)":                         true,
		"latency 80ms±30ms on n1 (down)":                         false,
		"partition n1":                                           false,
		"clock: n1 jumped 50ms":                                  false,
	} {
		if got := b(desc); got != want {
			t.Errorf("Benign(1s)(%q) = %v, want %v", desc, got, want)
		}
	}
	if explain.Benign(0)("latency-group: replies to client group 0 late by 1ms") {
		t.Error("with no TTL known a latency is called benign")
	}
}
