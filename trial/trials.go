package trial

import (
	"math"
	"slices"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/report"
)

// Trials counts the trials of the promises a run made: the times the run
// put a lock to the test, each of which could have shown a violation.
//   - A targeted strike that left a window (Strikes) is one.
//   - A random fault step is one for every key that, while the step was
//     active or a TTL after it healed (what it did lasts until the keys
//     it touched expire), was held while another client got an answer
//     (granted or refused) to an acquire of it: a step during which
//     nobody contended tested nothing. Each key is a lock of its own, set
//     and expired apart from the others, as Jepsen's independent keys
//     are, so a step that struck two contended keys tested the promise
//     twice; a strike aims at one hold, so it stays one.
//   - A run without faults tests every handover: a hold during which
//     another client got an answer to an acquire of its key is one.
//
// A trial that meets a stretch in which the machine was too slow (h's
// unhealthy stretches) counts neither as safe nor as a miss: it is
// counted apart (report.Trials.Unhealthy), unless it showed the first
// violation, which always stands. ToFirst is the number of the
// trial (1, 2, …) in which the run's first violation showed, the trials
// before it counted, or 0 when there was none; a violation outside every
// trial counts as one more trial, after the last.
func Trials(a *checker.Analysis, strikes []report.Strike, ttl time.Duration, h health.Report) report.Trials {
	var wins [][2]int64
	kind := report.TrialHandover
	switch {
	case len(strikes) > 0:
		kind = report.TrialStrike
		for _, s := range strikes {
			if s.Outcome != report.StrikeWindow {
				continue
			}
			from := int64(s.At * float64(time.Second))
			to := from + max(int64(s.Window*float64(time.Second)), int64(MinWindow(ttl)))
			wins = append(wins, [2]int64{from, to})
		}
	case len(a.Result.Stats.FaultWindows) > 0:
		kind = report.TrialStep
		for _, w := range a.Result.Stats.FaultWindows {
			// What a fault did lasts until the keys it touched expire:
			// a grant whose reply it lost holds its key a TTL more.
			end := w.End + int64(ttl)
			for range contendedKeys(a, w.Start, end) {
				wins = append(wins, [2]int64{w.Start, end})
			}
		}
	default:
		for key, holds := range a.Holds() {
			attempts := a.Attempts(key)
			for _, hd := range holds {
				if contended(attempts, hd.Process, hd.Start, hd.End) {
					wins = append(wins, [2]int64{hd.Start, hd.End})
				}
			}
		}
	}
	slices.SortFunc(wins, func(x, y [2]int64) int { return int(min(max(x[0]-y[0], -1), 1)) })
	t := report.Trials{Kind: kind}
	first := firstViolation(a)
	for _, w := range wins {
		// The trial that showed the first violation counts, slow or not:
		// a violation always stands.
		shows := first >= 0 && t.ToFirst == 0 && first <= w[1]
		if h.Overlaps(w[0], w[1]) && !shows {
			t.Unhealthy++
			continue
		}
		t.Count++
		if shows {
			t.ToFirst = t.Count
		}
	}
	if first >= 0 && t.ToFirst == 0 {
		// A violation after every trial shows a test of its own.
		t.Count++
		t.ToFirst = t.Count
	}
	return t
}

// contendedKeys returns the keys that, at some time in [from, to], were
// held by one client while another got an answer to an acquire of them.
func contendedKeys(a *checker.Analysis, from, to int64) []string {
	var keys []string
	for key, holds := range a.Holds() {
		attempts := a.Attempts(key)
		for _, hd := range holds {
			lo, hi := max(hd.Start, from), min(hd.End, to)
			if lo <= hi && contended(attempts, hd.Process, lo, hi) {
				keys = append(keys, key)
				break
			}
		}
	}
	return keys
}

// firstViolation is the time of the run's first violation of either
// property, -1 for none.
func firstViolation(a *checker.Analysis) int64 {
	first := int64(math.MaxInt64)
	for _, t := range []*int64{a.Result.FirstLeaseViolation, a.Result.FirstResourceViolation} {
		if t != nil {
			first = min(first, *t)
		}
	}
	if first == math.MaxInt64 {
		return -1
	}
	return first
}
