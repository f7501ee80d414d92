package checker

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestResourceStep(t *testing.T) {
	tests := []struct {
		name  string
		state counterRange
		in    sectionInput
		ok    bool
		want  counterRange
	}{
		{"ok from its read", counterRange{3, 3}, sectionInput{kind: sectionOK, read: 3}, true, counterRange{4, 4}},
		{"ok from another value", counterRange{3, 3}, sectionInput{kind: sectionOK, read: 2}, false, counterRange{}},
		{"ok inside a range", counterRange{3, 6}, sectionInput{kind: sectionOK, read: 5}, true, counterRange{6, 6}},
		{"ok above a range", counterRange{3, 6}, sectionInput{kind: sectionOK, read: 7}, false, counterRange{}},
		{"fail anywhere", counterRange{3, 6}, sectionInput{kind: sectionFail}, true, counterRange{3, 6}},
		{"unknown widens", counterRange{3, 6}, sectionInput{kind: sectionUnknown}, true, counterRange{3, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, st := resourceStep(tt.state, tt.in, nil)
			if ok != tt.ok || (ok && st.(counterRange) != tt.want) {
				t.Errorf("step = %v, %v; want %v, %v", ok, st, tt.ok, tt.want)
			}
		})
	}
}

// TestResourceModelsAgree: the interval model gives the same verdict as
// the textbook nondeterministic model (porcupine's power set
// construction) on random histories with lost updates, fails and unknown
// outcomes.
func TestResourceModelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	verdicts := map[porcupine.CheckResult]int{}
	for iter := range 2000 {
		n := 1 + rng.IntN(8)
		secs := make([]section, n)
		for i := range secs {
			call := int64(rng.IntN(20))
			s := section{process: i, call: call, ret: call + int64(rng.IntN(6))}
			switch x := rng.IntN(10); {
			case x < 6:
				s.kind, s.read = sectionOK, int64(rng.IntN(n))
			case x < 8:
				s.kind = sectionFail
			case x < 9:
				s.kind = sectionUnknown
			default:
				s.kind, s.ret = sectionUnknown, math.MaxInt64
			}
			secs[i] = s
		}
		ops := resourceOps(secs)
		a := porcupine.CheckOperationsTimeout(resourceModel(0), ops, 10*time.Second)
		b := porcupine.CheckOperationsTimeout(resourceNondeterministic(), ops, 10*time.Second)
		if a != b || a == porcupine.Unknown {
			t.Fatalf("iteration %d: interval model %s, nondeterministic model %s on %+v", iter, a, b, secs)
		}
		verdicts[a]++
	}
	if verdicts[porcupine.Ok] < 200 || verdicts[porcupine.Illegal] < 200 {
		t.Errorf("verdicts %v: the generator is lopsided", verdicts)
	}
}

// checkChunked checks sections (sorted by call) as resourceChunks cuts
// them with the given size, one porcupine call per chunk.
func checkChunked(tb testing.TB, secs []section, size int) porcupine.CheckResult {
	tb.Helper()
	var res porcupine.CheckResult
	for _, c := range resourceChunks(secs, size) {
		res = worse(res, porcupine.CheckOperationsTimeout(resourceModel(c.init), resourceOps(secs[c.lo:c.hi]), 10*time.Second))
	}
	if res == "" {
		res = porcupine.Ok
	}
	return res
}

func TestResourceChunks(t *testing.T) {
	ok := func(call, ret, read int64) section { return section{kind: sectionOK, call: call, ret: ret, read: read} }
	fail := func(call, ret int64) section { return section{kind: sectionFail, call: call, ret: ret} }
	unknown := func(call, ret int64) section { return section{kind: sectionUnknown, call: call, ret: ret} }
	tests := []struct {
		name string
		secs []section
		want []resourceChunk
	}{
		{"none", nil, nil},
		{"serial oks", []section{ok(0, 1, 0), ok(2, 3, 1), ok(4, 5, 2)}, []resourceChunk{{0, 1, 0}, {1, 2, 1}, {2, 3, 2}}},
		{"touching is no gap", []section{ok(0, 1, 0), ok(1, 3, 1), ok(4, 5, 2)}, []resourceChunk{{0, 2, 0}, {2, 3, 2}}},
		{"concurrent oks pin the largest read", []section{ok(0, 5, 1), ok(1, 4, 0), ok(6, 7, 2)}, []resourceChunk{{0, 2, 0}, {2, 3, 2}}},
		{"fails keep the value", []section{ok(0, 1, 0), fail(2, 3), ok(4, 5, 1)}, []resourceChunk{{0, 1, 0}, {1, 2, 1}, {2, 3, 1}}},
		{"unknown: no cut until an ok pins the value", []section{ok(0, 1, 0), unknown(2, 3), fail(4, 5), ok(6, 7, 2), ok(8, 9, 3)},
			[]resourceChunk{{0, 1, 0}, {1, 4, 1}, {4, 5, 3}}},
		{"unfinished: the rest is one chunk", []section{ok(0, 1, 0), unknown(2, math.MaxInt64), ok(6, 7, 2), ok(8, 9, 3)},
			[]resourceChunk{{0, 1, 0}, {1, 4, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resourceChunks(tt.secs, 1)
			if len(got) != len(tt.want) {
				t.Fatalf("chunks %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("chunks %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestResourceChunksExact: cutting a key into the smallest chunks gives
// the same verdict as checking it whole, on random histories with gaps,
// lost updates, fails and unknown outcomes.
func TestResourceChunksExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	verdicts := map[porcupine.CheckResult]int{}
	for iter := range 2000 {
		var secs []section
		var v, t0 int64
		for round := range 2 + rng.IntN(6) {
			var end int64
			for p := range 1 + rng.IntN(3) {
				call := t0 + int64(rng.IntN(3))
				s := section{process: 10*round + p, call: call, ret: call + int64(rng.IntN(4))}
				switch x := rng.IntN(20); {
				case x < 13:
					s.kind, s.read = sectionOK, v
					if rng.IntN(8) == 0 {
						s.read += int64(rng.IntN(3)) - 1
					}
					v = s.read + 1
				case x < 16:
					s.kind = sectionFail
				case x < 19:
					s.kind = sectionUnknown
					v += int64(rng.IntN(2))
				default:
					s.kind, s.ret = sectionUnknown, math.MaxInt64
				}
				secs = append(secs, s)
				if s.ret != math.MaxInt64 {
					end = max(end, s.ret)
				}
			}
			t0 = end + int64(rng.IntN(4)) - 1
		}
		sort.Slice(secs, func(i, j int) bool { return secs[i].call < secs[j].call })
		whole := porcupine.CheckOperationsTimeout(resourceModel(0), resourceOps(secs), 10*time.Second)
		chunked := checkChunked(t, secs, 1)
		if whole != chunked || whole == porcupine.Unknown {
			t.Fatalf("iteration %d: whole %s, chunked %s (chunks %v) on %+v", iter, whole, chunked, resourceChunks(secs, 1), secs)
		}
		verdicts[whole]++
	}
	if verdicts[porcupine.Ok] < 200 || verdicts[porcupine.Illegal] < 200 {
		t.Errorf("verdicts %v: the generator is lopsided", verdicts)
	}
}

// resourceNondeterministic is resourceModel written as a
// NondeterministicModel over single values: the reference the tests
// compare resourceModel with.
func resourceNondeterministic() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{int64(0)} },
		Step: func(state, input, _ any) []any {
			s, in := state.(int64), input.(sectionInput)
			switch in.kind {
			case sectionOK:
				if s != in.read {
					return nil
				}
				return []any{s + 1}
			case sectionFail:
				return []any{s}
			default:
				return []any{s, s + 1}
			}
		},
		DescribeOperation: func(input, _ any) string { return describeSection(input) },
	}
	return nm.ToModel()
}
