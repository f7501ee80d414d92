package checker

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Wait is a client's wait for a key: from the invoke of its first acquire
// of the key after its last grant of it to the ok of its next grant, or
// to the history's end (UntilEnd). It counts only if Others, the grants
// of the key to other clients in it, is not 0: a key nobody got is
// liveness's concern. Quiet is its time under no fault, which the
// starvation verdict judges; Attempts are the client's acquires in it.
type Wait struct {
	Key      string        `json:"key"`
	Process  int           `json:"process"`
	From     int64         `json:"from"`
	To       int64         `json:"to"`
	Length   time.Duration `json:"length_ns"`
	Quiet    time.Duration `json:"quiet_ns"`
	Attempts int           `json:"attempts"`
	Others   int           `json:"others"`
	UntilEnd bool          `json:"until_end,omitempty"`
}

// String describes the wait on one line.
func (w Wait) String() string {
	until := "until it was granted the key"
	if w.UntilEnd {
		until = "to the end, never granted"
	}
	return fmt.Sprintf("P%d waited for %q over [%d, %d], %s of it under no fault, %s, through %d attempt(s) while other clients were granted it %d time(s)",
		w.Process, w.Key, w.From, w.To, w.Quiet, until, w.Attempts, w.Others)
}

// longestWait returns the longest wait of any client on key by its time
// under no fault (merged are the fault windows), and whether there is
// one; end is the history's last time.
func longestWait(key string, kd *keyData, end int64, merged []Window) (Wait, bool) {
	ats := slices.Clone(kd.attempts)
	slices.SortFunc(ats, func(a, b attempt) int { return cmp.Compare(a.call, b.call) })
	grants := slices.DeleteFunc(slices.Clone(ats), func(a attempt) bool { return !a.ok })
	slices.SortFunc(grants, func(a, b attempt) int { return cmp.Compare(a.ret, b.ret) })
	others := func(p int, from, to int64) int {
		n := 0
		i, _ := slices.BinarySearchFunc(grants, from, func(g attempt, t int64) int { return cmp.Compare(g.ret, t) })
		for ; i < len(grants) && grants[i].ret <= to; i++ {
			if grants[i].process != p {
				n++
			}
		}
		return n
	}
	type open struct {
		from     int64
		attempts int
	}
	waiting := map[int]*open{}
	var best Wait
	found := false
	consider := func(p int, w *open, to int64, untilEnd bool) {
		q := time.Duration(quietTime(merged, w.from, to))
		if o := others(p, w.from, to); o > 0 && (!found || q > best.Quiet) {
			best = Wait{Key: key, Process: p, From: w.from, To: to, Length: time.Duration(to - w.from), Quiet: q, Attempts: w.attempts, Others: o, UntilEnd: untilEnd}
			found = true
		}
	}
	for _, a := range ats {
		w := waiting[a.process]
		if w == nil {
			w = &open{from: a.call}
			waiting[a.process] = w
		}
		w.attempts++
		if a.ok {
			consider(a.process, w, a.ret, false)
			delete(waiting, a.process)
		} else if a.ret == math.MaxInt64 {
			consider(a.process, w, end, true)
			delete(waiting, a.process)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(waiting)) {
		consider(p, waiting[p], end, true)
	}
	return best, found
}

// judgeStarvation judges the longest wait against bound (0: the default,
// DefaultLivenessFactor × the longest validity granted plus the longest
// acquire call). No Redis lock keeps a queue, so losing a few rounds is
// bad luck; trying through three leases' worth of grants to others,
// beyond one call's own retries, is being passed over (the same three
// leases liveness allows a key nobody gets).
func judgeStarvation(r *Result, d *scanned, bound time.Duration) {
	if bound <= 0 {
		bound = timesSat(DefaultLivenessFactor, d.maxValidity)
		if bound < math.MaxInt64-time.Duration(d.maxCall) {
			bound += time.Duration(d.maxCall)
		}
	}
	r.StarvationBound = bound
	w := r.Stats.LongestWait
	switch {
	case w != nil && w.Quiet > bound:
		r.Starvation = Invalid
		r.StarvationReason = fmt.Sprintf("a client starved longer than the bound of %s: %s", bound, w)
	case w == nil:
		r.Starvation, r.StarvationReason = Unknown, "nothing to judge: no client waited for a key while another was granted it"
	case d.maxValidity <= 0 || d.maxValidity > 1<<61:
		// A self-renewing lock's century bounds no wait.
		r.Starvation, r.StarvationReason = Unknown, "nothing to judge: no lease had a validity to bound a wait by"
	case time.Duration(d.last-d.first) < bound:
		r.Starvation, r.StarvationReason = Unknown, fmt.Sprintf("nothing to judge: the history lasts %s, less than the starvation bound of %s", time.Duration(d.last-d.first), bound)
	default:
		r.Starvation = Valid
	}
}

// SplitVote is a stretch in which a key was free on every node, as
// observed, yet every contender failed with an answer, each winning too
// few nodes (RedLock's split vote). It runs from the first instant of a
// liveness gap (see Gap) at which every node observed setting the key
// had removed it, to the gap's end (UntilEnd as in Gap). Quiet is its
// time under no fault, Contenders the clients whose acquires failed with
// an answer while it lasted, and Failures those acquires.
type SplitVote struct {
	Key        string        `json:"key"`
	From       int64         `json:"from"`
	To         int64         `json:"to"`
	Quiet      time.Duration `json:"quiet_ns"`
	Contenders int           `json:"contenders"`
	Failures   int           `json:"failures"`
	UntilEnd   bool          `json:"until_end,omitempty"`
}

// String describes the stretch on one line.
func (v SplitVote) String() string {
	until := "until a grant"
	if v.UntilEnd {
		until = "to the end, never granted"
	}
	return fmt.Sprintf("key %q free on every node over [%d, %d], %s of it under no fault, %s: %d client(s) failed %d acquire(s) in it",
		v.Key, v.From, v.To, v.Quiet, until, v.Contenders, v.Failures)
}

// judgeSplitVotes judges a quorum lock's longest split vote against
// bound (0: the default, the longest validity granted). Contenders retry
// after a random delay (50 ms by default in RedLock and redsync) to fall
// out of step; a TTL is some twenty such delays, so a free key nobody
// wins for that long is a livelock, not bad luck.
func judgeSplitVotes(a *Analysis, bound time.Duration) {
	r := &a.Result
	if bound <= 0 && a.d != nil && a.d.maxValidity < 1<<61 {
		bound = time.Duration(a.d.maxValidity)
	}
	r.SplitVoteBound = bound
	v, quorum := a.longestSplitVote()
	switch {
	case !quorum:
		r.SplitVotes, r.SplitVotesReason = Unknown, "nothing to judge: no key was observed on more than one node (not a quorum lock, or the nodes were not observed)"
	case bound <= 0:
		r.SplitVotes, r.SplitVotesReason = Unknown, "nothing to judge: no lease had a validity to bound a split vote by"
	case v != nil && v.Quiet > bound:
		r.SplitVotes, r.SplitVote = Invalid, v
		r.SplitVotesReason = fmt.Sprintf("split votes longer than the bound of %s: %s", bound, v)
	case time.Duration(a.d.last-a.d.first) < bound:
		r.SplitVotes, r.SplitVote = Unknown, v
		r.SplitVotesReason = fmt.Sprintf("nothing to judge: the history lasts %s, less than the split-vote bound of %s", time.Duration(a.d.last-a.d.first), bound)
	default:
		r.SplitVotes, r.SplitVote = Valid, v
	}
}

// longestSplitVote returns the longest split vote by its time under no
// fault, nil for none, and whether some key was observed on more than one
// node (only such keys are judged).
func (a *Analysis) longestSplitVote() (*SplitVote, bool) {
	if a.d == nil {
		return nil, false
	}
	merged := mergeWindows(a.d.windows)
	var best *SplitVote
	quorum := false
	keys := slices.Sorted(maps.Keys(a.Keys))
	for _, k := range keys {
		obs, kd := a.Keys[k].Nodes, a.d.keys[k]
		nodes := map[int]bool{}
		for _, o := range obs {
			nodes[o.Node] = true
		}
		if len(nodes) < 2 || kd == nil {
			continue
		}
		quorum = true
		for _, v := range splitVotes(k, kd, obs, a.d.last, merged) {
			if best == nil || v.Quiet > best.Quiet {
				best = &v
			}
		}
	}
	return best, quorum
}

// splitVotes finds the split votes of one key (see SplitVote), obs being
// its node observations by time.
func splitVotes(key string, kd *keyData, obs []NodeObservation, end int64, merged []Window) []SplitVote {
	set := map[int]bool{} // the nodes holding the key, as observed so far
	apply := func(o NodeObservation) {
		switch o.Event {
		case "set":
			set[o.Node] = true
		case "expired", "evicted", "del":
			delete(set, o.Node)
		}
	}
	var out []SplitVote
	i := 0
	for _, g := range keyGaps(key, kd, end) {
		to := g.Start + int64(g.Duration)
		for ; i < len(obs) && obs[i].Time <= g.Start; i++ {
			apply(obs[i])
		}
		from := int64(-1)
		if len(set) == 0 {
			from = g.Start
		}
		for ; from < 0 && i < len(obs) && obs[i].Time <= to; i++ {
			apply(obs[i])
			if len(set) == 0 {
				from = obs[i].Time
			}
		}
		if from < 0 {
			continue
		}
		v := SplitVote{Key: key, From: from, To: to, Quiet: time.Duration(quietTime(merged, from, to)), UntilEnd: g.UntilEnd}
		procs := map[int]bool{}
		for _, at := range kd.attempts {
			// A call makes several rounds: one that failed while the
			// stretch lasted lost a round in it.
			if !at.ok && at.definite && at.call < to && at.ret > from {
				procs[at.process] = true
				v.Failures++
			}
		}
		if v.Contenders = len(procs); v.Contenders >= 2 {
			out = append(out, v)
		}
	}
	return out
}
