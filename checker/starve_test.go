package checker

import (
	"testing"

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
