package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// Expectation is what the literature predicts for a matrix cell.
type Expectation string

const (
	// ExpectSafe: the lock's assumptions hold; a violation is a false
	// alarm of the harness or a real bug.
	ExpectSafe Expectation = "safe"
	// ExpectViolation: the fault breaks an assumption of the lock; no
	// violation means the harness lost its power.
	ExpectViolation Expectation = "violation"
	// ExpectPossible: unsafe under the fault, but only through a narrow
	// interleaving a short run may miss. Any verdict but unknown matches;
	// the share of runs that found one is the finding.
	ExpectPossible Expectation = "possible"
)

// Expect is what the literature predicts for a cell, one verdict per
// property as Jepsen's checkers compose: a client-pause cell of a lock
// without fencing expects its leases safe and its resource to lose
// updates.
type Expect struct {
	// Lease: two holds of one key never overlap.
	Lease Expectation `json:"lease"`
	// Resource: the protected read-modify-write never loses an update.
	Resource Expectation `json:"resource"`
	// Liveness is the verdict every run must give; "": it does not count.
	Liveness checker.Liveness `json:"liveness,omitempty"`
	// Holds is ExpectSafe when no hold may be cut short with no fault.
	Holds Expectation `json:"holds,omitempty"`
	// Answers is ExpectSafe where every reply must agree with the nodes,
	// ExpectViolation where a mutant's replies lie; "" where a fault that
	// breaks the lease may leave a contradicted reply.
	Answers Expectation `json:"answers,omitempty"`
	// Starvation and SplitVotes expect checker.Result's; "": nothing.
	Starvation Expectation `json:"starvation,omitempty"`
	SplitVotes Expectation `json:"split_votes,omitempty"`
}

// Extra is a property judged beside lease and resource, one verdict per
// run, that a cell counts only where it states an expectation of it.
type Extra struct {
	// Name names it: "holds", "answers", "starvation", "split votes".
	Name string
	// Kept says a cell promises it, Broke what a run that broke it showed.
	Kept, Broke string
	Expect      func(Expect) Expectation
	Verdict     func(CellRun) checker.Verdict
}

// Extras are the properties beside lease, resource and liveness.
var Extras = []Extra{
	{Name: "holds", Kept: "holds kept", Broke: "holds cut short with no fault",
		Expect: func(e Expect) Expectation { return e.Holds }, Verdict: func(r CellRun) checker.Verdict { return r.Holds }},
	{Name: "answers", Kept: "answers truthful", Broke: "replies the nodes contradict",
		Expect: func(e Expect) Expectation { return e.Answers }, Verdict: func(r CellRun) checker.Verdict { return r.Answers }},
	{Name: "starvation", Kept: "no client starved", Broke: "a client starved past the bound",
		Expect: func(e Expect) Expectation { return e.Starvation }, Verdict: func(r CellRun) checker.Verdict { return r.Starvation }},
	{Name: "split votes", Kept: "no split vote past the bound", Broke: "split votes past the bound",
		Expect: func(e Expect) Expectation { return e.SplitVotes }, Verdict: func(r CellRun) checker.Verdict { return r.SplitVotes }},
}

// BrokenIn reports whether run r broke x where e promises it.
func (x Extra) BrokenIn(e Expect, r CellRun) bool {
	return x.Expect(e) == ExpectSafe && x.Verdict(r) == checker.Invalid
}

// ExpectAll is the expectation e for both safety properties.
func ExpectAll(e Expectation) Expect { return Expect{Lease: e, Resource: e} }

// Overall folds the expectation into one word, the worst of lease's and resource's.
func (e Expect) Overall() Expectation {
	switch {
	case e.Lease == ExpectViolation || e.Resource == ExpectViolation:
		return ExpectViolation
	case e.Lease == ExpectPossible || e.Resource == ExpectPossible:
		return ExpectPossible
	}
	return ExpectSafe
}

// Of returns the expectation of property p ("lease" or "resource").
func (e Expect) Of(p string) Expectation {
	if p == PropertyLease {
		return e.Lease
	}
	return e.Resource
}

// The safety properties, as Expect.Of and checker.Violation name them.
const (
	PropertyLease    = "lease"
	PropertyResource = "resource"
)

// String is "safe", or "lease safe, resource violation, liveness ok".
func (e Expect) String() string {
	s := string(e.Lease)
	if e.Lease != e.Resource {
		s = fmt.Sprintf("lease %s, resource %s", e.Lease, e.Resource)
	}
	if e.Liveness != "" {
		s += ", liveness " + string(e.Liveness)
	}
	for _, x := range Extras {
		switch x.Expect(e) {
		case ExpectSafe:
			s += ", " + x.Kept
		case ExpectViolation, ExpectPossible:
			s += fmt.Sprintf(", %s %s", x.Name, x.Expect(e))
		}
	}
	return s
}

// CellRun is one run (one seed) of a cell; verdicts it predates are empty.
type CellRun struct {
	Seed  int64  `json:"seed"`
	RunID string `json:"run_id"`
	// Dir is the run directory relative to the matrix directory.
	Dir      string           `json:"dir"`
	Lease    checker.Verdict  `json:"lease"`
	Resource checker.Verdict  `json:"resource"`
	Liveness checker.Liveness `json:"liveness,omitempty"`
	// Holds, Answers, Starvation and SplitVotes are checker.Result's
	// verdicts; Spurious counts the holds cut short with no fault.
	Holds      checker.Verdict `json:"holds,omitempty"`
	Spurious   int             `json:"spurious_losses,omitempty"`
	Answers    checker.Verdict `json:"answers,omitempty"`
	Starvation checker.Verdict `json:"starvation,omitempty"`
	SplitVotes checker.Verdict `json:"split_votes,omitempty"`
	// LeaseReason and ResourceReason say why a verdict is unknown.
	LeaseReason    string `json:"lease_reason,omitempty"`
	ResourceReason string `json:"resource_reason,omitempty"`
	// Interrupted: the matrix was interrupted during this run.
	Interrupted bool `json:"interrupted,omitempty"`
	// FirstViolation is the first violation's offset in seconds.
	FirstViolation *float64 `json:"first_violation_s,omitempty"`
	// Violations counts the overlapping holds, the holds whose fencing
	// token did not increase and the keys with a lost update.
	Violations   int     `json:"violations"`
	AcqPerSec    float64 `json:"acquisitions_per_second"`
	P99Acquire   float64 `json:"p99_acquire_ms"`
	Availability float64 `json:"availability_during_faults"`
	Error        string  `json:"error,omitempty"`
	// Causes, Trials and Slow (seconds too slow) are the run's
	// Results.Causes, Trials and Health.
	Causes []CauseCount `json:"causes,omitempty"`
	Trials Trials       `json:"trials"`
	Slow   float64      `json:"slow_s,omitempty"`
	// Again counts the reruns on a machine too slow (dirs end -again1, …).
	Again int `json:"again,omitempty"`
}

// Outcome folds the run's verdicts (checker.Fold).
func (r CellRun) Outcome() checker.Outcome { return checker.Fold(r.Lease, r.Resource) }

// Undecided says why a run decided nothing.
func (r CellRun) Undecided() string {
	return cmp.Or(r.LeaseReason, r.ResourceReason, r.Error, "no verdict")
}

// OutcomeNotRun is the Outcome of a cell none of whose runs started.
const OutcomeNotRun checker.Outcome = "not run"

// Cell is one lock × fault × fencing cell; fields it predates are empty.
type Cell struct {
	Name string `json:"name"`
	Lock string `json:"lock"`
	// Language is what the lock is written in (locks.Spec.Lang).
	Language string `json:"language,omitempty"`
	// Nemesis is the cell's fault kinds, comma-separated, or "none".
	Nemesis  string `json:"nemesis"`
	Fencing  bool   `json:"fencing"`
	Topology string `json:"topology"`
	// Row is the cell's row of the literature table, Class the class of
	// lock the row is for ("quorum elapsed"; "any").
	Row   string `json:"row,omitempty"`
	Class string `json:"class,omitempty"`
	// Expect is Props.Overall().
	Expect Expectation `json:"expect"`
	// Props is the expectation by property; a cell that expects stuck
	// matches only if every run was.
	Props Expect `json:"expect_by_property"`
	// Source cites the literature; Why gives the reason in a sentence.
	Source string    `json:"source"`
	Why    string    `json:"why,omitempty"`
	Runs   []CellRun `json:"runs"`
	// Aggregates over Runs.
	RunsWithViolation    int      `json:"runs_with_violation"`
	StuckRuns            int      `json:"stuck_runs,omitempty"`
	Violations           int      `json:"violations"`
	MedianFirstViolation *float64 `json:"median_first_violation_s,omitempty"`
	// Trials sums the runs' trials, SlowTrials those too slow to count;
	// ToFirst is the trials it took to show the first violation;
	// TooSlowRuns the runs left out of the judging (matrix's aggregate).
	Trials       int     `json:"trials"`
	SlowTrials   int     `json:"slow_trials,omitempty"`
	TooSlowRuns  int     `json:"too_slow_runs,omitempty"`
	ToFirst      int     `json:"trials_to_first_violation,omitempty"`
	AcqPerSec    float64 `json:"acquisitions_per_second"`
	P99Acquire   float64 `json:"p99_acquire_ms"`
	Availability float64 `json:"availability_during_faults"`
	// Outcome: a violation in any run, else unknown in any, else safe.
	Outcome checker.Outcome `json:"outcome"`
	Matches bool            `json:"matches"`
	// Broken is the promise the release gate saw the lock break.
	Broken  string `json:"broken_promise,omitempty"`
	Unknown int    `json:"unknown_runs"`
	// Band is the expectation as a range of rates (nil: DefaultBand), Rate
	// the measured one, ContradictedBy the counts that would contradict
	// the band ("0 of 3 would"); package matrix judges.
	Band           *Band  `json:"band,omitempty"`
	Rate           *Rate  `json:"rate,omitempty"`
	ContradictedBy string `json:"contradicted_by,omitempty"`
	// LeaseRate and ResourceRate are each property's rate.
	LeaseRate    *Rate `json:"lease_rate,omitempty"`
	ResourceRate *Rate `json:"resource_rate,omitempty"`
	// Causes counts the runs each cause explained, most first.
	Causes []CauseCount `json:"causes,omitempty"`
	// NotRun lists the seeds that never started: the cell does not match.
	NotRun []int64 `json:"not_run_seeds,omitempty"`
}

// Power says what the cell's trials showed: "34 trials, a rate above
// 8.5 % excluded +2 slow, 1 run too slow to count", "violation in trial
// 3 of 12", "no trial".
func (c Cell) Power() string {
	var s string
	switch {
	case c.ToFirst > 0:
		s = fmt.Sprintf("violation in trial %d of %d", c.ToFirst, c.Trials)
	case c.Trials == 0:
		s = "no trial"
	default:
		s = fmt.Sprintf("%d trials, a rate above %s excluded", c.Trials, Percent(ExcludedRate(c.Trials)))
	}
	if c.SlowTrials > 0 {
		s += fmt.Sprintf(" +%d slow", c.SlowTrials)
	}
	if c.TooSlowRuns > 0 {
		s += fmt.Sprintf(", %s too slow to count", plural(c.TooSlowRuns, "run"))
	}
	return s
}

// Percent prints a rate as a percentage with two significant digits.
func Percent(r float64) string {
	switch p := r * 100; {
	case p >= 10:
		return fmt.Sprintf("%.0f %%", p)
	case p >= 1:
		return fmt.Sprintf("%.1f %%", p)
	default:
		return fmt.Sprintf("%.2f %%", p)
	}
}

// legacy reports whether c's summary predates per-property expectations.
func legacy(c Cell) bool { return c.Props.Lease == "" && c.Props.Resource == "" }

// PropertiesText says what the runs showed beside the expectation: "lease
// broken in 1/3 runs (promised safe), resource lost in 3/3 runs (expected)".
func (c Cell) PropertiesText() string {
	if legacy(c) {
		return fmt.Sprintf("%s: %d of %d runs found a violation", c.Outcome, c.RunsWithViolation, len(c.Runs))
	}
	return PropertiesText(c.Props, c.LeaseRate, c.ResourceRate, c.StuckRuns, c.BrokeRuns(), len(c.Runs))
}

// BrokeRuns counts the runs that broke each of Extras, by name; nil: none.
func (c Cell) BrokeRuns() map[string]int {
	var n map[string]int
	for _, r := range c.Runs {
		for _, x := range Extras {
			if x.Verdict(r) == checker.Invalid {
				if n == nil {
					n = map[string]int{}
				}
				n[x.Name]++
			}
		}
	}
	return n
}

// PropertiesText renders Cell.PropertiesText; a nil rate is "not
// measured".
func PropertiesText(e Expect, lease, resource *Rate, stuck int, broke map[string]int, runs int) string {
	// whyOf says what e expected, a promise in the words of safe.
	whyOf := func(e Expectation, safe string) string {
		return map[Expectation]string{ExpectSafe: safe, ExpectViolation: "expected", ExpectPossible: "possible"}[e]
	}
	p := func(name, bad, good string, e Expectation, r *Rate) string {
		why := cmp.Or(whyOf(e, "promised safe"), "no expectation")
		switch {
		case r == nil:
			return fmt.Sprintf("%s not measured (%s)", name, why)
		case r.Runs == 0:
			return fmt.Sprintf("%s undecided (%s)", name, why)
		case r.Violations > 0:
			return fmt.Sprintf("%s %s in %d/%d runs (%s)", name, bad, r.Violations, r.Runs, why)
		}
		return fmt.Sprintf("%s %s in %d/%d runs (%s)", name, good, r.Runs, r.Runs, why)
	}
	s := p("lease", "broken", "held", e.Lease, lease) + ", " + p("resource", "lost", "kept", e.Resource, resource)
	if e.Liveness != "" {
		s += fmt.Sprintf(", liveness stuck in %d/%d runs (expected %s)", stuck, runs, e.Liveness)
	}
	for _, x := range Extras {
		if why := whyOf(x.Expect(e), "promised kept"); why != "" {
			s += fmt.Sprintf(", %s in %d/%d runs (%s)", x.Broke, broke[x.Name], runs, why)
		}
	}
	return s
}

// CausesText is "restart without persistence (3 runs), clock jump (1 run)".
func (c Cell) CausesText() string {
	var parts []string
	for _, k := range c.Causes {
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Cause, plural(k.Count, "run")))
	}
	return strings.Join(parts, ", ")
}

// Short is the cell's outcome for the grid: "L 0/3 · R 3/3".
func (c Cell) Short() string {
	f := func(r *Rate) string {
		if r == nil {
			return "–"
		}
		return fmt.Sprintf("%d/%d", r.Violations, r.Runs)
	}
	return "L " + f(c.LeaseRate) + " · R " + f(c.ResourceRate)
}

// ViolationKind says which property the runs broke: "lease", "resource
// only" or "".
func (c Cell) ViolationKind() string {
	lease, resource := false, false
	for _, r := range c.Runs {
		lease = lease || r.Lease == checker.Invalid
		resource = resource || r.Resource == checker.Invalid
	}
	switch {
	case lease:
		return "lease"
	case resource:
		return "resource only"
	}
	return ""
}

// Incomplete reports whether a run never started or was interrupted.
func (c Cell) Incomplete() bool {
	return len(c.NotRun) > 0 || slices.ContainsFunc(c.Runs, func(r CellRun) bool { return r.Interrupted })
}

// Matrix is the outcome of a comparison matrix run.
type Matrix struct {
	Started  time.Time `json:"started"`
	Command  string    `json:"command"`
	Seeds    []int64   `json:"seeds"`
	Duration string    `json:"duration"`
	// Servers are what the nodes ran (Server), each once.
	Servers  []string          `json:"servers,omitempty"`
	Versions map[string]string `json:"versions"`
	Cells    []Cell            `json:"cells"`
	Elapsed  float64           `json:"elapsed_seconds"`
	// Interrupted: stopped before its end; Cells still lists every cell.
	Interrupted bool `json:"interrupted,omitempty"`
	// Commit is the binary's VCS stamp (or UnknownCommit, "" in older
	// summaries); Dirty: the tree had uncommitted changes.
	Commit string `json:"commit,omitempty"`
	Dirty  bool   `json:"dirty,omitempty"`
	// Machine is what the matrix ran on, and its load.
	Machine *Machine `json:"machine,omitempty"`
	// Scenarios map the literature's scenarios to their cells.
	Scenarios []Scenario `json:"scenarios,omitempty"`
	// Gate names the lock of a release gate's matrix.
	Gate string `json:"gate,omitempty"`
	// Skipped lists the fault kinds no cell took, one entry per reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Shard is set in one shard's output, whose Cells are aggregated over
	// its runs alone; nil in a whole matrix.
	Shard *ShardInfo `json:"shard,omitempty"`
}

// UnmarshalJSON reads summary.json, older ones too (legacyRedis).
func (m *Matrix) UnmarshalJSON(b []byte) error {
	type matrix Matrix // without this method
	old, err := unmarshalLegacy(b, (*matrix)(m))
	if err == nil && m.Servers == nil && old.RedisVersion != "" {
		m.Servers = []string{Server("redis", old.RedisVersion)}
	}
	return err
}

// AddServer appends server to servers unless there; another version of
// one there is ErrServerVersions.
func AddServer(servers []string, server string) ([]string, error) {
	for _, s := range servers {
		switch {
		case s == server:
			return servers, nil
		case serverName(s) == serverName(server):
			return servers, fmt.Errorf("%w: %s and %s", ErrServerVersions, s, server)
		}
	}
	return append(servers, server), nil
}

// ErrServerVersions: two versions of one server in one matrix.
var ErrServerVersions = errors.New("report: two versions of one server")

// UnknownCommit is the commit of a binary without a VCS stamp
// (-buildvcs=false, go run, go test, or a git worktree).
const UnknownCommit = "unknown"

// Skipped is a reason some fault kinds were not run, with the kinds.
type Skipped struct {
	Kinds string `json:"kinds"`
	Why   string `json:"why"`
}

// ShardInfo says which part of a matrix a shard ran, and what the merge
// checks shards against (with Matrix.Commit, Dirty, Seeds and Duration).
type ShardInfo struct {
	// Index is the shard's number, from 1 to Count.
	Index int `json:"index"`
	Count int `json:"count"`
	// Cells lists every cell of the whole matrix, Runs this shard's.
	Cells []ShardCell `json:"cells"`
	Runs  []ShardRun  `json:"runs"`
	// Expected is the seconds the shard's runs were expected to take.
	Expected float64 `json:"expected_seconds"`
}

// ShardCell is a cell of the whole matrix, as a shard records it.
type ShardCell struct {
	Name   string `json:"name"`
	Expect Expect `json:"expect"`
}

// ShardRun names one run of a matrix: a cell and a seed.
type ShardRun struct {
	Cell string `json:"cell"`
	Seed int64  `json:"seed"`
}

// NeverRan returns the cells none of whose runs started.
func (m Matrix) NeverRan() []Cell {
	return m.cells(func(c Cell) bool { return len(c.Runs) == 0 && len(c.NotRun) > 0 })
}

// Failed returns the cells whose outcome contradicts their expectation.
func (m Matrix) Failed() []Cell { return m.cells(func(c Cell) bool { return !c.Matches }) }

func (m Matrix) cells(keep func(Cell) bool) []Cell {
	var out []Cell
	for _, c := range m.Cells {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}
