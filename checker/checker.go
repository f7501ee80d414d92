package checker

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locktorture/locktorture/history"
)

// Verdict is the outcome of one safety check.
type Verdict string

const (
	// Valid: the property held on every key.
	Valid Verdict = "valid"
	// Invalid: porcupine found a violation on at least one key.
	Invalid Verdict = "invalid"
	// Unknown: the history tests nothing of the property (no hold, or no
	// section that completed), porcupine ran out of time on some key and
	// found no violation elsewhere, or the lease sweep and porcupine
	// disagree (a checker bug, see [Result.Disagreement]). The Result
	// says which (LeaseReason, ResourceReason). Unknown is never a pass.
	Unknown Verdict = "unknown"
)

// DefaultTimeout is the porcupine budget per model when [Options.Timeout]
// is zero, and the default of every --check-timeout: a minute, which the
// largest key of a full matrix run needs a small share of (BENCHMARKS.md).
const DefaultTimeout = time.Minute

// ErrMalformed is wrapped by every error that rejects a history.
var ErrMalformed = errors.New("checker: malformed history")

// Options tune Check and Visualize.
type Options struct {
	// Timeout is the wall-clock budget of porcupine for each model (lease,
	// then resource), shared by all keys of that model. A key not checked
	// within it is Unknown. Zero or negative means DefaultTimeout (60s).
	Timeout time.Duration
	// LivenessBound is how long a key may stay free yet unacquired, under
	// no fault, before liveness is stuck. Zero or
	// negative means DefaultLivenessFactor (3) × the longest validity an
	// acquire was granted in the history (about the TTL).
	LivenessBound time.Duration
	// Benign, when not nil, says of a fault window's description that
	// the fault cannot cut a healthy hold short (a latency below the
	// lock's per-call bound): a hold cut short under it alone is a
	// spurious loss. Default nil: every fault may cut a hold.
	Benign func(desc string) bool
	// StarvationBound is how long, under no fault, a client may wait for
	// a key other clients are granted meanwhile before it starved (see
	// Result.Starvation). Zero or negative means DefaultLivenessFactor
	// (3) × the longest validity granted plus the longest one acquire
	// call took.
	StarvationBound time.Duration
	// SplitVoteBound is how long, under no fault, a key free on every
	// node may go ungranted while its contenders all fail before the
	// split votes are a livelock (see Result.SplitVotes). Zero or
	// negative means the longest validity granted (about the TTL).
	SplitVoteBound time.Duration
	// Timings, when not nil, receives how long each phase of the check
	// took. Default nil.
	Timings *Timings
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// maxReportedOverlaps caps Result.LeaseViolations; LeaseViolationCount
// has the full count.
const maxReportedOverlaps = 100

// Result is what Check found.
type Result struct {
	// Lease is the lease-safety verdict: no two holds of one key overlap,
	// and the fencing tokens of a key's holds increase in grant order.
	Lease Verdict `json:"lease"`
	// Resource is the resource-safety verdict: the critical sections on
	// each key's counter never lost an update.
	Resource Verdict `json:"resource"`
	// LeaseReason and ResourceReason say, in one line, why a verdict is
	// Unknown; they are empty otherwise. A verdict about nothing begins
	// with ReasonNoAcquire, ReasonNoHold or ReasonNoSection, followed by
	// a colon and what the history shows (e.g. "no section completed: 57
	// sections, none ok (57 fail; most often \"harness: lease expired\"
	// (57 times))").
	LeaseReason    string `json:"lease_reason,omitempty"`
	ResourceReason string `json:"resource_reason,omitempty"`
	// LeaseViolations are the overlaps the sweep found, earliest first, at
	// most 100 (see LeaseViolationCount).
	LeaseViolations []Overlap `json:"lease_violations,omitempty"`
	// LeaseViolationCount is the number of holds that start inside an
	// earlier hold of the same key.
	LeaseViolationCount int `json:"lease_violation_count,omitempty"`
	// FirstLeaseViolation is the time the earliest overlap began.
	FirstLeaseViolation *int64 `json:"first_lease_violation,omitempty"`
	// FirstResourceViolation is, over the keys whose sections lost an
	// update (ResourceFailedKeys), the earliest time at which two ok
	// sections of one key had both read the same value: the Time of the ok
	// of the one that completed second. Both wrote that value + 1, so one
	// update was lost by then. It is nil when Resource is not Invalid, and
	// when porcupine rejected a key on which no two ok sections read the
	// same value (only a hand-written history can: the harness's store
	// hands out only values that were written).
	FirstResourceViolation *int64 `json:"first_resource_violation,omitempty"`
	// FenceViolations are the holds whose fencing token did not increase
	// in grant order (see FenceViolation), earliest first, at most 100;
	// FenceViolationCount has the full count. Any makes Lease Invalid.
	FenceViolations     []FenceViolation `json:"fence_violations,omitempty"`
	FenceViolationCount int              `json:"fence_violation_count,omitempty"`
	// LeaseFailedKeys are the keys porcupine's lease model rejected,
	// sorted.
	LeaseFailedKeys []string `json:"lease_failed_keys,omitempty"`
	// LeaseUnknownKeys are the keys the lease model could not decide in
	// time, sorted.
	LeaseUnknownKeys []string `json:"lease_unknown_keys,omitempty"`
	// ResourceFailedKeys are the keys whose sections lost an update,
	// sorted.
	ResourceFailedKeys []string `json:"resource_failed_keys,omitempty"`
	// ResourceUnknownKeys are the keys the resource model could not decide
	// in time, sorted.
	ResourceUnknownKeys []string `json:"resource_unknown_keys,omitempty"`
	// Disagreement is set when porcupine's lease verdict and the
	// independent sweep disagree on some key. That is a bug in the
	// checker; Lease is then Unknown.
	Disagreement string `json:"disagreement,omitempty"`
	// Liveness is the liveness verdict (see Liveness), LivenessReason why
	// it is unknown or what was stuck, Stuck the longest stuck stretch,
	// LivenessBound the bound it was judged against.
	Liveness       Liveness      `json:"liveness"`
	LivenessReason string        `json:"liveness_reason,omitempty"`
	Stuck          *Stuck        `json:"stuck,omitempty"`
	LivenessBound  time.Duration `json:"liveness_bound_ns,omitempty"`
	// Holds is the verdict on holds cut short: Invalid when the lock
	// ended some hold before its validity (a loss notice, a refused
	// extend or release) while no fault was active (a spurious loss),
	// Valid when it had holds and cut none so, Unknown when it had none;
	// HoldsReason says why it is not Valid. Cuts are the holds cut short
	// (see Cut), the spurious first, at most 100; CutCount counts them
	// all and SpuriousCount the spurious ones. Like liveness, it does
	// not count in Outcome: a matrix cell that expects holds kept judges
	// it by its own.
	Holds         Verdict `json:"holds,omitempty"`
	HoldsReason   string  `json:"holds_reason,omitempty"`
	Cuts          []Cut   `json:"cuts,omitempty"`
	CutCount      int     `json:"cut_count,omitempty"`
	SpuriousCount int     `json:"spurious_count,omitempty"`
	// Answers is the verdict on the lock's replies (answers.go): Invalid
	// when a reply it gave is contradicted by what a node held at that
	// moment (see Contradiction), Valid when the nodes were observed, the
	// history has leases and no reply is contradicted, Unknown when the
	// nodes were not observed or nothing was granted; AnswersReason says
	// why it is not Valid, Contradicted counts the contradicted replies.
	// Only an Analysis judges it (it alone keeps the observations); Check
	// leaves it empty.
	Answers       Verdict `json:"answers,omitempty"`
	AnswersReason string  `json:"answers_reason,omitempty"`
	Contradicted  int     `json:"contradicted,omitempty"`
	// Starvation is the verdict on fairness (starve.go): Invalid when a
	// client waited, under no fault, longer than StarvationBound for a
	// key other clients were granted meanwhile (Stats.LongestWait is the
	// wait judged), Valid when it never did, Unknown when no client
	// waited while another was granted the key (no contention to judge)
	// or there is no bound; StarvationReason says why it is not Valid.
	Starvation       Verdict       `json:"starvation,omitempty"`
	StarvationReason string        `json:"starvation_reason,omitempty"`
	StarvationBound  time.Duration `json:"starvation_bound_ns,omitempty"`
	// SplitVotes is the verdict on a quorum lock's split votes
	// (starve.go): Invalid when a key that was free on every node went
	// ungranted, under no fault, for longer than SplitVoteBound while its
	// contenders all failed (SplitVote is the longest such stretch),
	// Valid when none did, Unknown when the history has no observations
	// of more than one node (not a quorum lock, or not observed). Only
	// an Analysis judges it.
	SplitVotes       Verdict       `json:"split_votes,omitempty"`
	SplitVotesReason string        `json:"split_votes_reason,omitempty"`
	SplitVote        *SplitVote    `json:"split_vote,omitempty"`
	SplitVoteBound   time.Duration `json:"split_vote_bound_ns,omitempty"`
	// Stats are liveness and latency figures from the same history.
	Stats Stats `json:"stats"`
}

// Valid reports whether both verdicts are Valid: r.Outcome() is
// OutcomeSafe.
func (r Result) Valid() bool { return r.Outcome() == OutcomeSafe }

// Outcome is the two safety verdicts of a run folded into one word: what
// an exit status, a matrix cell and a benchmark's detection count go by.
type Outcome string

const (
	// OutcomeSafe: both verdicts are Valid.
	OutcomeSafe Outcome = "safe"
	// OutcomeViolation: a verdict is Invalid, whatever the other.
	OutcomeViolation Outcome = "violation"
	// OutcomeUnknown: no verdict is Invalid and one is not Valid (Unknown,
	// or missing: a run that never reached the checker). Never a pass.
	OutcomeUnknown Outcome = "unknown"
)

// Outcome folds the lease and resource verdicts (see Fold). Liveness
// does not count: a run states no liveness expectation, and a matrix cell
// that does judges it by its own.
func (r Result) Outcome() Outcome { return Fold(r.Lease, r.Resource) }

// Fold folds a lease and a resource verdict into an Outcome: a violation
// of either is a violation; safe needs both Valid; anything else is
// unknown.
func Fold(lease, resource Verdict) Outcome {
	switch {
	case lease == Invalid || resource == Invalid:
		return OutcomeViolation
	case lease == Valid && resource == Valid:
		return OutcomeSafe
	}
	return OutcomeUnknown
}

// Check checks a complete or truncated history. Operations still open at
// the end (a killed run) are taken as unfinished: an unfinished acquire
// creates no hold, an unfinished section may or may not have written.
//
// The error is non-nil only for a malformed history (it wraps
// ErrMalformed and names the offending event's index and time), and a
// history without events is malformed; porcupine running out of time, or
// a history in which no acquire or no section succeeded, is not an error
// but an Unknown verdict with its reason.
//
// Check holds the whole history; Stream and CheckDecoder check one as it is
// read.
func Check(events []history.Event, opts Options) (Result, error) {
	st := NewStream()
	if err := st.s.addAll(events); err != nil {
		return Result{}, err
	}
	return st.Finish(opts)
}

// check runs both models, the sweep and the statistics on scanned data.
func check(d *scanned, opts Options) Result {
	timeout := opts.timeout()
	keys := d.sortedKeys()
	var r Result
	tm := opts.Timings
	if tm == nil {
		tm = new(Timings)
	}
	lap := time.Now()
	since := func(into *time.Duration) {
		now := time.Now()
		*into, lap = now.Sub(lap), now
	}

	// Lease: porcupine per key (in chunks), then the independent sweep.
	porc := checkLease(d, keys, timeout)
	since(&tm.LeasePorcupine)
	judgeLease(&r, d, keys, porc)
	judgeFences(&r, d, keys)
	since(&tm.Sweep)

	// Resource: porcupine per key.
	res := checkResource(d, keys, timeout)
	since(&tm.ResourcePorcupine)
	judgeResource(&r, d, keys, res, tm)

	lap = time.Now()
	r.Stats = d.stats(keys)
	r.Liveness, r.LivenessReason, r.Stuck, r.LivenessBound = d.liveness(keys, opts.LivenessBound)
	judgeCuts(&r, d, opts.Benign)
	judgeStarvation(&r, d, opts.StarvationBound)
	since(&tm.Stats)

	explainUnknown(&r, d, timeout)
	return r
}

// judgeLease sets r's lease verdict from porcupine's results per key
// (porc) and the sweep of every key's holds, and the overlaps it found.
func judgeLease(r *Result, d *scanned, keys []string, porc map[string]porcupine.CheckResult) {
	overlaps := make(map[string][]Overlap)
	var all []Overlap
	for _, k := range keys {
		if ov := sweep(d.keys[k].holds); len(ov) > 0 {
			overlaps[k] = ov
			all = append(all, ov...)
		}
	}
	lo := compareLease(keys, porc, overlaps)
	r.Lease, r.LeaseFailedKeys, r.LeaseUnknownKeys, r.Disagreement = lo.verdict, lo.failed, lo.unknown, lo.disagreement
	if len(all) == 0 {
		return
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Start < all[j].Start })
	r.LeaseViolationCount = len(all)
	first := all[0].Start
	r.FirstLeaseViolation = &first
	if len(all) > maxReportedOverlaps {
		all = all[:maxReportedOverlaps]
	}
	r.LeaseViolations = all
}

// judgeFences checks the fence order of every key's holds. A lease's
// fencing token is part of what the lock promises, so a token that does
// not increase is a lease violation (unless the checker disagrees with
// itself: that stays Unknown).
func judgeFences(r *Result, d *scanned, keys []string) {
	var fences []FenceViolation
	for _, k := range keys {
		fences = append(fences, fenceOrder(d.keys[k].holds)...)
	}
	if len(fences) == 0 {
		return
	}
	sort.SliceStable(fences, func(i, j int) bool { return fences[i].B.Start < fences[j].B.Start })
	r.FenceViolationCount = len(fences)
	if first := fences[0].B.Start; r.FirstLeaseViolation == nil || first < *r.FirstLeaseViolation {
		r.FirstLeaseViolation = &first
	}
	r.FenceViolations = fences[:min(len(fences), maxReportedOverlaps)]
	if r.Disagreement == "" {
		r.Lease = Invalid
	}
}

// judgeResource sets r's resource verdict from porcupine's results per
// key (res) and, when a key failed, the time of the first lost update;
// finding that counts in tm.Sweep.
func judgeResource(r *Result, d *scanned, keys []string, res map[string]porcupine.CheckResult, tm *Timings) {
	r.Resource = Valid
	for _, k := range keys {
		switch res[k] {
		case porcupine.Illegal:
			r.ResourceFailedKeys = append(r.ResourceFailedKeys, k)
		case porcupine.Unknown:
			r.ResourceUnknownKeys = append(r.ResourceUnknownKeys, k)
		}
	}
	switch {
	case len(r.ResourceFailedKeys) > 0:
		r.Resource = Invalid
		lap := time.Now()
		for _, k := range r.ResourceFailedKeys {
			if t, ok := firstLostUpdate(d.keys[k].sections); ok && (r.FirstResourceViolation == nil || t < *r.FirstResourceViolation) {
				r.FirstResourceViolation = &t
			}
		}
		tm.Sweep += time.Since(lap)
	case len(r.ResourceUnknownKeys) > 0:
		r.Resource = Unknown
	}
}

// explainUnknown says why a verdict is unknown. A verdict about nothing
// is never valid; it can never be invalid either (no hold cannot overlap,
// no ok section cannot lose an update).
func explainUnknown(r *Result, d *scanned, timeout time.Duration) {
	switch why := d.untestedLease(r.Stats); {
	case why != "" && r.Lease == Valid:
		r.Lease, r.LeaseReason = Unknown, why
	case r.Lease != Unknown:
	case r.Disagreement != "":
		r.LeaseReason = r.Disagreement
	default:
		r.LeaseReason = timeoutReason(r.LeaseUnknownKeys, timeout)
	}
	switch why := d.untestedResource(r.Stats); {
	case why != "" && r.Resource == Valid:
		r.Resource, r.ResourceReason = Unknown, why
	case r.Resource == Unknown:
		r.ResourceReason = timeoutReason(r.ResourceUnknownKeys, timeout)
	}
}

// job is one porcupine call: a partition of one key's operations.
type job struct {
	key   string
	size  int
	model porcupine.Model
	ops   func() []porcupine.Operation
}

// runJobs checks every job, on GOMAXPROCS workers, within one deadline
// shared by all jobs; a job not started before the deadline is Unknown.
// Building a job's operations is left to the worker, so only the
// partitions being checked are in memory at once. It returns the worst
// result per key: Illegal over Unknown over Ok.
func runJobs(jobs []job, timeout time.Duration) map[string]porcupine.CheckResult {
	deadline := time.Now().Add(timeout)
	// Smallest first: one key that porcupine cannot finish must not use
	// up the budget of all the others.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].size < jobs[j].size })
	results := make([]porcupine.CheckResult, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				remaining := time.Until(deadline)
				if remaining <= 0 {
					results[i] = porcupine.Unknown
					continue
				}
				results[i] = porcupine.CheckOperationsTimeout(jobs[i].model, jobs[i].ops(), remaining)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()

	perKey := make(map[string]porcupine.CheckResult)
	for i, j := range jobs {
		perKey[j.key] = worse(perKey[j.key], results[i])
	}
	return perKey
}

// worse returns the more severe of two results ("" counts as Ok).
func worse(a, b porcupine.CheckResult) porcupine.CheckResult {
	rank := func(r porcupine.CheckResult) int {
		switch r {
		case porcupine.Illegal:
			return 2
		case porcupine.Unknown:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) || a == "" {
		return b
	}
	return a
}

// malformed builds the error for event idx.
func malformed(idx int, t int64, format string, args ...any) error {
	return fmt.Errorf("%w: event %d (time %d): %s", ErrMalformed, idx, t, fmt.Sprintf(format, args...))
}
