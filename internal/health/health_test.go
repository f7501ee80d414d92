package health

import (
	"testing"
	"time"
)

// TestStretches: a firing later than the threshold opens an unhealthy
// stretch from when it was due to when it fired; one due within a
// threshold of the last stretch extends it; a firing on time opens none.
func TestStretches(t *testing.T) {
	base := time.Unix(0, 0)
	m := &Monitor{threshold: 100 * time.Millisecond, base: base}
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	m.add(at(10), at(11), time.Millisecond)         // on time
	m.add(at(20), at(220), 200*time.Millisecond)    // late: [20, 220]
	m.add(at(230), at(400), 170*time.Millisecond)   // due 10 ms after: extends to 400
	m.add(at(1000), at(1001), time.Millisecond)     // on time
	m.add(at(2000), at(2150), 150*time.Millisecond) // a second stretch
	r := m.rep
	if len(r.Unhealthy) != 2 {
		t.Fatalf("stretches %+v, want 2", r.Unhealthy)
	}
	ms := int64(time.Millisecond)
	if s := r.Unhealthy[0]; s.From != 20*ms || s.To != 400*ms || s.MaxLate != 200*time.Millisecond {
		t.Errorf("first stretch %+v, want [20 ms, 400 ms] at most 200 ms late", s)
	}
	if !r.Overlaps(300*ms, 310*ms) || r.Overlaps(500*ms, 1900*ms) || !r.Overlaps(1900*ms, 2010*ms) {
		t.Errorf("Overlaps wrong for %+v", r.Unhealthy)
	}
	if got := r.UnhealthyTime(); got != 530*time.Millisecond {
		t.Errorf("unhealthy time %s, want 530ms", got)
	}
	if r.MaxLate != 200*time.Millisecond || r.Healthy() {
		t.Errorf("report %+v", r)
	}
}

// TestMonitor: a started monitor fires until stopped and reports its
// samples; with no threshold nothing is ever unhealthy.
func TestMonitor(t *testing.T) {
	m := Start(time.Millisecond, 0, time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		n := len(m.lates)
		m.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the monitor's timer never fired three times")
		}
		time.Sleep(time.Millisecond)
	}
	r := m.Stop()
	if r.Samples < 3 || !r.Healthy() || r.P99Late > r.MaxLate {
		t.Fatalf("report %+v", r)
	}
}
