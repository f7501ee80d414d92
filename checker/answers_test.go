package checker

import (
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestContradictions: an extend ok sent after the node removed the key,
// and a release ok after which the key stayed set and expired, are
// contradicted by the node; the same replies with the node's matching
// observations (the key still set at the extend, deleted by the release)
// are not; without observations nothing is judged. The answers verdict
// is invalid exactly when a reply is contradicted.
func TestContradictions(t *testing.T) {
	const k = "k"
	node := func(h *hist, ev string, at int64) *hist {
		return h.Add(history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess, Time: at, Key: k, Node: history.Int(0), Value: ev})
	}
	granted := func(h *hist) *hist { return node(h.Acquire(0, k, "a", 0, 10, 1000), "set", 5) }
	for _, tc := range []struct {
		name string
		h    *hist
		want history.Func
	}{
		{"extend ok after the key expired", node(granted(new(hist)), "expired", 500).Extend(0, k, "a", 600, 610, 2000), history.Extend},
		{"extend ok on a live key", node(granted(new(hist)).Extend(0, k, "a", 600, 610, 2000), "expire", 608), ""},
		{"release ok, the key outlived it", node(granted(new(hist)).Release(0, k, "a", 300, 310), "expired", 1005), history.Release},
		{"release ok that deleted the key", node(granted(new(hist)).Release(0, k, "a", 300, 310), "del", 312), ""},
		{"the previous holder's removal seen late", node(node(node(new(hist).Acquire(0, k, "a", 20, 40, 1000), "set", 5), "del", 25), "set", 30).Extend(0, k, "a", 600, 610, 2000), ""},
		// A contender set the key on the node during the acquire (a
		// partial grant) and deleted it (its cleanup), both seen after the
		// acquire's ok, and the lease's own set after them.
		{"a contender's cleanup seen after the grant", node(node(node(new(hist).Acquire(0, k, "a", 20, 40, 1000), "set", 30), "del", 45), "set", 46).Extend(0, k, "a", 600, 610, 2000), ""},
		{"the same, then the key expired", node(node(node(node(new(hist).Acquire(0, k, "a", 20, 40, 1000), "set", 30), "del", 45), "set", 46), "expired", 500).Extend(0, k, "a", 600, 610, 2000), history.Extend},
		{"not observed", new(hist).Acquire(0, k, "a", 0, 10, 1000).Extend(0, k, "a", 600, 610, 2000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Analyze(tc.h.Events(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			cs := a.Contradictions()
			verdict := map[bool]Verdict{true: Valid, false: Unknown}[a.Observed]
			if tc.want != "" {
				verdict = Invalid
			}
			if r := a.Result; r.Answers != verdict || r.Contradicted != len(cs) {
				t.Fatalf("answers %s (%s), %d contradicted, want %s and %d", r.Answers, r.AnswersReason, r.Contradicted, verdict, len(cs))
			}
			if tc.want == "" {
				if len(cs) > 0 {
					t.Fatalf("contradictions %+v, want none", cs)
				}
				return
			}
			if len(cs) != 1 || cs[0].Op != tc.want || cs[0].Node != 0 || cs[0].Text == "" {
				t.Fatalf("contradictions %+v, want one of %s on node 0", cs, tc.want)
			}
			if r := a.Result; r.Lease != Valid || !strings.Contains(r.AnswersReason, cs[0].Text) {
				t.Fatalf("lease %s, reason %q: a contradicted reply breaks no safety verdict and is quoted", r.Lease, r.AnswersReason)
			}
		})
	}
}
