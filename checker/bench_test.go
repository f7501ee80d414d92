package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// genValid generates a valid history of about n operations on keys keys,
// procs processes per key, with serial holds: per key, one client at a
// time acquires, runs a section, sometimes extends, and releases, while
// another client's acquire fails.
func genValid(tb testing.TB, n, keys, procs int) []history.Event {
	tb.Helper()
	type cursor struct {
		t     int64
		value int64
		turn  int
	}
	cur := make([]cursor, keys)
	evs := make([]history.Event, 0, 2*n+16)
	ops := 0
	for cycle := 0; ops < n; cycle++ {
		for k := range keys {
			c := &cur[k]
			key := fmt.Sprintf("key-%d", k)
			p := k*procs + c.turn%procs
			other := k*procs + (c.turn+1)%procs
			tok := fmt.Sprintf("%d-%d", k, c.turn)
			t := c.t
			ev := func(typ history.Type, f history.Func, p int, at int64) history.Event {
				return history.Event{Type: typ, F: f, Process: p, Key: key, Token: tok, Time: t + at}
			}
			inv := ev(history.Invoke, history.Acquire, p, 0)
			inv.Token = ""
			ok := ev(history.Ok, history.Acquire, p, 100)
			ok.Fence, ok.ValidUntil = int64(c.turn+1), t+10_000
			secInv := ev(history.Invoke, history.Section, p, 110)
			secInv.Fence = ok.Fence
			secOK := ev(history.Ok, history.Section, p, 200)
			secOK.Fence, secOK.Read, secOK.Wrote = ok.Fence, history.Int64(c.value), history.Int64(c.value+1)
			failInv := ev(history.Invoke, history.Acquire, other, 150)
			failInv.Token = ""
			fail := ev(history.Fail, history.Acquire, other, 160)
			fail.Token = ""
			evs = append(evs, inv, ok, secInv, failInv, fail, secOK)
			ops += 3
			if c.turn%4 == 0 {
				ext := ev(history.Ok, history.Extend, p, 220)
				ext.ValidUntil = t + 20_000
				evs = append(evs, ev(history.Invoke, history.Extend, p, 210), ext)
				ops++
			}
			evs = append(evs, ev(history.Invoke, history.Release, p, 300), ev(history.Ok, history.Release, p, 310))
			ops++
			c.value++
			c.turn++
			c.t += 400
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time < evs[j].Time })
	return evs
}

func TestGenValid(t *testing.T) {
	evs := genValid(t, 5000, 7, 3)
	r := mustCheck(t, evs, Options{})
	wantVerdicts(t, r, Valid, Valid)
	if r.Stats.Holds < 900 || r.Stats.SuccessRatio != 0.5 {
		t.Errorf("stats %+v", r.Stats)
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := genValid(b, n, 64, 4)
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Check(evs, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if !r.Valid() {
					b.Fatalf("generated history not valid: %+v", r)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// BenchmarkCheckStream: the streaming path of `torture check`, from the
// encoded history (decoding included) to the verdicts.
func BenchmarkCheckStream(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, e := range genValid(b, n, 64, 4) {
			if err := enc.Encode(e); err != nil {
				b.Fatal(err)
			}
		}
		data := buf.Bytes()
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r, _, err := CheckDecoder(history.NewDecoder(bytes.NewReader(data)), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if !r.Valid() {
					b.Fatalf("generated history not valid: %+v", r)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
