package explain_test

import (
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

// TestContradictedReply: a reply a node contradicts is a finding of the
// answers property, with the reply and the node's state side by side: an
// extend ok on a key the node had expired (extend after expiry), a
// release done while the key outlived it (the lock's own logic); the
// same replies the node bears out are no finding.
func TestContradictedReply(t *testing.T) {
	const k = "k"
	observe := func(h *testutil.History, ev string, at int64) *testutil.History {
		return h.Add(history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess, Time: at, Key: k, Node: history.Int(0), Value: ev})
	}
	granted := func() *testutil.History {
		return observe(new(testutil.History).Acquire(0, k, "a", 0, 10e6, 1000e6), "set", 5e6)
	}
	for _, tc := range []struct {
		name  string
		h     *testutil.History
		cause explain.Cause
		text  []string
	}{
		{"extend ok after expiry", observe(granted(), "expired", 500e6).Extend(0, k, "a", 600e6, 610e6, 2000e6), explain.ExtendAfterExpiry,
			[]string{"returned ok at 0.610 s", "n1 had expired the key at 0.500 s", "The reply: the token still held the key; the node: the key was gone"}},
		{"release done, the key outlived it", observe(granted().Release(0, k, "a", 300e6, 310e6), "expired", 1005e6), explain.LockLogic,
			[]string{"returned done at 0.310 s", "until it was expired at 1.005 s", "The reply: the key was free; the node: it still held it"}},
		{"extend ok on a live key", observe(granted().Extend(0, k, "a", 600e6, 610e6, 2000e6), "expire", 608e6), "", nil},
		{"release that deleted the key", observe(granted().Release(0, k, "a", 300e6, 310e6), "del", 305e6), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := checker.Analyze(tc.h.Events(), checker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, total := explain.Findings(&a)
			var lies []explain.Finding
			for _, f := range fs {
				if f.Property == "answers" {
					lies = append(lies, f)
				}
			}
			if tc.cause == "" {
				if len(lies) > 0 || total > 0 {
					t.Fatalf("a reply the node bears out is a finding: %+v", lies)
				}
				return
			}
			if len(lies) != 1 || lies[0].Cause != tc.cause || total != 1 {
				t.Fatalf("findings %+v (total %d), want one answers finding caused by %q", lies, total, tc.cause)
			}
			for _, s := range tc.text {
				if !strings.Contains(lies[0].Text, s) {
					t.Errorf("text %q lacks %q", lies[0].Text, s)
				}
			}
		})
	}
}
