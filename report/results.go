package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/internal/health"
	"github.com/locktorture/locktorture/internal/safefs"
)

// Results is the content of results.json.
type Results struct {
	RunID string `json:"run_id"`
	// Started is the wall-clock start; figures use the history's base.
	Started time.Time `json:"started"`
	Command string    `json:"command,omitempty"`
	// Config is the run's whole configuration; Seed repeats its seed.
	Config any   `json:"config"`
	Seed   int64 `json:"seed"`
	// Server is the first node's server and version (Server),
	// NodeVersions each node's, which may differ on the external backend.
	Server       string   `json:"server,omitempty"`
	NodeVersions []string `json:"node_versions,omitempty"`
	// Versions of the tool and of the modules that matter to a verdict.
	Versions map[string]string `json:"versions"`
	// Elapsed is the wall time the clients ran, in seconds.
	Elapsed     float64 `json:"elapsed_seconds"`
	Interrupted bool    `json:"interrupted,omitempty"`
	// Stopped: ended at its first violation, as a run expecting one may.
	Stopped bool `json:"stopped_at_violation,omitempty"`
	// Strikes and Trials are what package trial saw; Health how late the
	// harness's timers fired.
	Strikes []Strike      `json:"strikes,omitempty"`
	Trials  Trials        `json:"trials"`
	Health  health.Report `json:"health"`
	// Findings are the violations by fault step and cause (package
	// explain); Causes counts them by cause, most frequent first.
	Findings []explain.Finding `json:"findings,omitempty"`
	// Contradictions are the lock's replies the nodes' observations
	// contradict (checker.Analysis.Contradictions).
	Contradictions []checker.Contradiction `json:"contradictions,omitempty"`
	Causes         []CauseCount            `json:"causes,omitempty"`
	// Lease and Resource are the verdicts; Check is all the checker found.
	Lease    checker.Verdict `json:"lease"`
	Resource checker.Verdict `json:"resource"`
	Check    checker.Result  `json:"check"`
}

// Trials counts the times a run could have shown a violation (trial.Trials).
type Trials struct {
	// Kind is TrialStrike, TrialStep or TrialHandover.
	Kind string `json:"kind"`
	// Count is the trials that count; Unhealthy those that met a stretch
	// in which the machine was too slow, counted neither way.
	Count     int `json:"count"`
	Unhealthy int `json:"unhealthy,omitempty"`
	// ToFirst is the trial (1, 2, …) that showed the first violation.
	ToFirst int `json:"to_first_violation,omitempty"`
}

// Text says what the trials showed: "12 fault steps: a per-trial
// violation rate above 22 % excluded at 95 %", "violation in trial 3 of 12".
func (t Trials) Text() string {
	what := pick(t.Count == 1, t.Kind, t.Kind+"s")
	s := fmt.Sprintf("%d %s", t.Count, what)
	switch {
	case t.ToFirst > 0:
		s = fmt.Sprintf("violation in trial %d of %d (%s)", t.ToFirst, t.Count, what)
	case t.Count == 0:
		s = "no trial: nothing put the lock to the test"
	default:
		s += fmt.Sprintf(": a per-trial violation rate above %s excluded at 95 %%", Percent(ExcludedRate(t.Count)))
	}
	if t.Unhealthy > 0 {
		s += fmt.Sprintf("; %d more met a stretch in which the machine was too slow (counted neither way)", t.Unhealthy)
	}
	return s
}

// HealthText says how well the machine kept time: timer lateness, the
// probe's round trips to a node no fault touched, the slow stretches.
func HealthText(h health.Report) string {
	if h.Samples == 0 {
		return "not measured"
	}
	ms := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	s := fmt.Sprintf("timers late by %s at p99, %s at most", ms(h.P99Late), ms(h.MaxLate))
	if p := h.Probe; p != nil {
		s += fmt.Sprintf("; %d probes (%s) answered in %s at p99, %s at most", p.Samples, p.Target, ms(p.P99), ms(p.Max))
		if p.Failed > 0 {
			s += fmt.Sprintf(" (%d failed)", p.Failed)
		}
	}
	if h.Healthy() {
		return s + fmt.Sprintf(" (never %s, one node call)", h.Threshold)
	}
	s += fmt.Sprintf("; too slow (late by %s or more) in %d stretches, %s in all:", h.Threshold, len(h.Unhealthy), h.UnhealthyTime().Round(time.Millisecond))
	for i, st := range h.Unhealthy {
		if i == 5 {
			s += fmt.Sprintf(" and %d more", len(h.Unhealthy)-5)
			break
		}
		s += fmt.Sprintf(" %.3f–%.3f s", time.Duration(st.From).Seconds(), time.Duration(st.To).Seconds())
		if st.By != "" {
			s += " (" + st.By + ")"
		}
	}
	return s
}

// The kinds of a trial: a targeted strike that left a window, a random
// fault step with a key held and contended during it, and in a run
// without faults a contended hold.
const (
	TrialStrike   = "strike"
	TrialStep     = "fault step"
	TrialHandover = "handover"
)

// Confidence is the confidence of ExcludedRate.
const Confidence = 0.95

// ExcludedRate is the per-trial violation rate n clean trials exclude:
// for every p above it, 1-(1-p)^n ≥ Confidence (about 3/n). 1 for n = 0.
func ExcludedRate(n int) float64 {
	if n <= 0 {
		return 1
	}
	return 1 - math.Pow(1-Confidence, 1/float64(n))
}

// TrialsFor is the least n with ExcludedRate(n) ≤ rate; 0 outside (0, 1).
func TrialsFor(rate float64) int {
	if !(rate > 0 && rate < 1) {
		return 0
	}
	return int(math.Ceil(math.Log(1-Confidence) / math.Log(1-rate)))
}

// CauseCount is how many of a run's (or cell's) violations a cause explains.
type CauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// Strike is what a targeted step did: a test only if it left a window,
// time in which another client could act while the struck hold lasted.
type Strike struct {
	// Step is the step's index in schedule.json, Kind and Desc as there.
	Step    int    `json:"step"`
	Kind    string `json:"kind"`
	Desc    string `json:"desc"`
	Outcome string `json:"outcome"`
	// Why says why a strike missed or left no window.
	Why string `json:"why,omitempty"`
	// At is when it struck and Window how long the hold stayed open
	// after, in seconds.
	At     float64 `json:"at_s,omitempty"`
	Window float64 `json:"window_s,omitempty"`
}

// The outcomes of a Strike: it left a window; it struck, but the holder
// released before another client could act (nothing was tested); no hold
// fit within the step's window.
const (
	StrikeWindow   = "window"
	StrikeNoWindow = "no window"
	StrikeMissed   = "missed"
)

// Versions reports the versions of Go and of the modules verdicts depend on.
func Versions() map[string]string {
	v := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["go"] = bi.GoVersion
	for _, m := range bi.Deps {
		if slices.ContainsFunc(versionedModules, func(p string) bool { return strings.HasPrefix(m.Path, p) }) {
			v[m.Path] = ModuleVersion(m)
		}
	}
	return v
}

var versionedModules = []string{"github.com/redis/go-redis", "github.com/anishathalye/porcupine", "github.com/Shopify/toxiproxy",
	"github.com/go-redsync/redsync", "github.com/bsm/redislock", "github.com/redis/rueidis"}

// ModuleVersion is the version of m the binary was built with: its
// replacement's when go.mod pinned it (as bugs/ does).
func ModuleVersion(m *debug.Module) string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	return m.Version
}

// WriteResults writes r as dir/results.json (safefs.WriteFile).
func WriteResults(dir string, r Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := safefs.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Server joins a server's name and version, if known: "redis 7.0.15".
func Server(name, version string) string {
	return strings.TrimSpace(name + " " + version)
}

func serverName(s string) string {
	name, _, _ := strings.Cut(s, " ")
	return name
}

// legacyRedis is what files held before Results.Server and
// Matrix.Servers: versions named for Redis, the only server then.
type legacyRedis struct {
	RedisVersion  string   `json:"redis_version"`
	RedisVersions []string `json:"redis_versions"`
}

// UnmarshalJSON reads results.json, older ones too (legacyRedis).
func (r *Results) UnmarshalJSON(b []byte) error {
	type results Results // without this method
	old, err := unmarshalLegacy(b, (*results)(r))
	if err != nil {
		return err
	}
	if r.Server == "" && old.RedisVersion != "" {
		r.Server = Server("redis", old.RedisVersion)
	}
	if r.NodeVersions == nil {
		r.NodeVersions = old.RedisVersions
	}
	return nil
}

// unmarshalLegacy decodes b into *v, zeroed first (v's type without its
// UnmarshalJSON), and returns what an older file held instead.
func unmarshalLegacy[T any](b []byte, v *T) (old legacyRedis, err error) {
	*v = *new(T)
	if err = json.Unmarshal(b, v); err == nil {
		err = json.Unmarshal(b, &old)
	}
	return old, err
}

// ReadResults reads dir/results.json (see readJSON).
func ReadResults(dir string) (Results, error) { return readJSON[Results](dir, "results.json") }

// readJSON reads dir/name into a T. The folder may come from someone
// else: a link or anything but a regular file is refused.
func readJSON[T any](dir, name string) (T, error) {
	var v T
	path := filepath.Join(dir, name)
	b, err := safefs.ReadFile(path)
	if err != nil {
		return v, fmt.Errorf("report: %w", err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("report: %s: %w", path, err)
	}
	return v, nil
}

// Printable returns s unchanged when every character is printable, else
// strconv.Quote(s). Texts from a history, which anyone may have written,
// could hold escape sequences that act on the reader's terminal, or a
// carriage return or bidirectional override that makes a line lie.
func Printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Summary writes the one-screen text summary of a checked run, times and
// tokens as explain prints them, every text from the history Printable.
func Summary(w io.Writer, title string, res checker.Result, fs []explain.Finding) {
	fmt.Fprintf(w, "%s\n", Printable(title))
	fmt.Fprintf(w, "  lease safety:    %s\n", verdictLine(res.Lease, res.LeaseReason))
	fmt.Fprintf(w, "  resource safety: %s\n", verdictLine(res.Resource, res.ResourceReason))
	if res.Liveness != "" {
		fmt.Fprintf(w, "  liveness:        %s\n", verdictLine(checker.Verdict(res.Liveness), res.LivenessReason))
	}
	// Holds and answers only when broken: kept holds and truthful
	// replies are the rule.
	if res.Holds == checker.Invalid {
		fmt.Fprintf(w, "  holds kept:      %s\n", verdictLine(res.Holds, res.HoldsReason))
	}
	if res.Answers == checker.Invalid {
		fmt.Fprintf(w, "  answers:         %s\n", verdictLine(res.Answers, res.AnswersReason))
	}
	// Starvation and split votes: the figure beside its bound wherever
	// they were judged.
	if v := res.Starvation; v == checker.Invalid || v == checker.Valid && res.Stats.LongestWait != nil {
		why := res.StarvationReason
		if v == checker.Valid {
			why = fmt.Sprintf("the longest wait, %s under no fault, within the bound of %s", res.Stats.LongestWait.Quiet.Round(time.Millisecond), res.StarvationBound.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "  starvation:      %s\n", verdictLine(v, why))
	}
	if v := res.SplitVotes; v == checker.Invalid || v == checker.Valid && res.SplitVote != nil {
		why := res.SplitVotesReason
		if v == checker.Valid {
			why = fmt.Sprintf("the longest split vote, %s under no fault, within the bound of %s", res.SplitVote.Quiet.Round(time.Millisecond), res.SplitVoteBound.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "  split votes:     %s\n", verdictLine(v, why))
	}
	if res.Disagreement != "" {
		fmt.Fprintf(w, "  CHECKER BUG: porcupine and the sweep disagree: %s\n", Printable(res.Disagreement))
	}
	if len(fs) > 0 {
		n := 0
		for _, f := range fs {
			n += f.Count
		}
		fmt.Fprintf(w, "  findings: %s for %s (one per fault step and cause; torture explain and report.html say the same)\n", plural(len(fs), "finding"), plural(n, "violation"))
		WriteFindings(w, "  ", fs, SummaryFindings)
	} else {
		for i, ov := range res.LeaseViolations {
			if i == 3 {
				fmt.Fprintf(w, "  … %d more overlaps\n", len(res.LeaseViolations)-3)
				break
			}
			fmt.Fprintf(w, "  overlap: %s\n", Printable(explain.Overlap(ov)))
		}
		for i, v := range res.FenceViolations {
			if i == 3 {
				fmt.Fprintf(w, "  … %d more fence-order violations\n", res.FenceViolationCount-3)
				break
			}
			fmt.Fprintf(w, "  fence order: %s\n", Printable(explain.FenceOrder(v)))
		}
	}
	if len(res.ResourceFailedKeys) > 0 {
		first := ""
		if t := res.FirstResourceViolation; t != nil {
			first = fmt.Sprintf(" (first by %s)", explain.Secs(*t))
		}
		keys := make([]string, len(res.ResourceFailedKeys))
		for i, k := range res.ResourceFailedKeys {
			keys[i] = Printable(k)
		}
		fmt.Fprintf(w, "  lost updates on keys: %s%s\n", strings.Join(keys, ", "), first)
	}
	s := res.Stats
	fmt.Fprintf(w, "  acquisitions: %d ok of %d completed (%.1f%%), %.1f/s\n", s.AcquireOK, s.AcquireCompleted, 100*s.SuccessRatio, s.AcquisitionsPerSecond)
	l := s.AcquireLatency
	fmt.Fprintf(w, "  acquire latency: p50 %s  p99 %s  max %s\n", dur(l.P50), dur(l.P99), dur(l.Max))
	if g := s.LongestGap; g != nil {
		fmt.Fprintf(w, "  longest stretch free but unacquired: %s\n", Printable(gap(g)))
	}
	if len(s.FaultWindows) > 0 {
		fmt.Fprintf(w, "  availability during faults: %s\n", availability(s))
	}
}

// verdictLine is a verdict with the reason it is unknown, if any.
func verdictLine(v checker.Verdict, why string) string {
	return pick(why == "", string(v), string(v)+" — "+Printable(why))
}

// availability is Stats.AvailabilityDuringFaults with its counts.
func availability(s checker.Stats) string {
	if len(s.FaultWindows) == 0 {
		return "n/a (no faults)"
	}
	if s.AvailabilityDuringFaults < 0 {
		return fmt.Sprintf("n/a (no acquire invoked during the %d faults completed)", len(s.FaultWindows))
	}
	return fmt.Sprintf("%.1f%% (%d ok of %d acquires invoked during the %d faults)",
		100*s.AvailabilityDuringFaults, s.AcquireOKDuringFaults, s.AcquireCompletedDuringFaults, len(s.FaultWindows))
}

func dur(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

func gap(g *checker.Gap) string {
	s := fmt.Sprintf("%s on key %s from %s", dur(g.Duration), g.Key, explain.Secs(g.Start))
	if g.UntilEnd {
		s += " (until the end of the history)"
	}
	return s
}

// SummaryFindings is how many findings Summary prints.
const SummaryFindings = 5

// WriteFindings writes at most limit findings (all when limit ≤ 0), a
// headline and a paragraph each, under indent, and how many more.
func WriteFindings(w io.Writer, indent string, fs []explain.Finding, limit int) {
	for i, f := range fs {
		if limit > 0 && i == limit {
			fmt.Fprintf(w, "%s… %d more findings\n", indent, len(fs)-limit)
			return
		}
		fault := ""
		if f.Fault > 0 {
			fault = fmt.Sprintf(", fault #%d", f.Fault)
		}
		fmt.Fprintf(w, "%s%d. %s violation on %s at %s: %s%s; %d %s\n%s   %s\n", indent, i+1, f.Property, Printable(f.Key), explain.Secs(f.At), f.Cause, fault,
			f.Count, explain.Noun(f.Property, f.Count), indent, Printable(f.Paragraph()))
	}
}

// plural is "1 finding" or "3 findings".
func plural(n int, one string) string { return pick(n == 1, "1 "+one, fmt.Sprintf("%d %ss", n, one)) }

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
