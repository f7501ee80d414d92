package matrix

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// aggregate fills the cell's figures from its runs and decides whether
// the outcome matches the expectation. It is the one place a cell is
// judged, for a whole matrix and for one merged from shards (Merge
// calls it on cells copied from the shards' summaries): it sets every
// aggregate anew from Runs and NotRun, whatever the cell held before.
func aggregate(c *report.Cell) {
	all := c.Runs
	c.Runs, c.TooSlowRuns = counted(c)
	countRuns(c)
	measureRuns(c)
	c.Outcome = cellOutcome(c)
	c.Causes = cellCauses(c.Runs)
	judge(c)
	c.Runs = all
}

// counted is the runs the cell is judged on, and how many it leaves out:
// a run the machine was too slow for on its every try (tooSlow still on
// the last of Again, with a slow stretch measured) counts neither way, as
// its slow trials do, when it broke nothing and another run of the cell
// decided. With no run decided every run counts, and the cell stays
// undecided: a machine too slow throughout is never a pass.
func counted(c *report.Cell) ([]report.CellRun, int) {
	keep := slices.DeleteFunc(slices.Clone(c.Runs), func(r report.CellRun) bool {
		stuck := c.Props.Liveness == checker.LivenessOK && r.Liveness == checker.LivenessStuck
		return r.Again >= Again && r.Slow > 0 && !r.Interrupted && tooSlow(c.Props, r) && !brokePromise(c.Props, r) && !stuck
	})
	decided := func(r report.CellRun) bool {
		return r.Outcome() == checker.OutcomeViolation || !undecided(c.Props, r)
	}
	if len(keep) == len(c.Runs) || !slices.ContainsFunc(keep, decided) {
		return c.Runs, 0
	}
	return keep, len(c.Runs) - len(keep)
}

// countRuns counts the cell's runs anew: those that count as a violation
// (of a property, a stuck lock where the cell expects it live, a broken
// promise beside), those undecided, those stuck, their trials (and how
// many the first violation took) and their violations.
func countRuns(c *report.Cell) {
	c.RunsWithViolation, c.Violations, c.Unknown, c.StuckRuns = 0, 0, 0, 0
	c.Trials, c.SlowTrials, c.ToFirst = 0, 0, 0
	for _, r := range c.Runs {
		if c.ToFirst == 0 && r.Trials.ToFirst > 0 && r.Outcome() == checker.OutcomeViolation {
			c.ToFirst = c.Trials + r.Trials.ToFirst
		}
		c.Trials += r.Trials.Count
		c.SlowTrials += r.Trials.Unhealthy
		if r.Liveness == checker.LivenessStuck {
			c.StuckRuns++
		}
		switch o := r.Outcome(); {
		case o == checker.OutcomeViolation:
			c.RunsWithViolation++
		case c.Props.Liveness == checker.LivenessOK && r.Liveness == checker.LivenessStuck:
			// Stuck counts like invalid only where the cell expects
			// the lock to stay live.
			c.RunsWithViolation++
		case brokePromise(c.Props, r):
			// A hold cut short with no fault, a reply the nodes
			// contradict, … count only where the cell promises them.
			c.RunsWithViolation++
		case o == checker.OutcomeUnknown && undecided(c.Props, r):
			c.Unknown++
		}
		c.Violations += r.Violations
	}
}

// measureRuns sets the cell's figures anew from its runs: the mean
// acquisitions a second, the worst p99 acquire latency, the mean
// availability during faults (-1 when no run measured one) and the
// median time to the first violation (nil when no run saw one).
func measureRuns(c *report.Cell) {
	var firsts []float64
	measured := 0
	c.AcqPerSec, c.P99Acquire, c.Availability = 0, 0, 0
	for _, r := range c.Runs {
		if r.FirstViolation != nil {
			firsts = append(firsts, *r.FirstViolation)
		}
		c.AcqPerSec += r.AcqPerSec
		c.P99Acquire = max(c.P99Acquire, r.P99Acquire)
		if r.Availability >= 0 { // -1: no fault, not measured
			c.Availability += r.Availability
			measured++
		}
	}
	if len(c.Runs) > 0 {
		c.AcqPerSec /= float64(len(c.Runs))
	}
	if measured > 0 {
		c.Availability /= float64(measured)
	} else {
		c.Availability = -1
	}
	c.MedianFirstViolation = nil
	if len(firsts) > 0 {
		slices.Sort(firsts)
		med := firsts[len(firsts)/2]
		if len(firsts)%2 == 0 {
			med = (firsts[len(firsts)/2-1] + firsts[len(firsts)/2]) / 2
		}
		c.MedianFirstViolation = &med
	}
}

// cellOutcome is the cell's outcome from its counted runs (countRuns): a
// violation when a run counts as one, else unknown when a run was
// undecided or none ran, else safe; not run when none ran and some seed
// never did.
func cellOutcome(c *report.Cell) checker.Outcome {
	switch {
	case c.RunsWithViolation > 0:
		return checker.OutcomeViolation
	case len(c.Runs) == 0 && len(c.NotRun) > 0:
		return report.OutcomeNotRun
	case c.Unknown > 0 || len(c.Runs) == 0:
		return checker.OutcomeUnknown
	}
	return checker.OutcomeSafe
}

// judge sets the cell's rates and decides whether it matches its
// expectation. Each property is judged on its own (the expectation of
// summaries written before per-property expectations is their one word):
// the rate of its violations over the runs that decided it, against the
// band when it is expected violated, against none when expected safe
// (report.Band.Contradicts: its 95% interval wholly outside, or an
// expected violation never seen). A property with no violation and some
// run undecided matches nothing: unknown is never a pass; nor does a cell
// that one of its runs spoils (spoiled).
func judge(c *report.Cell) {
	n := len(c.Runs)
	legacy := c.Props.Lease == "" && c.Props.Resource == ""
	if legacy {
		c.Props.Lease, c.Props.Resource = c.Expect, c.Expect
	}
	c.Expect = c.Props.Overall()
	band := report.DefaultBand(c.Expect)
	if c.Band != nil {
		band = *c.Band
	}
	c.Band = &band
	decided := n - c.Unknown
	c.Rate = new(report.NewRate(c.RunsWithViolation, decided))
	c.ContradictedBy = band.ContradictingText(n)
	lease := tally(c.Runs, func(r report.CellRun) checker.Verdict { return r.Lease })
	resource := tally(c.Runs, func(r report.CellRun) checker.Verdict { return r.Resource })
	c.LeaseRate, c.ResourceRate = new(lease.rate()), new(resource.rate())
	c.Matches = decided > 0 && c.Outcome != checker.OutcomeUnknown && lease.matches(c.Props.Lease, band) && resource.matches(c.Props.Resource, band)
	if legacy {
		// A summary written before per-property expectations is judged as
		// it was: its one word against the rate of runs with any
		// violation.
		c.Matches = decided > 0 && c.Outcome != checker.OutcomeUnknown && !band.Contradicts(c.RunsWithViolation, decided)
		c.Props.Lease, c.Props.Resource = "", ""
	}
	c.Matches = c.Matches && !spoiled(c)
}

// spoiled reports whether the cell matches nothing, whatever its rates:
// it expects its lock live and a run was stuck (counted by countRuns as
// a violation), or expects it stuck and a run was not; it promises a
// property beside (report.Extras) and a run broke it, or expects one
// violated and no run did; or it was not run to its end (a run
// interrupted, a seed never run), whatever its runs so far found.
func spoiled(c *report.Cell) bool {
	switch {
	case c.Props.Liveness == checker.LivenessOK && c.StuckRuns > 0,
		c.Props.Liveness == checker.LivenessStuck && c.StuckRuns < len(c.Runs),
		len(c.NotRun) > 0:
		return true
	}
	broke := c.BrokeRuns()
	for _, x := range report.Extras {
		switch e := x.Expect(c.Props); {
		case e == report.ExpectSafe && broke[x.Name] > 0, e == report.ExpectViolation && broke[x.Name] == 0:
			return true
		}
	}
	return slices.ContainsFunc(c.Runs, func(r report.CellRun) bool { return r.Interrupted })
}

// brokePromise reports whether run r broke one of report.Extras that e
// promises.
func brokePromise(e report.Expect, r report.CellRun) bool {
	return slices.ContainsFunc(report.Extras, func(x report.Extra) bool { return x.BrokenIn(e, r) })
}

// undecided reports whether run r, with no violation, left a property
// unknown that the cell's expectation e counts: a property the cell
// expects only possibly violated decides nothing either way (the resource
// of a cell whose holds outlast the TTL, where no section can write).
func undecided(e report.Expect, r report.CellRun) bool {
	unknown := func(v checker.Verdict) bool { return v != checker.Valid && v != checker.Invalid }
	if e.Lease == "" && e.Resource == "" {
		return true // a summary written before per-property expectations
	}
	if unknown(r.Lease) && unknown(r.Resource) {
		return true // nothing decided at all
	}
	return unknown(r.Lease) && e.Lease != report.ExpectPossible || unknown(r.Resource) && e.Resource != report.ExpectPossible
}

// counts is one property's verdicts over a cell's runs.
type counts struct{ violated, decided, unknown int }

// tally counts the verdicts of one property (v picks it) over runs.
func tally(runs []report.CellRun, v func(report.CellRun) checker.Verdict) counts {
	var c counts
	for _, r := range runs {
		switch v(r) {
		case checker.Invalid:
			c.violated++
			c.decided++
		case checker.Valid:
			c.decided++
		default:
			c.unknown++
		}
	}
	return c
}

func (c counts) rate() report.Rate { return report.NewRate(c.violated, c.decided) }

// matches judges the property's counts against its expectation e: a
// possible violation matches whatever was seen; otherwise some run must
// have decided it, an undecided run with no violation seen matches
// nothing, and the rate must not contradict band (expected violated) or
// safety (expected safe: no violation at all).
func (c counts) matches(e report.Expectation, band report.Band) bool {
	switch {
	case e == report.ExpectPossible:
		return true
	case c.decided == 0, c.violated == 0 && c.unknown > 0:
		return false
	case e == report.ExpectSafe:
		return c.violated == 0
	}
	return !band.Contradicts(c.violated, c.decided)
}

// cellCauses counts, per cause, the runs whose violations it explains,
// most runs first (ties in the order first seen).
func cellCauses(runs []report.CellRun) []report.CauseCount {
	var out []report.CauseCount
	for _, r := range runs {
		for _, k := range r.Causes {
			i := slices.IndexFunc(out, func(c report.CauseCount) bool { return c.Cause == k.Cause })
			if i < 0 {
				out = append(out, report.CauseCount{Cause: k.Cause})
				i = len(out) - 1
			}
			out[i].Count++
		}
	}
	slices.SortStableFunc(out, func(x, y report.CauseCount) int { return y.Count - x.Count })
	return out
}

// cell is the matrix cell of sp, without runs.
func (sp Spec) cell() report.Cell {
	topology := sp.Config.Topology
	if topology == "" {
		topology = cluster.TopologyMasters
	}
	return report.Cell{Name: sp.Name, Lock: sp.Lock(), Language: language(sp.Lock()), Nemesis: nemesisName(sp.Kinds()), Fencing: sp.Config.Fencing,
		Topology: topology, Row: sp.Row, Class: sp.Class, Expect: sp.Expect.Overall(), Props: sp.Expect, Source: sp.Source, Why: sp.Why, Band: new(sp.Band)}
}

// language is what the lock called name is written in, "" for a name
// the registry does not know (Validate refuses it before any run).
func language(name string) string {
	s, err := locks.Lookup(name)
	if err != nil {
		return ""
	}
	return s.Lang()
}

func nemesisName(f []string) string {
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, ",")
}

// cellRun is the cell's record of its run of seed: the seed as the plan
// gave it, not as the results hold it (a run that failed to start has
// none, and was called seed 0).
func cellRun(seed int64, r report.Results, id string, err error) report.CellRun {
	cr := report.CellRun{Seed: seed, RunID: id, Dir: filepath.Join("runs", id), Lease: r.Lease, Resource: r.Resource, Liveness: r.Check.Liveness,
		Holds: r.Check.Holds, Spurious: r.Check.SpuriousCount, Answers: r.Check.Answers, Starvation: r.Check.Starvation, SplitVotes: r.Check.SplitVotes,
		LeaseReason: r.Check.LeaseReason, ResourceReason: r.Check.ResourceReason, Interrupted: r.Interrupted}
	if err != nil {
		cr.Error = err.Error()
		if cr.Lease == "" {
			cr.Lease, cr.Resource = checker.Unknown, checker.Unknown
		}
	}
	c := r.Check
	// The first violation of either kind: a lost update is all a
	// client-pause cell shows.
	for _, t := range []*int64{c.FirstLeaseViolation, c.FirstResourceViolation} {
		if t != nil {
			if s := time.Duration(*t).Seconds(); cr.FirstViolation == nil || s < *cr.FirstViolation {
				cr.FirstViolation = &s
			}
		}
	}
	cr.Violations = c.LeaseViolationCount + c.FenceViolationCount + len(c.ResourceFailedKeys)
	cr.Causes = r.Causes
	cr.Trials, cr.Slow = r.Trials, r.Health.UnhealthyTime().Seconds()
	cr.AcqPerSec = c.Stats.AcquisitionsPerSecond
	cr.P99Acquire = float64(c.Stats.AcquireLatency.P99) / float64(time.Millisecond)
	cr.Availability = c.Stats.AvailabilityDuringFaults
	return cr
}
