package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

// TestLongestWait: a client that kept failing while another was granted
// the key again and again starved, from its first try to its grant (or
// the end); one that waited while nobody else got the key did not (that
// is liveness's concern), nor one granted at once.
func TestLongestWait(t *testing.T) {
	const k = "k"
	// P0 holds k in turns of 100 from 0 to 1000; P1 tries every 50.
	turns := func(h *hist) *hist {
		for i := int64(0); i < 10; i++ {
			tok := string(rune('a' + i))
			h.Acquire(0, k, tok, i*100, i*100+1, i*100+500).Release(0, k, tok, i*100+90, i*100+91)
		}
		return h
	}
	fails := func(h *hist, from, to int64) *hist {
		for t := from; t < to; t += 50 {
			h.AcquireEnds(1, k, history.Fail, t, t+10)
		}
		return h
	}
	for _, tc := range []struct {
		name     string
		h        *hist
		want     bool
		from, to int64
		untilEnd bool
	}{
		{"starved, then granted", fails(turns(new(hist)), 20, 1000).Acquire(1, k, "z", 1000, 1005, 1500), true, 20, 1005, false},
		{"starved to the end", fails(turns(new(hist)), 20, 1000), true, 20, 991, true},
		{"waited while nobody got it", fails(new(hist).Acquire(0, k, "a", 0, 1, 5000), 20, 1000), false, 0, 0, false},
		{"granted at once", turns(new(hist)).Acquire(1, k, "z", 1000, 1005, 1500), false, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{})
			w := r.Stats.LongestWait
			if !tc.want {
				if w != nil {
					t.Fatalf("longest wait %+v, want none", w)
				}
				return
			}
			if w == nil || w.Process != 1 || w.From != tc.from || w.To != tc.to || w.UntilEnd != tc.untilEnd || w.Others == 0 {
				t.Fatalf("longest wait %+v, want P1 from %d to %d (until the end %v) with others granted", w, tc.from, tc.to, tc.untilEnd)
			}
		})
	}
}

// TestStarvation: a client that kept failing, under no fault, for longer
// than three validities plus the longest acquire call while another
// client was granted the key again and again starved; the same wait
// within the bound, or mostly under a fault, did not; a history in which
// no client waited while another was granted, or shorter than the bound,
// decides nothing.
func TestStarvation(t *testing.T) {
	const k = "k"
	// P0 holds k in turns of 100, each valid 500 from its invoke; P1
	// fails every 50 from 20 to last: a wait of last-20 while P0 gets it.
	h := func(last int64) *hist {
		h := new(hist)
		for i := int64(0); i*100 < last; i++ {
			tok := string(rune('a'+i%26)) + string(rune('a'+i/26))
			h.Acquire(0, k, tok, i*100, i*100+1, i*100+500).Release(0, k, tok, i*100+90, i*100+91)
		}
		for t := int64(20); t < last; t += 50 {
			h.AcquireEnds(1, k, history.Fail, t, t+10)
		}
		return h
	}
	for _, tc := range []struct {
		name  string
		h     *hist
		bound time.Duration
		want  Verdict
	}{
		// The default bound: 3 × 500 + the longest call, 10.
		{"starved past three validities", h(3000), 0, Invalid},
		{"a wait within three validities", h(1400).Acquire(1, k, "z", 1400, 1405, 1900).Release(1, k, "z", 1500, 1510).Acquire(0, k, "y", 1600, 1601, 2100).Release(0, k, "y", 1700, 1701), 0, Valid},
		{"a bound given", h(1400), 1000, Invalid},
		{"starved, but under a fault", h(3000).Fault(history.FaultStart, "partition n1", 100).Fault(history.FaultStop, "partition n1", 2900), 0, Valid},
		{"no contention", new(hist).Acquire(0, k, "a", 0, 1, 500).Release(0, k, "a", 90, 91).Acquire(1, k, "b", 200, 201, 700), 0, Unknown},
		{"a history shorter than the bound", h(400), 0, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.h.Events(), Options{StarvationBound: tc.bound})
			if r.Starvation != tc.want {
				t.Fatalf("starvation %s (%s), bound %s, want %s; longest wait %+v", r.Starvation, r.StarvationReason, r.StarvationBound, tc.want, r.Stats.LongestWait)
			}
			if tc.bound == 0 && tc.want != Unknown && r.StarvationBound != 1510 {
				t.Fatalf("bound %d, want 3 × 500 + 10", r.StarvationBound)
			}
			if tc.want == Invalid && (r.Lease != Valid || !strings.Contains(r.StarvationReason, "P1")) {
				t.Fatalf("lease %s, reason %q: a starved client breaks no safety verdict and is named", r.Lease, r.StarvationReason)
			}
		})
	}
}

// TestSplitVotes: on three observed nodes, contenders that all fail for
// longer than a validity while the key is free on every node split their
// votes; the same for less than a validity, or while one node still
// holds a crashed holder's key (no split: the key was not free), or
// under a fault, does not; a key observed on one node, or a history
// shorter than the bound, decides nothing.
func TestSplitVotes(t *testing.T) {
	const k = "k"
	node := func(h *hist, n int, ev string, at int64) *hist {
		return h.Add(history.Event{Type: history.Info, F: history.NodeKey, Process: history.ObserverProcess, Time: at, Key: k, Node: history.Int(n), Value: ev})
	}
	// P0 holds k on nodes 0–2 from 10 to its release at 100 (valid to
	// 1000); from 200, P1 and P2 each win one node every round and give it
	// back, until P1 is granted at grant (and releases 500 later). keep
	// leaves node 2's key set.
	h := func(nodes int, grant int64, keep bool) *hist {
		h := new(hist).Acquire(0, k, "a", 0, 10, 1000).Release(0, k, "a", 100, 110)
		for n := range nodes {
			node(h, n, "set", 5)
			if !keep || n != 2 {
				node(h, n, "del", 105)
			}
		}
		for t := int64(200); t < grant; t += 100 {
			h.AcquireEnds(1, k, history.Fail, t, t+20).AcquireEnds(2, k, history.Fail, t, t+20)
			node(node(h, 0, "set", t+5), 0, "del", t+15)
			if nodes > 1 {
				node(node(h, 1, "set", t+5), 1, "del", t+15)
			}
		}
		return h.Acquire(1, k, "b", grant, grant+10, grant+1000).Release(1, k, "b", grant+500, grant+510)
	}
	for _, tc := range []struct {
		name string
		h    *hist
		want Verdict
	}{
		{"split votes for two validities", h(3, 2200, false), Invalid},
		{"split votes resolved within a validity", h(3, 800, false), Valid},
		{"a node kept the key", h(3, 2200, true), Valid},
		{"split votes under a fault", h(3, 2200, false).Fault(history.FaultStart, "latency n1", 150).Fault(history.FaultStop, "latency n1", 2000), Valid},
		{"one node", h(1, 2200, false), Unknown},
		{"a history shorter than the bound", h(3, 300, false), Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Analyze(tc.h.Events(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Result
			if r.SplitVotes != tc.want {
				t.Fatalf("split votes %s (%s), want %s; longest %+v", r.SplitVotes, r.SplitVotesReason, tc.want, r.SplitVote)
			}
			if tc.want != Invalid {
				return
			}
			if v := r.SplitVote; v == nil || v.From != 200 || v.To != 2210 || v.Contenders != 2 || r.SplitVoteBound != 1000 {
				t.Fatalf("split vote %+v (bound %s), want [200, 2210] by 2 contenders against 1000", v, r.SplitVoteBound)
			}
		})
	}
}
