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

// Verdict is the outcome of one check.
type Verdict string

const (
	// Valid: the property held on every key.
	Valid Verdict = "valid"
	// Invalid: a violation on at least one key.
	Invalid Verdict = "invalid"
	// Unknown: the history tests nothing of the property, porcupine ran
	// out of time on some key and found no violation elsewhere, or the
	// lease sweep and porcupine disagree (see [Result.Disagreement]). The
	// Result says which. Unknown is never a pass.
	Unknown Verdict = "unknown"
)

// DefaultTimeout is the porcupine budget per model when [Options.Timeout]
// is zero, and the default of every --check-timeout: the largest key of
// a full matrix run needs a small share of it (BENCHMARKS.md).
const DefaultTimeout = time.Minute

// ErrMalformed is wrapped by every error that rejects a history.
var ErrMalformed = errors.New("checker: malformed history")

// Options tune Check and Visualize. A zero or negative bound means its
// default.
type Options struct {
	// Timeout is porcupine's wall-clock budget for each model, shared by
	// all its keys; a key not checked within it is Unknown. Default
	// DefaultTimeout.
	Timeout time.Duration
	// LivenessBound is how long a key may stay free yet unacquired, under
	// no fault, before liveness is stuck. Default DefaultLivenessFactor
	// × the longest validity an acquire was granted (about the TTL).
	LivenessBound time.Duration
	// Benign, when not nil, says of a fault window's description that the
	// fault cannot cut a healthy hold short (a latency below the lock's
	// per-call bound). Default nil: every fault may cut a hold.
	Benign func(desc string) bool
	// StarvationBound is how long, under no fault, a client may wait for
	// a key others are granted meanwhile (Result.Starvation). Default
	// DefaultLivenessFactor × the longest validity granted plus the
	// longest acquire call.
	StarvationBound time.Duration
	// SplitVoteBound is how long, under no fault, a key free on every
	// node may go ungranted while its contenders all fail
	// (Result.SplitVotes). Default the longest validity granted.
	SplitVoteBound time.Duration
	// Timings, when not nil, receives how long each phase took.
	Timings *Timings
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// maxReportedOverlaps caps the violations a Result lists; the counts
// beside them are full.
const maxReportedOverlaps = 100

// Result is what Check found. Each verdict's Reason field says why it is
// not Valid (for Lease and Resource, why it is Unknown).
type Result struct {
	// Lease: no two holds of one key overlap, and the fencing tokens of
	// a key's holds increase in grant order.
	Lease Verdict `json:"lease"`
	// Resource: the sections on each key's counter never lost an update.
	Resource Verdict `json:"resource"`
	// A verdict about nothing has a reason that begins with
	// ReasonNoAcquire, ReasonNoHold or ReasonNoSection, a colon and what
	// the history shows (e.g. "no section completed: 57 sections, none ok
	// (57 fail; most often \"harness: lease expired\" (57 times))").
	LeaseReason    string `json:"lease_reason,omitempty"`
	ResourceReason string `json:"resource_reason,omitempty"`
	// LeaseViolations are the overlaps the sweep found, earliest first,
	// at most 100;
	// LeaseViolationCount counts the holds that start inside an earlier
	// hold of the same key.
	LeaseViolations     []Overlap `json:"lease_violations,omitempty"`
	LeaseViolationCount int       `json:"lease_violation_count,omitempty"`
	// FirstLeaseViolation is the time the earliest overlap began.
	FirstLeaseViolation *int64 `json:"first_lease_violation,omitempty"`
	// FirstResourceViolation is, over ResourceFailedKeys, the earliest
	// Time of the ok of a section that read a value another ok section of
	// its key had read before (both wrote value + 1: an update was lost
	// by then). Nil when Resource is not Invalid, and when porcupine
	// rejected a key on which no two ok sections read the same value
	// (only a hand-written history can: the harness's store hands out
	// only values that were written).
	FirstResourceViolation *int64 `json:"first_resource_violation,omitempty"`
	// FenceViolations are the holds whose fencing token did not increase
	// in grant order, earliest first, at most 100. Any makes Lease
	// Invalid.
	FenceViolations     []FenceViolation `json:"fence_violations,omitempty"`
	FenceViolationCount int              `json:"fence_violation_count,omitempty"`
	// The keys porcupine's lease and resource models rejected and could
	// not decide in time, sorted.
	LeaseFailedKeys     []string `json:"lease_failed_keys,omitempty"`
	LeaseUnknownKeys    []string `json:"lease_unknown_keys,omitempty"`
	ResourceFailedKeys  []string `json:"resource_failed_keys,omitempty"`
	ResourceUnknownKeys []string `json:"resource_unknown_keys,omitempty"`
	// Disagreement is set when porcupine's lease verdict and the
	// independent sweep disagree on some key: a checker bug; Lease is
	// then Unknown.
	Disagreement string `json:"disagreement,omitempty"`
	// Liveness (see Liveness); Stuck is the longest stuck stretch,
	// LivenessBound the bound it was judged against.
	Liveness       Liveness      `json:"liveness"`
	LivenessReason string        `json:"liveness_reason,omitempty"`
	Stuck          *Stuck        `json:"stuck,omitempty"`
	LivenessBound  time.Duration `json:"liveness_bound_ns,omitempty"`
	// Holds is the verdict on holds cut short while no fault was active
	// (cuts.go). Cuts are the holds cut short, the spurious first, at
	// most 100; CutCount counts them all, SpuriousCount the spurious ones.
	Holds         Verdict `json:"holds,omitempty"`
	HoldsReason   string  `json:"holds_reason,omitempty"`
	Cuts          []Cut   `json:"cuts,omitempty"`
	CutCount      int     `json:"cut_count,omitempty"`
	SpuriousCount int     `json:"spurious_count,omitempty"`
	// Answers is the verdict on the lock's replies against the nodes'
	// observations (answers.go); Contradicted counts the contradicted
	// ones. Only an Analysis judges it; Check leaves it empty.
	Answers       Verdict `json:"answers,omitempty"`
	AnswersReason string  `json:"answers_reason,omitempty"`
	Contradicted  int     `json:"contradicted,omitempty"`
	// Starvation is the verdict on the longest wait (Stats.LongestWait)
	// against StarvationBound (starve.go).
	Starvation       Verdict       `json:"starvation,omitempty"`
	StarvationReason string        `json:"starvation_reason,omitempty"`
	StarvationBound  time.Duration `json:"starvation_bound_ns,omitempty"`
	// SplitVotes is the verdict on a quorum lock's longest split vote
	// (SplitVote) against SplitVoteBound (starve.go). Only an Analysis
	// judges it.
	SplitVotes       Verdict       `json:"split_votes,omitempty"`
	SplitVotesReason string        `json:"split_votes_reason,omitempty"`
	SplitVote        *SplitVote    `json:"split_vote,omitempty"`
	SplitVoteBound   time.Duration `json:"split_vote_bound_ns,omitempty"`
	// Stats are liveness and latency figures from the same history.
	Stats Stats `json:"stats"`
}

// Valid reports whether r.Outcome() is OutcomeSafe.
func (r Result) Valid() bool { return r.Outcome() == OutcomeSafe }

// Outcome is the two safety verdicts folded into one word: what an exit
// status, a matrix cell and a benchmark's detection count go by.
type Outcome string

const (
	// OutcomeSafe: both verdicts are Valid.
	OutcomeSafe Outcome = "safe"
	// OutcomeViolation: a verdict is Invalid, whatever the other.
	OutcomeViolation Outcome = "violation"
	// OutcomeUnknown: neither is Invalid and one is not Valid (Unknown,
	// or missing: a run that never reached the checker). Never a pass.
	OutcomeUnknown Outcome = "unknown"
)

// Outcome folds the lease and resource verdicts (see Fold); no other
// verdict counts: a matrix cell that states one judges it by its own.
func (r Result) Outcome() Outcome { return Fold(r.Lease, r.Resource) }

// Fold folds a lease and a resource verdict into an Outcome.
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
// the end (a killed run) are unfinished: an unfinished acquire creates no
// hold, an unfinished section may or may not have written.
//
// The error is non-nil only for a malformed history (it wraps
// ErrMalformed and names the offending event's index and time); a
// porcupine timeout, or a history that tests nothing, is an Unknown
// verdict with its reason. Stream and CheckDecoder check a history as it
// is read.
func Check(events []history.Event, opts Options) (Result, error) {
	a, _, err := analyze(events, nil, false, opts)
	return a.Result, err
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
	r.LeaseViolations = all[:min(len(all), maxReportedOverlaps)]
}

// judgeFences checks the fence order of every key's holds: a token that
// does not increase is a lease violation (unless the checker disagrees
// with itself: that stays Unknown).
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

// job is one porcupine call: a partition of size operations of key, with
// what Visualize draws of it: its time window, what it is, its notes.
type job struct {
	key      string
	size     int
	model    porcupine.Model
	ops      func() []porcupine.Operation
	from, to int64
	what     string
	notes    func() []porcupine.Annotation
}

// runJobs checks every job on GOMAXPROCS workers within one shared
// deadline (a job not started by then is Unknown), and returns the worst
// result per key. A worker builds a job's operations, so only the
// partitions being checked are in memory at once.
func runJobs(jobs []job, timeout time.Duration) map[string]porcupine.CheckResult {
	deadline := time.Now().Add(timeout)
	// Smallest first: a key porcupine cannot finish must not use up the
	// budget of all the others.
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

// severity ranks porcupine's results; Ok (and "") is 0.
var severity = map[porcupine.CheckResult]int{porcupine.Unknown: 1, porcupine.Illegal: 2}

// worse returns the more severe of two results ("" counts as Ok).
func worse(a, b porcupine.CheckResult) porcupine.CheckResult {
	if severity[b] > severity[a] || a == "" {
		return b
	}
	return a
}

// malformed builds the error for event idx.
func malformed(idx int, t int64, format string, args ...any) error {
	return fmt.Errorf("%w: event %d (time %d): %s", ErrMalformed, idx, t, fmt.Sprintf(format, args...))
}
