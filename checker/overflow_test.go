package checker

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

// TestCenturyValidity: a self-renewing lock reports its validity as
// "until release", a century; three of those overflowed the default
// liveness bound into a negative one, and check said "no acquire
// succeeded" of a history whose acquires succeeded. The bound saturates
// at the longest duration instead.
func TestCenturyValidity(t *testing.T) {
	events, err := history.ReadFile("testdata/lease-valid_resource-valid_told-lost-in-time.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(events, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.LivenessBound != math.MaxInt64 || strings.Contains(r.LivenessReason, "no acquire succeeded") {
		t.Fatalf("liveness bound %s, reason %q; want the longest duration, and no word of acquires that did not succeed", r.LivenessBound, r.LivenessReason)
	}
}

// FuzzCheckTimes feeds the decoder and the checker a small history of
// two clients whose times and validities are arbitrary int64s (negative,
// huge, out of order): each either refuses it (an error) or checks it
// without a panic, with no duration that wrapped below zero and, when an
// acquire succeeded, no word that none did.
func FuzzCheckTimes(f *testing.F) {
	const century = 3153600000000000000
	f.Add(int64(0), int64(100), int64(century), int64(110), int64(120), int64(century), int64(500))
	f.Add(int64(0), int64(10), int64(math.MaxInt64), int64(1), int64(math.MaxInt64-1), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(1), int64(0), int64(0), int64(-1), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, a0, a1, v0, b0, b1, v1, rel int64) {
		var buf bytes.Buffer
		line := func(format string, args ...any) { fmt.Fprintf(&buf, format+"\n", args...) }
		line(`{"type":"invoke","f":"acquire","process":0,"time":%d,"key":"k"}`, a0)
		line(`{"type":"ok","f":"acquire","process":0,"time":%d,"key":"k","token":"a","valid_until":%d}`, a1, v0)
		line(`{"type":"invoke","f":"acquire","process":1,"time":%d,"key":"k"}`, b0)
		line(`{"type":"ok","f":"acquire","process":1,"time":%d,"key":"k","token":"b","valid_until":%d}`, b1, v1)
		line(`{"type":"info","f":"lost","process":0,"time":%d,"key":"k","token":"a"}`, rel)
		line(`{"type":"invoke","f":"release","process":1,"time":%d,"key":"k","token":"b"}`, rel)
		events, err := history.Read(&buf)
		if err != nil {
			return
		}
		r, err := Check(events, Options{Timeout: time.Second})
		if err != nil {
			return
		}
		if r.LivenessBound < 0 || r.Stats.Duration < 0 {
			t.Fatalf("a duration wrapped: liveness bound %d, history %d", r.LivenessBound, r.Stats.Duration)
		}
		if strings.Contains(r.LivenessReason, "no acquire succeeded") {
			t.Fatalf("liveness %q of a history with two acquires ok", r.LivenessReason)
		}
	})
}
