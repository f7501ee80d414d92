// Package health measures how well this machine keeps time while a run
// goes: how late a timer fires that asks to wake every Every. A run's
// harness measures its own (harness.Summary.Health), the matrix measures
// the process's to decide how many runs it can start side by side. A
// stretch in which the timers fire later than a threshold (a share of
// the TTL) is unhealthy: the harness could not act when it meant to, so
// the clients' calls and the nemesis's faults did not happen when the run
// says; a trial in it counts neither as safe nor as a miss. It imports
// nothing of this module.
package health

import (
	"slices"
	"sync"
	"time"
)

// DefaultEvery is the period of the timer the monitor measures.
const DefaultEvery = 10 * time.Millisecond

// Report is what a monitor measured.
type Report struct {
	// Every is the timer's period; Samples how many times it fired.
	Every   time.Duration `json:"every_ns"`
	Samples int           `json:"samples"`
	// P99Late and MaxLate are the 99th percentile and the most a firing
	// came late.
	P99Late time.Duration `json:"p99_late_ns"`
	MaxLate time.Duration `json:"max_late_ns"`
	// Threshold is the lateness from which a stretch is unhealthy;
	// Unhealthy the stretches in which a firing came later, merged when
	// less than a Threshold apart.
	Threshold time.Duration `json:"threshold_ns"`
	Unhealthy []Stretch     `json:"unhealthy,omitempty"`
}

// Stretch is a time in which the machine was too slow: From and To are
// offsets in nanoseconds from the monitor's base (a run's history base),
// MaxLate the most a firing came late in it.
type Stretch struct {
	From    int64         `json:"from"`
	To      int64         `json:"to"`
	MaxLate time.Duration `json:"max_late_ns"`
}

// Healthy reports whether no stretch was unhealthy.
func (r Report) Healthy() bool { return len(r.Unhealthy) == 0 }

// UnhealthyTime is the total length of the unhealthy stretches.
func (r Report) UnhealthyTime() time.Duration {
	var d time.Duration
	for _, s := range r.Unhealthy {
		d += time.Duration(s.To - s.From)
	}
	return d
}

// Overlaps reports whether [from, to] meets an unhealthy stretch.
func (r Report) Overlaps(from, to int64) bool {
	for _, s := range r.Unhealthy {
		if s.From <= to && from <= s.To {
			return true
		}
	}
	return false
}

// Monitor measures a timer's lateness until Stop.
type Monitor struct {
	every, threshold time.Duration
	base             time.Time
	stop             chan struct{}
	done             chan struct{}

	mu     sync.Mutex
	lates  []time.Duration // every firing's lateness
	recent []sample        // the last seconds' firings, for Recent
	rep    Report
}

type sample struct {
	at   time.Time
	late time.Duration
}

// Start starts a monitor whose timer asks to fire every every (0:
// DefaultEvery); threshold is the lateness from which a stretch is
// unhealthy; base is the time the stretches' offsets count from.
func Start(every, threshold time.Duration, base time.Time) *Monitor {
	if every <= 0 {
		every = DefaultEvery
	}
	m := &Monitor{every: every, threshold: threshold, base: base, stop: make(chan struct{}), done: make(chan struct{})}
	m.rep = Report{Every: every, Threshold: threshold}
	go m.loop()
	return m
}

func (m *Monitor) loop() {
	defer close(m.done)
	t := time.NewTimer(m.every)
	defer t.Stop()
	want := time.Now().Add(m.every)
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			late := max(now.Sub(want), 0)
			m.add(want, now, late)
			want = now.Add(m.every)
			t.Reset(m.every)
		}
	}
}

func (m *Monitor) add(want, now time.Time, late time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lates = append(m.lates, late)
	m.recent = append(m.recent, sample{now, late})
	if len(m.recent) > 1000 {
		m.recent = slices.Delete(m.recent, 0, 500)
	}
	m.rep.MaxLate = max(m.rep.MaxLate, late)
	if m.threshold <= 0 || late < m.threshold {
		return
	}
	from, to := want.Sub(m.base).Nanoseconds(), now.Sub(m.base).Nanoseconds()
	if n := len(m.rep.Unhealthy); n > 0 && from-m.rep.Unhealthy[n-1].To < m.threshold.Nanoseconds() {
		s := &m.rep.Unhealthy[n-1]
		s.To, s.MaxLate = max(s.To, to), max(s.MaxLate, late)
		return
	}
	m.rep.Unhealthy = append(m.rep.Unhealthy, Stretch{From: from, To: to, MaxLate: late})
}

// Recent is how late the timer fired over the last window, at the 90th
// percentile: a load that lasts, not one late wake-up.
func (m *Monitor) Recent(window time.Duration) time.Duration {
	m.mu.Lock()
	since := time.Now().Add(-window)
	var lates []time.Duration
	for i := len(m.recent) - 1; i >= 0 && m.recent[i].at.After(since); i-- {
		lates = append(lates, m.recent[i].late)
	}
	m.mu.Unlock()
	if len(lates) == 0 {
		return 0
	}
	slices.Sort(lates)
	return lates[len(lates)*9/10]
}

// Stop stops the monitor and returns what it measured.
func (m *Monitor) Stop() Report {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rep
	r.Samples = len(m.lates)
	if len(m.lates) > 0 {
		s := slices.Clone(m.lates)
		slices.Sort(s)
		r.P99Late = s[(len(s)*99)/100]
	}
	r.Unhealthy = slices.Clone(r.Unhealthy)
	return r
}
