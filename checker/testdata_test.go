package checker

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// testdataName is the naming convention of testdata/:
//
//	lease-<verdict>_resource-<verdict>_<what>.jsonl  checked, verdicts as named
//	lease-<verdict>_resource-<verdict>_liveness-<ok|stuck|unknown>_<what>.jsonl
//	                                                 also the liveness verdict
//	malformed_<what>.jsonl                          rejected by history.Read or Check
//
// Every history that once exposed a bug goes there.
var testdataName = regexp.MustCompile(`^lease-(valid|invalid|unknown)_resource-(valid|invalid|unknown)(?:_liveness-(ok|stuck|unknown))?_[a-z0-9-]+\.jsonl$`)

func TestTestdata(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no histories in testdata/")
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(paths) {
		t.Errorf("testdata/ has %d entries but %d .jsonl files", len(entries), len(paths))
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			if strings.HasPrefix(name, "malformed_") {
				evs, err := history.ReadFile(path)
				if err == nil {
					_, err = Check(evs, Options{})
				}
				if err == nil {
					t.Fatal("a malformed history was accepted")
				}
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, history.ErrInvalid) {
					t.Fatalf("error %v is neither ErrMalformed nor history.ErrInvalid", err)
				}
				return
			}
			m := testdataName.FindStringSubmatch(name)
			if m == nil {
				t.Fatalf("%s does not follow lease-<verdict>_resource-<verdict>_<what>.jsonl", name)
			}
			evs, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r := mustCheck(t, evs, Options{})
			wantVerdicts(t, r, Verdict(m[1]), Verdict(m[2]))
			if m[3] != "" && r.Liveness != Liveness(m[3]) {
				t.Fatalf("liveness %s (%s), want %s", r.Liveness, r.LivenessReason, m[3])
			}
		})
	}
}

// TestVerdictsIgnoreNodes: the verdicts never depend on the per-node
// evidence. Every checkable history of testdata/ is checked as it is and
// again with evidence on every completion of an acquire, release and
// extend, evidence chosen to mislead (an ok granted by no node, a fail
// granted by all); the results are the same.
func TestVerdictsIgnoreNodes(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "lease-*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no histories in testdata/: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
			evs, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			plain := mustCheck(t, evs, Options{})
			with := append([]history.Event(nil), evs...)
			n := 0
			for i, e := range with {
				if e.Type == history.Invoke || (e.F != history.Acquire && e.F != history.Release && e.F != history.Extend) {
					continue
				}
				if e.Type == history.Ok {
					with[i].Nodes = &history.Nodes{Attempt: 3, Refused: []int{0, 1}, Silent: []int{2}}
				} else {
					with[i].Nodes = &history.Nodes{Attempt: 1, Granted: []int{0, 1, 2}, Unlocked: []int{0}}
				}
				n++
			}
			// A node's observation after every event, misleading
			// too (a key set by a node after a client released it, gone
			// while a client held it), the verdicts and the statistics but
			// the count of events stay the same.
			var observed []history.Event
			for i, e := range with {
				observed = append(observed, e)
				if i%2 == 0 && e.Key != "" {
					observed = append(observed, history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess,
						Time: e.Time + 7, Key: e.Key, Node: history.Int(i % 3), Value: []string{"set", "expired", "del"}[i%3]})
				}
			}
			got := mustCheck(t, observed, Options{})
			if got.Stats.Events != len(observed) {
				t.Errorf("with node observations: %d events counted, want %d", got.Stats.Events, len(observed))
			}
			got.Stats.Events = plain.Stats.Events // the one figure that counts them
			if !reflect.DeepEqual(got, plain) {
				t.Errorf("with node observations:\n%+v\nwithout:\n%+v", got, plain)
			}
			if n == 0 {
				t.Skip("no acquire, release or extend completes here")
			}
			if got := mustCheck(t, with, Options{}); !reflect.DeepEqual(got, plain) {
				t.Errorf("with evidence on %d events:\n%+v\nwithout:\n%+v", n, got, plain)
			}
		})
	}
}
