package checker

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// holdsOf builds sorted holds of key "k" from [start, end] pairs, one
// process each.
func holdsOf(tb testing.TB, spans ...[2]int64) []Hold {
	tb.Helper()
	var hs []Hold
	for i, s := range spans {
		if s[1] < s[0] {
			tb.Fatalf("hold %d ends before it starts: %v", i, s)
		}
		hs = append(hs, Hold{Key: "k", Process: i, Token: string(rune('a' + i%26)), Start: s[0], End: s[1]})
	}
	sortHolds(hs)
	return hs
}

func sortHolds(hs []Hold) {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Start != hs[j].Start {
			return hs[i].Start < hs[j].Start
		}
		return hs[i].End < hs[j].End
	})
}

// porcupineLease checks holds as one partition.
func porcupineLease(tb testing.TB, hs []Hold) porcupine.CheckResult {
	tb.Helper()
	return porcupine.CheckOperationsTimeout(leaseModel(hs), leaseOps(hs, 0, len(hs)), 10*time.Second)
}

// overlapsNaive is the definition, pair by pair.
func overlapsNaive(hs []Hold) bool {
	for i := range hs {
		for j := range i {
			a, b := hs[i], hs[j]
			if a.Start < b.End && b.Start < a.End {
				return true
			}
		}
	}
	return false
}

func TestSweep(t *testing.T) {
	tests := []struct {
		name  string
		spans [][2]int64
		want  int // overlaps
	}{
		{"none", nil, 0},
		{"one", [][2]int64{{0, 10}}, 0},
		{"disjoint", [][2]int64{{0, 10}, {20, 30}}, 0},
		{"touching", [][2]int64{{0, 10}, {10, 20}}, 0},
		{"overlap", [][2]int64{{0, 10}, {9, 20}}, 1},
		{"nested", [][2]int64{{0, 100}, {10, 20}, {30, 40}}, 2},
		{"inside a long hold after a short one", [][2]int64{{0, 100}, {5, 6}, {50, 60}}, 2},
		{"same start", [][2]int64{{5, 10}, {5, 20}}, 1},
		{"instant at the start of another", [][2]int64{{5, 5}, {5, 20}}, 0},
		{"instant at the end of another", [][2]int64{{0, 5}, {5, 5}}, 0},
		{"instant inside another", [][2]int64{{0, 10}, {5, 5}}, 1},
		{"two instants at one time", [][2]int64{{5, 5}, {5, 5}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := holdsOf(t, tt.spans...)
			got := sweep(hs)
			if len(got) != tt.want {
				t.Fatalf("sweep found %d overlaps %v, want %d", len(got), got, tt.want)
			}
			if overlapsNaive(hs) != (tt.want > 0) {
				t.Fatalf("naive check disagrees with want")
			}
			wantRes := porcupine.Ok
			if tt.want > 0 {
				wantRes = porcupine.Illegal
			}
			if res := porcupineLease(t, hs); res != wantRes {
				t.Fatalf("porcupine %s, want %s", res, wantRes)
			}
			for _, o := range got {
				if !(o.A.Start <= o.B.Start && o.B.Start < o.A.End && o.Start == o.B.Start && o.End >= o.Start) {
					t.Errorf("bad overlap %+v", o)
				}
			}
		})
	}
}

// TestLeaseAgreement: on random holds with many ties, the sweep, the
// pairwise definition and porcupine's lease model agree, whether the key
// is checked whole or cut into the smallest chunks.
func TestLeaseAgreement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	illegal := 0
	for iter := range 3000 {
		n := 1 + rng.IntN(7)
		spans := make([][2]int64, n)
		// Mostly serial holds on a tiny time grid, so ties are common.
		var t0 int64
		for i := range spans {
			t0 += int64(rng.IntN(4)) - 1
			t0 = max(t0, 0)
			spans[i] = [2]int64{t0, t0 + int64(rng.IntN(4))}
			t0 = spans[i][1]
		}
		hs := holdsOf(t, spans...)
		sw := len(sweep(hs)) > 0
		if naive := overlapsNaive(hs); sw != naive {
			t.Fatalf("iteration %d: sweep %v, pairwise %v on %v", iter, sw, naive, spans)
		}
		res := porcupineLease(t, hs)
		if (res == porcupine.Illegal) != sw || res == porcupine.Unknown {
			t.Fatalf("iteration %d: porcupine %s, sweep overlap %v on %v", iter, res, sw, spans)
		}
		chunked := porcupine.Ok
		for _, c := range leaseChunks(hs, 1) {
			chunked = worse(chunked, porcupine.CheckOperationsTimeout(leaseModel(hs), leaseOps(hs, c[0], c[1]), 10*time.Second))
		}
		if chunked != res {
			t.Fatalf("iteration %d: porcupine %s whole, %s in chunks %v on %v", iter, res, chunked, leaseChunks(hs, 1), spans)
		}
		if sw {
			illegal++
		}
	}
	if illegal < 300 || illegal > 2700 {
		t.Errorf("%d of 3000 random histories overlap; the generator is lopsided", illegal)
	}
}

func TestLeaseChunks(t *testing.T) {
	// 3*512 serial holds with a gap between each, plus a run of
	// touching holds that must not be cut.
	var spans [][2]int64
	var t0 int64
	for range 3 * 512 {
		spans = append(spans, [2]int64{t0, t0 + 10})
		t0 += 20
	}
	for range 512 + 10 {
		spans = append(spans, [2]int64{t0, t0 + 10})
		t0 += 10
	}
	hs := holdsOf(t, spans...)
	chunks := leaseChunks(hs, 512)
	if len(chunks) != 4 {
		t.Fatalf("%d chunks, want 4: %v", len(chunks), chunks)
	}
	next := 0
	for _, c := range chunks {
		if c[0] != next || c[1] <= c[0] {
			t.Fatalf("chunks %v do not tile [0, %d)", chunks, len(hs))
		}
		next = c[1]
		if c[0] > 0 {
			var maxEnd int64
			for _, h := range hs[:c[0]] {
				maxEnd = max(maxEnd, h.End)
			}
			if hs[c[0]].Start <= maxEnd {
				t.Errorf("chunk %v starts at %d, not after the end %d of the previous holds", c, hs[c[0]].Start, maxEnd)
			}
		}
	}
	if next != len(hs) {
		t.Fatalf("chunks %v end at %d, want %d", chunks, next, len(hs))
	}
	if got := leaseChunks(nil, 512); len(got) != 0 {
		t.Errorf("leaseChunks(nil, 512) = %v", got)
	}
}

// TestCompareLease drives the comparison with forced disagreements.
func TestCompareLease(t *testing.T) {
	ov := map[string][]Overlap{"bad": {{Key: "bad", A: Hold{Process: 1, Token: "a", Start: 0, End: 10}, B: Hold{Process: 2, Token: "b", Start: 5, End: 20}, Start: 5, End: 10}}}
	keys := []string{"bad", "good"}
	tests := []struct {
		name         string
		porc         map[string]porcupine.CheckResult
		overlaps     map[string][]Overlap
		want         Verdict
		disagreement string // substring; "" for none
	}{
		{"agree valid", map[string]porcupine.CheckResult{"bad": porcupine.Ok, "good": porcupine.Ok}, nil, Valid, ""},
		{"absent keys are Ok", nil, nil, Valid, ""},
		{"agree invalid", map[string]porcupine.CheckResult{"bad": porcupine.Illegal}, ov, Invalid, ""},
		{"porcupine Ok, sweep overlap", map[string]porcupine.CheckResult{"bad": porcupine.Ok, "good": porcupine.Ok}, ov, Unknown, `key "bad": porcupine says Ok but the sweep found 1 overlap`},
		{"porcupine Illegal, sweep none", map[string]porcupine.CheckResult{"good": porcupine.Illegal}, nil, Unknown, `key "good": porcupine says Illegal but the sweep found no overlap`},
		{"disagreement beats a real violation", map[string]porcupine.CheckResult{"bad": porcupine.Illegal, "good": porcupine.Illegal}, ov, Unknown, `key "good"`},
		{"timeout", map[string]porcupine.CheckResult{"good": porcupine.Unknown}, nil, Unknown, ""},
		{"timeout with a sweep overlap is no disagreement", map[string]porcupine.CheckResult{"bad": porcupine.Unknown}, ov, Unknown, ""},
		{"violation beats a timeout", map[string]porcupine.CheckResult{"bad": porcupine.Illegal, "good": porcupine.Unknown}, ov, Invalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := compareLease(keys, tt.porc, tt.overlaps)
			if o.verdict != tt.want {
				t.Errorf("verdict %s, want %s", o.verdict, tt.want)
			}
			if tt.disagreement == "" && o.disagreement != "" {
				t.Errorf("unexpected disagreement %q", o.disagreement)
			}
			if tt.disagreement != "" && (!strings.Contains(o.disagreement, tt.disagreement) || !strings.HasPrefix(o.disagreement, "checker bug")) {
				t.Errorf("disagreement %q, want it to contain %q", o.disagreement, tt.disagreement)
			}
		})
	}
}

// TestDisagreementFromBrokenModel: a lease model that accepts everything
// (a stand-in for a porcupine or model bug) is caught by the sweep.
func TestDisagreementFromBrokenModel(t *testing.T) {
	holds := holdsOf(t, [2]int64{0, 10}, [2]int64{5, 20})
	broken := porcupine.Model{Init: func() any { return 0 }, Step: func(s, _, _ any) (bool, any) { return true, s }}
	porc := runJobs([]job{{key: "k", size: 4, model: broken, ops: func() []porcupine.Operation { return leaseOps(holds, 0, 2) }}}, time.Second)
	o := compareLease([]string{"k"}, porc, map[string][]Overlap{"k": sweep(holds)})
	if o.verdict != Unknown || !strings.Contains(o.disagreement, "porcupine says Ok") {
		t.Fatalf("outcome %+v", o)
	}
	if len(o.failed) != 0 {
		t.Errorf("failed keys %v", o.failed)
	}
}

func TestWorse(t *testing.T) {
	tests := []struct{ a, b, want porcupine.CheckResult }{
		{"", porcupine.Ok, porcupine.Ok},
		{porcupine.Ok, porcupine.Unknown, porcupine.Unknown},
		{porcupine.Unknown, porcupine.Ok, porcupine.Unknown},
		{porcupine.Unknown, porcupine.Illegal, porcupine.Illegal},
		{porcupine.Illegal, porcupine.Unknown, porcupine.Illegal},
	}
	for _, tt := range tests {
		if got := worse(tt.a, tt.b); got != tt.want {
			t.Errorf("worse(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
