// Package health measures how well this machine keeps time while a run
// goes: how late a timer that asks to wake every Every fires and, where
// the run has one, the round trip of a probe to a server no fault touches
// (Monitor.Probe), which sees a machine that schedules this process on
// time but its servers late. A stretch later than a threshold (a share of
// the TTL) is unhealthy: the clients' calls and the faults did not happen
// when the run says, and a trial in it counts neither as safe nor as a
// miss. A run's harness measures its own (harness.Summary.Health), the
// matrix the process's, to decide how many runs to start side by side.
// It imports nothing of this module.
package health

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
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
	// Unhealthy are the stretches later than Threshold, merged when less
	// than a Threshold apart.
	Threshold time.Duration `json:"threshold_ns"`
	Unhealthy []Stretch     `json:"unhealthy,omitempty"`
	// Probe is the probe's round trips; nil when the run had none.
	Probe *ProbeReport `json:"probe,omitempty"`
}

// ProbeReport is what a probe of Target measured: its calls, the failed
// ones, and the 99th percentile and most of their round trips.
type ProbeReport struct {
	Target  string        `json:"target"`
	Samples int           `json:"samples"`
	Failed  int           `json:"failed,omitempty"`
	P99     time.Duration `json:"p99_ns"`
	Max     time.Duration `json:"max_ns"`
}

// Stretch is a time in which the machine was too slow: From and To in ns
// from the monitor's base, MaxLate the worst lateness or round trip in
// it, By what saw it ("timer", "probe" or both).
type Stretch struct {
	From    int64         `json:"from"`
	To      int64         `json:"to"`
	MaxLate time.Duration `json:"max_late_ns"`
	By      string        `json:"by,omitempty"`
}

// What saw a stretch.
const (
	ByTimer = "timer"
	ByProbe = "probe"
)

// Healthy reports whether no stretch was unhealthy.
func (r Report) Healthy() bool { return len(r.Unhealthy) == 0 }

// UnhealthyTime is the total length of the unhealthy stretches.
func (r Report) UnhealthyTime() time.Duration { return r.UnhealthyWithin(math.MinInt64, math.MaxInt64) }

// UnhealthyWithin is how much of [from, to] the unhealthy stretches
// cover.
func (r Report) UnhealthyWithin(from, to int64) time.Duration {
	var d int64
	for _, s := range r.Unhealthy {
		if lo, hi := max(s.From, from), min(s.To, to); lo < hi {
			d += hi - lo
		}
	}
	return time.Duration(d)
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
	probes           sync.WaitGroup

	mu     sync.Mutex
	lates  []time.Duration      // every firing's lateness
	recent []sample             // the last seconds' firings, for Recent
	lastRT []sample             // the last seconds' probes, for RecentProbe
	rtts   []time.Duration      // every probe's round trip
	seen   map[string][]Stretch // by what saw them, each in order; see merge
	rep    Report
}

type sample struct {
	at   time.Time
	late time.Duration
}

// keep appends x to ss, dropping the older half past n (Recent and
// RecentProbe read the last seconds).
func keep(ss []sample, x sample, n int) []sample {
	if ss = append(ss, x); len(ss) > n {
		ss = slices.Delete(ss, 0, n/2)
	}
	return ss
}

// Start starts a monitor whose timer fires every every (0: DefaultEvery);
// threshold makes a stretch unhealthy; offsets count from base.
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
	m.recent = keep(m.recent, sample{now, late}, 1000) // 10 s of firings
	m.rep.MaxLate = max(m.rep.MaxLate, late)
	m.slow(want, now, late, ByTimer)
}

// slow notes [from, to] as unhealthy if late is the threshold or more;
// m.mu is held.
func (m *Monitor) slow(from, to time.Time, late time.Duration, by string) {
	if m.threshold <= 0 || late < m.threshold {
		return
	}
	st := Stretch{From: from.Sub(m.base).Nanoseconds(), To: to.Sub(m.base).Nanoseconds(), MaxLate: late, By: by}
	if m.seen == nil {
		m.seen = map[string][]Stretch{}
	}
	m.seen[by] = mergeInto(m.seen[by], st, m.threshold)
}

// mergeInto appends st to stretches, or extends the last with it when it
// begins less than threshold after that one ended.
func mergeInto(stretches []Stretch, st Stretch, threshold time.Duration) []Stretch {
	n := len(stretches)
	if n == 0 || st.From-stretches[n-1].To >= threshold.Nanoseconds() {
		return append(stretches, st)
	}
	last := &stretches[n-1]
	last.To, last.MaxLate = max(last.To, st.To), max(last.MaxLate, st.MaxLate)
	if !strings.Contains(last.By, st.By) {
		last.By += ", " + st.By
	}
	return stretches
}

// merge returns every source's stretches by start, merged; m.mu is held.
func (m *Monitor) merge() []Stretch {
	var in []Stretch
	for _, by := range []string{ByTimer, ByProbe} {
		in = append(in, m.seen[by]...)
	}
	slices.SortStableFunc(in, func(a, b Stretch) int { return cmp.Compare(a.From, b.From) })
	var out []Stretch
	for _, st := range in {
		out = mergeInto(out, st, m.threshold)
	}
	return out
}

// ProbeEvery is how often a probe calls its target.
const ProbeEvery = 100 * time.Millisecond

// Probe calls call (a round trip to target, a server no fault touches)
// every ProbeEvery until Stop, each bounded by ten thresholds (else a
// second). A round trip of a threshold or more is an unhealthy stretch,
// and so is a failed call, counted apart: nothing touches the target, so
// a failure is the machine's (out of ports or connection-tracking slots,
// a server starved of CPU).
func (m *Monitor) Probe(target string, call func(context.Context) error) {
	m.mu.Lock()
	m.rep.Probe = &ProbeReport{Target: target}
	m.mu.Unlock()
	bound := 10 * m.threshold
	if bound <= 0 {
		bound = time.Second
	}
	m.probes.Add(1)
	go func() {
		defer m.probes.Done()
		t := time.NewTicker(ProbeEvery)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			start := time.Now()
			err := call(ctx)
			end := time.Now()
			cancel()
			m.probed(start, end, err != nil)
		}
	}()
}

// probed records one probe's round trip.
func (m *Monitor) probed(start, end time.Time, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rtt := end.Sub(start)
	m.rtts = append(m.rtts, rtt)
	m.rep.Probe.Max = max(m.rep.Probe.Max, rtt)
	if failed {
		m.rep.Probe.Failed++
		rtt = max(rtt, m.threshold, ProbeEvery)
	}
	m.lastRT = keep(m.lastRT, sample{end, rtt}, 100) // 10 s of probes
	m.slow(start, end, rtt, ByProbe)
}

// Recent is the 90th percentile of the timer's lateness over the last
// window: a load that lasts, not one late wake-up.
func (m *Monitor) Recent(window time.Duration) time.Duration {
	m.mu.Lock()
	lates := within(m.recent, window)
	m.mu.Unlock()
	if len(lates) == 0 {
		return 0
	}
	slices.Sort(lates)
	return lates[len(lates)*9/10]
}

// RecentProbe is the longest probe round trip that ended over the last
// window (a failed one counts as a threshold, at least ProbeEvery), 0 for
// none: this process's timer keeps time beside CPU hogs that make every
// node of a run late.
func (m *Monitor) RecentProbe(window time.Duration) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Max(append(within(m.lastRT, window), 0))
}

// within returns the lateness of the samples of ss over the last window,
// newest first.
func within(ss []sample, window time.Duration) []time.Duration {
	since := time.Now().Add(-window)
	var out []time.Duration
	for i := len(ss) - 1; i >= 0 && ss[i].at.After(since); i-- {
		out = append(out, ss[i].late)
	}
	return out
}

// Stop stops the monitor and returns what it measured.
func (m *Monitor) Stop() Report {
	close(m.stop)
	<-m.done
	m.probes.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rep
	r.Samples, r.P99Late = len(m.lates), p99(m.lates)
	r.Unhealthy = m.merge()
	if r.Probe != nil {
		p := *r.Probe
		p.Samples, p.P99 = len(m.rtts), p99(m.rtts)
		r.Probe = &p
	}
	return r
}

// p99 is the 99th percentile of ds, 0 for none.
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}
