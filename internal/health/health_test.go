package health

import (
	"context"
	"errors"
	"slices"
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
	r.Unhealthy = m.merge()
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
	until(t, m, "the monitor's timer fired three times", func() bool { return len(m.lates) >= 3 })
	r := m.Stop()
	if r.Samples < 3 || !r.Healthy() || r.P99Late > r.MaxLate {
		t.Fatalf("report %+v", r)
	}
}

// TestProbeStretches: a probe's round trip of a threshold or more is a
// stretch seen by the probe, merged with a timer's stretch it meets and
// sorted among the timer's though recorded after them; a probe that
// failed, however fast, is a stretch too (nothing touches its target).
func TestProbeStretches(t *testing.T) {
	base := time.Unix(0, 0)
	m := &Monitor{threshold: 100 * time.Millisecond, base: base, rep: Report{Probe: &ProbeReport{Target: "t"}}}
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	ms := int64(time.Millisecond)
	m.add(at(1000), at(1200), 200*time.Millisecond) // timer: [1000, 1200]
	m.probed(at(100), at(350), false)               // probe: [100, 350], first
	m.probed(at(500), at(510), false)               // on time
	m.probed(at(600), at(601), true)                // failed: [600, 601]
	m.probed(at(1150), at(1400), false)             // probe: [1150, 1400], merged
	got := m.merge()
	if len(got) != 3 {
		t.Fatalf("stretches %+v, want 3", got)
	}
	if s := got[1]; s.From != 600*ms || s.To != 601*ms || s.By != ByProbe || s.MaxLate != 100*time.Millisecond {
		t.Errorf("failed probe's stretch %+v, want [600 ms, 601 ms] a threshold late", s)
	}
	got = slices.Delete(got, 1, 2)
	if s := got[0]; s.From != 100*ms || s.To != 350*ms || s.By != ByProbe {
		t.Errorf("first stretch %+v, want [100 ms, 350 ms] by the probe", s)
	}
	if s := got[1]; s.From != 1000*ms || s.To != 1400*ms || s.By != ByTimer+", "+ByProbe || s.MaxLate != 250*time.Millisecond {
		t.Errorf("second stretch %+v, want [1000 ms, 1400 ms] by both, 250 ms late", s)
	}
	if m.rep.Probe.Failed != 1 || len(m.rtts) != 4 || m.rep.Probe.Max != 250*time.Millisecond {
		t.Errorf("probe %+v with %d round trips", m.rep.Probe, len(m.rtts))
	}
}

// TestProbe: a started probe whose calls never answer within its bound,
// or fail at once, makes unhealthy stretches seen by the probe, and
// RecentProbe a threshold or more; one whose calls answer at once makes
// none.
func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name         string
		threshold    time.Duration
		call         func(context.Context) error
		slow, failed bool
	}{
		{"hangs", 20 * time.Millisecond, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, true, true},
		{"fails", 20 * time.Millisecond, func(context.Context) error { return errors.New("connect: cannot assign requested address") }, true, true},
		{"answers", 10 * time.Second, func(context.Context) error { return nil }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Start(time.Hour, tc.threshold, time.Now())
			m.Probe("test", tc.call)
			until(t, m, "the probe called twice", func() bool { return len(m.rtts) >= 2 })
			if rp := m.RecentProbe(time.Minute); (rp >= tc.threshold) != tc.slow {
				t.Errorf("RecentProbe %s against a threshold of %s, want slow=%v", rp, tc.threshold, tc.slow)
			}
			r := m.Stop()
			if r.Probe == nil || r.Probe.Samples < 2 || r.Probe.Target != "test" {
				t.Fatalf("probe report %+v", r.Probe)
			}
			if slow := !r.Healthy() && r.Unhealthy[0].By == ByProbe; slow != tc.slow {
				t.Errorf("unhealthy %+v, want slow=%v", r.Unhealthy, tc.slow)
			}
			if failed := r.Probe.Failed > 0; failed != tc.failed {
				t.Errorf("failed %d, want failures=%v", r.Probe.Failed, tc.failed)
			}
		})
	}
}

// until polls cond, under m's lock, until it holds, for at most 10 s.
func until(t *testing.T, m *Monitor, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		m.mu.Lock()
		ok := cond()
		m.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
	}
}
