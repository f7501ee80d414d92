package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
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
	// RunID names the run directory.
	RunID string `json:"run_id"`
	// Started is the wall-clock start of the run (for people; every
	// figure inside the run uses the monotonic base of the history).
	Started time.Time `json:"started"`
	// Command is the command line that produced the run.
	Command string `json:"command,omitempty"`
	// Config is the whole configuration of the run, seed included.
	Config any `json:"config"`
	// Seed repeats the configuration's seed for quick reading.
	Seed int64 `json:"seed"`
	// Server is what the nodes ran: the server's name and the version
	// its first node reported ("redis 7.0.15", "etcd 3.4.23"; see
	// Server). Files written before it have redis_version, which reads
	// as "redis" and that version.
	Server string `json:"server,omitempty"`
	// NodeVersions is the version each node reported, in node order:
	// they may differ on the external backend. Files written before it
	// have redis_versions, which reads as it.
	NodeVersions []string `json:"node_versions,omitempty"`
	// Versions of the tool and of the modules that matter to a verdict.
	Versions map[string]string `json:"versions"`
	// Elapsed is the wall time the clients ran, in seconds.
	Elapsed float64 `json:"elapsed_seconds"`
	// Interrupted is set when the run was stopped before its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// Stopped is set when the run ended at its first violation, as a run
	// expected to show one may (it has shown what it must).
	Stopped bool `json:"stopped_at_violation,omitempty"`
	// Strikes are what the run's targeted fault steps did (package
	// trial): struck with a window, struck without one, or missed.
	Strikes []Strike `json:"strikes,omitempty"`
	// Trials are the times the run put the lock to the test (package
	// trial); Health how late the harness's timers fired.
	Trials Trials        `json:"trials"`
	Health health.Report `json:"health"`
	// Findings are the run's violations grouped by the fault step and
	// cause package explain names (one per step that broke something,
	// with how many violations it made), in the order of their first.
	Findings []explain.Finding `json:"findings,omitempty"`
	// Contradictions are the lock's replies the nodes' observations
	// contradict (checker.Analysis.Contradictions): an extend ok on a key
	// already gone, a release ok the key outlived.
	Contradictions []checker.Contradiction `json:"contradictions,omitempty"`
	// Causes counts the violations of the run by the cause package explain
	// names from the evidence, most frequent first.
	Causes []CauseCount `json:"causes,omitempty"`
	// Lease and Resource are the verdicts; Check holds everything else
	// the checker found.
	Lease    checker.Verdict `json:"lease"`
	Resource checker.Verdict `json:"resource"`
	Check    checker.Result  `json:"check"`
}

// Trials counts the trials of a run's promises (trial.Trials): the times
// it could have shown a violation.
type Trials struct {
	// Kind is what a trial was: TrialStrike, TrialStep or TrialHandover.
	Kind string `json:"kind"`
	// Count is the trials that count; Unhealthy those that met a stretch
	// in which the machine was too slow, counted neither as safe nor as a
	// miss.
	Count     int `json:"count"`
	Unhealthy int `json:"unhealthy,omitempty"`
	// ToFirst is the trial (1, 2, …) in which the first violation showed;
	// 0 for none.
	ToFirst int `json:"to_first_violation,omitempty"`
}

// Text says what the trials showed: "12 fault steps: a per-trial
// violation rate above 22 % excluded at 95 %", "violation in trial 3 of
// 12", with the trials left out on a machine too slow.
func (t Trials) Text() string {
	what := t.Kind + "s"
	if t.Count == 1 {
		what = t.Kind
	}
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

// HealthText says how well the machine kept time in a run: how late the
// harness's timers fired, the probe's round trips to a node no fault
// touched, and the stretches in which it was too slow.
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

// The kinds of a trial.
const (
	// TrialStrike: a targeted strike that left a window.
	TrialStrike = "strike"
	// TrialStep: a random fault step and a key held and contended
	// during it.
	TrialStep = "fault step"
	// TrialHandover: in a run without faults, a contended hold.
	TrialHandover = "handover"
)

// Confidence is the confidence at which a count of trials without a
// violation excludes a per-trial violation rate (ExcludedRate).
const Confidence = 0.95

// ExcludedRate is the largest per-trial violation rate that n trials
// without a violation exclude at Confidence: a lock that broke its
// promise in a share p of trials would have shown a violation in n trials
// with probability 1-(1-p)^n ≥ Confidence for every p above it (about
// 3/n). 1 for no trial: nothing is excluded.
func ExcludedRate(n int) float64 {
	if n <= 0 {
		return 1
	}
	return 1 - math.Pow(1-Confidence, 1/float64(n))
}

// TrialsFor is how many trials without a violation exclude a per-trial
// violation rate of rate at Confidence (ExcludedRate(n) ≤ rate); 0 for a
// rate outside (0, 1).
func TrialsFor(rate float64) int {
	if !(rate > 0 && rate < 1) {
		return 0
	}
	return int(math.Ceil(math.Log(1-Confidence) / math.Log(1-rate)))
}

// CauseCount is how many of a run's (or a cell's) violations one cause
// explains.
type CauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// Strike is what one targeted fault step of a run did, judged against
// the history: a strike is a test only if it left a window, some time in
// which another client could act while the hold it struck lasted.
type Strike struct {
	// Step is the step's index in schedule.json; Kind its kind; Desc the
	// step as schedule.json describes it.
	Step int    `json:"step"`
	Kind string `json:"kind"`
	Desc string `json:"desc"`
	// Outcome is StrikeWindow, StrikeNoWindow or StrikeMissed.
	Outcome string `json:"outcome"`
	// Why says why a strike missed or left no window.
	Why string `json:"why,omitempty"`
	// At is when it struck, in seconds from the run's start; Window how
	// long the hold it struck stayed open after that, in seconds.
	At     float64 `json:"at_s,omitempty"`
	Window float64 `json:"window_s,omitempty"`
}

// The outcomes of a Strike.
const (
	// StrikeWindow: it struck a hold that stayed open long enough for
	// another client to act on the key.
	StrikeWindow = "window"
	// StrikeNoWindow: it struck, but the hold ended before another
	// client could act (its holder released first): nothing was tested.
	StrikeNoWindow = "no window"
	// StrikeMissed: no hold fit within the step's window.
	StrikeMissed = "missed"
)

// Versions reports the Go version and the versions of the modules that
// the verdicts depend on, from the binary's build information.
func Versions() map[string]string {
	v := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["go"] = bi.GoVersion
	for _, m := range bi.Deps {
		switch {
		case strings.HasPrefix(m.Path, "github.com/redis/go-redis"),
			strings.HasPrefix(m.Path, "github.com/anishathalye/porcupine"),
			strings.HasPrefix(m.Path, "github.com/Shopify/toxiproxy"),
			strings.HasPrefix(m.Path, "github.com/go-redsync/redsync"),
			strings.HasPrefix(m.Path, "github.com/bsm/redislock"),
			strings.HasPrefix(m.Path, "github.com/redis/rueidis"):
			v[m.Path] = ModuleVersion(m)
		}
	}
	return v
}

// ModuleVersion is the version of m the binary was built with: its
// replacement's when go.mod replaced it (a module pinned to an older
// version than the one the build would pick, as bugs/ does).
func ModuleVersion(m *debug.Module) string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	return m.Version
}

// WriteResults writes r as dir/results.json, through a temporary file
// and a rename (safefs.WriteFile): a link at that name is replaced, not
// written through.
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

// Server joins a server's name and version as Results.Server and
// Matrix.Servers hold them: "redis 7.0.15"; the name alone when the
// version is unknown.
func Server(name, version string) string {
	return strings.TrimSpace(name + " " + version)
}

// serverName is the name part of a Server.
func serverName(s string) string {
	name, _, _ := strings.Cut(s, " ")
	return name
}

// legacyRedis is what files written before Results.Server and
// Matrix.Servers held instead: the nodes' versions, named for Redis, the
// only server they ran then.
type legacyRedis struct {
	RedisVersion  string   `json:"redis_version"`
	RedisVersions []string `json:"redis_versions"`
}

// UnmarshalJSON reads results.json, those written before Server and
// NodeVersions too (see legacyRedis).
func (r *Results) UnmarshalJSON(b []byte) error {
	type results Results // without this method
	var v struct {
		results
		legacyRedis
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Results(v.results)
	if r.Server == "" && v.RedisVersion != "" {
		r.Server = Server("redis", v.RedisVersion)
	}
	if r.NodeVersions == nil {
		r.NodeVersions = v.RedisVersions
	}
	return nil
}

// ReadResults reads dir/results.json. A run folder may come from someone
// else: a results.json that is a symbolic link or not a regular file is
// refused (safefs.ReadFile).
func ReadResults(dir string) (Results, error) { return readJSON[Results](dir, "results.json") }

// readJSON reads the JSON file dir/name into a T, refusing a link or
// anything but a regular file at dir/name.
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

// Printable returns s unchanged when every character of it is printable
// (letters, marks, numbers, punctuation, symbols, ASCII space), and else
// s quoted and escaped as strconv.Quote does it. Keys, tokens, error texts
// and fault values come from a history, which anyone may have written:
// printed raw, an escape sequence in one would act on the reader's
// terminal (move the cursor, rewrite what was printed, set the window
// title), and a carriage return or a bidirectional override could make a
// line say what it does not.
func Printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Summary writes the one-screen text summary of a checked run: the
// verdicts, the findings (the violations grouped by fault step and cause,
// at most SummaryFindings of them) and the figures. Times are seconds
// from the run's start with milliseconds and tokens are short, as
// explain and report.html print them; results.json keeps the raw values.
// Every text that comes from the history is Printable.
func Summary(w io.Writer, title string, res checker.Result, fs []explain.Finding) {
	fmt.Fprintf(w, "%s\n", Printable(title))
	fmt.Fprintf(w, "  lease safety:    %s\n", verdictLine(res.Lease, res.LeaseReason))
	fmt.Fprintf(w, "  resource safety: %s\n", verdictLine(res.Resource, res.ResourceReason))
	if res.Liveness != "" {
		line := string(res.Liveness)
		if res.LivenessReason != "" {
			line += " — " + Printable(res.LivenessReason)
		}
		fmt.Fprintf(w, "  liveness:        %s\n", line)
	}
	if res.Holds == checker.Invalid {
		// Only when broken: a hold cut short with no fault is a finding
		// of its own, kept holds are the rule.
		fmt.Fprintf(w, "  holds kept:      %s\n", verdictLine(res.Holds, res.HoldsReason))
	}
	if res.Answers == checker.Invalid {
		// Only when broken, as holds: the first contradicted reply,
		// beside the node's state (the findings list them all).
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
	if why == "" {
		return string(v)
	}
	return string(v) + " — " + Printable(why)
}

// availability describes Stats.AvailabilityDuringFaults with the counts
// behind it.
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

// SummaryFindings is how many findings Summary prints; the rest are
// counted.
const SummaryFindings = 5

// WriteFindings writes at most limit findings (all when limit ≤ 0),
// numbered, each a headline ("1. lease violation on k0 at 2.556 s: holder
// told too late, fault #1; 49 overlaps") and its paragraph, every line
// under indent; then how many more there are.
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
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
