package trial

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// MinOKShare is the least share of completed acquires that must succeed in
// a run, with faults or without, for its verdicts to mean anything: every correct
// lock of the published matrix granted at least 63% of them with no fault,
// while 2,000 clients on one key for 3 s got 1 of 14,913 (0.007%): such a
// run tests the lock's refusals, not its exclusion.
const MinOKShare = 0.01

// Reasons of the verdicts Run turns to unknown (besides the checker's
// checker.ReasonNoFault, whose text this package writes).
const (
	// ReasonNoWindow: every fault step was targeted and none struck a hold
	// that stayed open long enough for another client to act.
	ReasonNoWindow = "no strike left a window"
	// ReasonNoHandover: no key was held twice, so no two holds could
	// overlap.
	ReasonNoHandover = "no key changed hands"
	// ReasonStarved: too few acquires succeeded.
	ReasonStarved = "the clients starved"
)

// runContext is what the rules need of a run besides its history.
type runContext struct {
	cfg         harness.Config
	faults      int // fault steps in the schedule
	interrupted bool
	elapsed     time.Duration
	trials      report.Trials
	health      health.Report
}

// judge applies the rules that need the run's context to res (see the
// package doc); a violation always stands.
func judge(res *checker.Result, run runContext, strikes []report.Strike) {
	explainUntested(res, run)
	noFault(res, run)
	noWindow(res, run, strikes)
	coverage(res, run)
	tooSlow(res, run)
	slowStuck(res, run)
	slowCuts(res, run)
}

// slowCuts: holds cut short with no fault to blame are no spurious loss
// when every one of them met a stretch in which the machine was too slow
// (a renewal that went out late, or came back past its bound, ends a
// healthy lock's hold as a fault would). Holds are then unknown, so the
// matrix and the gate run it again; one spurious cut in healthy time
// stands.
func slowCuts(res *checker.Result, run runContext) {
	if res.Holds != checker.Invalid || run.health.Healthy() || res.SpuriousCount > len(res.Cuts) {
		return
	}
	for _, c := range res.Cuts[:res.SpuriousCount] {
		if !run.health.Overlaps(c.Start, c.At) {
			return
		}
	}
	res.Holds = checker.Unknown
	res.HoldsReason = fmt.Sprintf("the machine was too slow: each of the %d hold(s) cut short with no fault met a stretch in which the harness's timers or its probe were late by more than %s",
		res.SpuriousCount, run.health.Threshold)
}

// slowStuck: a key the checker found stuck is not stuck if, less the
// stretches in which the machine was too slow, its time free yet
// unacquired is within the bound: the clients could not act when they
// meant to, and a grant's reply late past their timeout reads as a
// refusal of everyone else for a TTL. Liveness is then unknown, so the
// matrix and the gate run it again; a key stuck in healthy time stays
// stuck.
func slowStuck(res *checker.Result, run runContext) {
	st := res.Stuck
	if res.Liveness != checker.LivenessStuck || st == nil || run.health.Healthy() {
		return
	}
	slow := run.health.UnhealthyWithin(st.From, st.End)
	if slow == 0 || st.Quiet-slow > res.LivenessBound {
		return
	}
	res.Liveness = checker.LivenessUnknown
	res.LivenessReason = fmt.Sprintf("the machine was too slow: key %s went %s without a grant, %s of it in stretches in which the harness's timers or its probe were late by more than %s; the rest is within the bound of %s",
		st.Key, st.Quiet.Round(time.Millisecond), slow.Round(time.Millisecond), run.health.Threshold, res.LivenessBound)
}

// tooSlow: a run whose every trial met a stretch in which the machine was
// too slow (its timers fired later than one node call) tested nothing it
// can vouch for: unknown, so that the matrix and the gate run it again.
func tooSlow(res *checker.Result, run runContext) {
	t := run.trials
	if t.Count > 0 || t.Unhealthy == 0 {
		return
	}
	h := run.health
	unknown(res, fmt.Sprintf("the machine was too slow: all %d trials met a stretch in which the harness's timers fired late by up to %s (more than %s, one node call), %s of the run in all",
		t.Unhealthy, h.MaxLate.Round(time.Millisecond), h.Threshold, h.UnhealthyTime().Round(time.Millisecond)))
}

// unknown turns the valid verdicts of res into unknown, with why.
func unknown(res *checker.Result, why string) {
	if res.Lease == checker.Valid {
		res.Lease, res.LeaseReason = checker.Unknown, why
	}
	if res.Resource == checker.Valid {
		res.Resource, res.ResourceReason = checker.Unknown, why
	}
}

// explainUntested adds to the reason of a verdict about nothing what the
// checker, which reads the history alone, cannot know: the part of the
// run's configuration that made every section fail, and an interruption.
func explainUntested(res *checker.Result, run runContext) {
	cfg := run.cfg
	explain := func(reason *string, prefix, why string) {
		rest, ok := strings.CutPrefix(*reason, prefix+": ")
		if !ok {
			return
		}
		if why != "" {
			rest = why + "; " + rest
		}
		if run.interrupted {
			rest += fmt.Sprintf("; the run was interrupted after %s", run.elapsed.Round(time.Millisecond))
		}
		*reason = prefix + ": " + rest
	}
	if res.Resource == checker.Unknown {
		why := ""
		switch {
		case res.Stats.Sections == 0: // no acquire succeeded: the hold is not why
		case cfg.Extend: // the hold is worked in sections shorter than the TTL
		case cfg.Hold > cfg.TTL:
			// Each section checks its lease after the hold: a correct
			// lock never lets it write. A lock that over-reports its
			// validity is caught at once.
			why = fmt.Sprintf("the hold of %s is longer than the TTL of %s", cfg.Hold, cfg.TTL)
		case cfg.Hold == cfg.TTL:
			why = fmt.Sprintf("the hold of %s is as long as the TTL", cfg.Hold)
		}
		explain(&res.ResourceReason, checker.ReasonNoSection, why)
	}
	if res.Lease == checker.Unknown {
		explain(&res.LeaseReason, checker.ReasonNoAcquire, "")
		explain(&res.LeaseReason, checker.ReasonNoHold, "")
	}
}

// noFault turns a valid verdict of a run that was to inject faults but
// injected none (a targeted step waits for a hold it fits and may never
// find one; an interrupted run may end first) into unknown: a fault test
// without a fault says nothing of the fault.
func noFault(res *checker.Result, run runContext) {
	if run.faults == 0 || res.Stats.FaultEvents > 0 {
		return
	}
	unknown(res, fmt.Sprintf("%s: the schedule's %d step(s) of %s left no fault event in the history (schedule.json says why each missed)",
		checker.ReasonNoFault, run.faults, strings.Join(run.cfg.Nemesis, ",")))
}

// noWindow turns a valid verdict of a run all of whose fault steps were
// targeted, none with a window, into unknown: a strike at a hold its
// holder released before anyone else could be granted the key tests
// nothing, and reads as safety only by mistake.
func noWindow(res *checker.Result, run runContext, strikes []report.Strike) {
	if run.faults == 0 || len(strikes) < run.faults {
		return // no fault, or a step drawn at random: it tested something
	}
	missed, closed := 0, 0
	var first string
	for _, s := range strikes {
		switch s.Outcome {
		case report.StrikeWindow:
			return
		case report.StrikeMissed:
			missed++
		case report.StrikeNoWindow:
			closed++
		}
		if first == "" {
			first = fmt.Sprintf("step %d: %s", s.Step, s.Why)
		}
	}
	unknown(res, fmt.Sprintf("%s: of the %d targeted step(s), %d missed and %d struck a hold that ended before another client could act (%s)",
		ReasonNoWindow, len(strikes), missed, closed, first))
}

// coverage turns the valid verdicts of a run too thin to mean anything
// into unknown: one in which no key was held twice (no two holds could
// overlap), or one in which fewer than MinOKShare of the completed
// acquires succeeded, faults or none.
func coverage(res *checker.Result, run runContext) {
	st := res.Stats
	if st.AcquireOK > 0 && !handedOver(res) {
		unknown(res, fmt.Sprintf("%s: %d hold(s) of %d completed acquires, no key held twice, so no two holds could overlap; a longer run, fewer clients per key or a longer TTL tests something", ReasonNoHandover, st.Holds, st.AcquireCompleted))
		return
	}
	if st.AcquireCompleted > 0 && float64(st.AcquireOK) < MinOKShare*float64(st.AcquireCompleted) {
		// Under faults too: a faulted run in which almost nothing
		// succeeded (59 ok of 20,286 with one latency fault) tested
		// nothing, whatever kept the acquires from succeeding.
		faults := "with no fault"
		if len(run.cfg.Nemesis) > 0 {
			faults = "with faults " + strings.Join(run.cfg.Nemesis, ",")
		}
		unknown(res, fmt.Sprintf("%s: %d ok of %d completed acquires (%.3f%%, under %g%%) %s: the run tested the lock's refusals, not its exclusion; use fewer clients per key, more keys or a longer TTL",
			ReasonStarved, st.AcquireOK, st.AcquireCompleted, 100*float64(st.AcquireOK)/float64(st.AcquireCompleted), 100*MinOKShare, faults))
	}
}

// handedOver reports whether some key was held at least twice.
func handedOver(res *checker.Result) bool { return res.Stats.MaxKeyHolds >= 2 }

// steps counts the fault steps of the schedule at path.
func steps(path string) (int, error) {
	sc, err := nemesis.ReadSchedule(path)
	if err != nil {
		return 0, err
	}
	return len(sc.Steps), nil
}

// convert copies v into out through JSON (a stored configuration read as
// a map into the harness's Config).
func convert(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
