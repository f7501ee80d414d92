package trial

import (
	"fmt"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// Strikes judges what each targeted step of the schedule saved at path
// did, against the checked history a: missed (it found no hold to strike
// at), struck with no window, or struck with a window. A strike left a
// window when the hold it struck stayed open for at least one node call
// after it (MinWindow of the TTL), while another client was trying to
// acquire the key: only then could anyone act on what the fault did. A
// strike at a hold whose holder released first tested nothing (with
// 10 ms holds, RedLock's holder releases long before the node killed
// under it is back). A strike at a grant the lock then refused (no hold
// in the history), or at a hold the lock then told its holder it had
// lost, tested the lock's defence, and counts as a window; a notice that
// came after another client was granted the key is told as too late.
func Strikes(path string, a *checker.Analysis, ttl time.Duration) ([]report.Strike, error) {
	ns, err := nemesis.Strikes(path)
	if err != nil {
		return nil, err
	}
	holds := a.Holds()
	out := make([]report.Strike, 0, len(ns))
	for _, s := range ns {
		rs := report.Strike{Step: s.Step, Kind: s.Kind, Desc: s.Desc}
		if !s.Struck {
			rs.Outcome, rs.Why = report.StrikeMissed, s.Missed
			if rs.Why == "" {
				rs.Why = "it struck nothing"
			}
			out = append(out, rs)
			continue
		}
		at := int64(s.At)
		rs.At = time.Duration(at).Seconds()
		tr := s.Trigger
		h, ok := struckHold(holds[tr.Key], tr.Client, at)
		if !ok {
			// The grant it struck at never became a hold: the lock itself
			// refused it (WAIT unacknowledged under the cut, a validity
			// gone by the time it returned). The fault was tested: it
			// met the lock's defence.
			rs.Outcome = report.StrikeWindow
			rs.Why = fmt.Sprintf("client %d's grant of %s never became a hold: the lock refused it", tr.Client, report.Printable(tr.Key))
			out = append(out, rs)
			continue
		}
		from := max(at, h.Start)
		open := time.Duration(h.End - from)
		rs.Window = open.Seconds()
		need := MinWindow(ttl)
		switch {
		case h.Lost && grantedMeanwhile(holds[tr.Key], tr.Client, from, h.End) != nil:
			// Told of the loss, but only after another client had been
			// granted the key: the notice came too late, and the lease
			// broke (the check says so); never a defence that held.
			o := grantedMeanwhile(holds[tr.Key], tr.Client, from, h.End)
			rs.Outcome = report.StrikeWindow
			rs.Why = fmt.Sprintf("the lock told client %d it lost %s %s after the strike, %s after client %d was granted it: too late, the lease was broken",
				tr.Client, report.Printable(tr.Key), secs(h.End-at), secs(h.End-o.Start), o.Process)
		case h.Lost:
			// The lock itself told the holder it lost the lease after the
			// strike (rueidislock watches its keys), before anyone else
			// was granted the key: the fault met the lock's defence,
			// however soon.
			rs.Outcome = report.StrikeWindow
			rs.Why = fmt.Sprintf("the lock told client %d it lost %s %s after the strike, before another client was granted it: the fault met the lock's defence",
				tr.Client, report.Printable(tr.Key), secs(h.End-at))
		case open < need:
			rs.Outcome = report.StrikeNoWindow
			rs.Why = fmt.Sprintf("client %d's hold of %s ended %s after the strike, less than one node call (%s = TTL/10): its holder released before anyone else could be granted the key; a longer --hold gives the strike a window (leave it unset for the kind's own workload)",
				tr.Client, report.Printable(tr.Key), secs(int64(open)), need)
		case !contended(a.Attempts(tr.Key), tr.Client, from, h.End):
			rs.Outcome = report.StrikeNoWindow
			rs.Why = fmt.Sprintf("no other client got an answer to an acquire of %s while client %d's struck hold lasted (%s): none tried, or every try timed out; fewer keys or more clients give the strike a contender",
				report.Printable(tr.Key), tr.Client, secs(int64(open)))
		default:
			rs.Outcome = report.StrikeWindow
		}
		out = append(out, rs)
	}
	return out, nil
}

// grantedMeanwhile returns the first hold of the key by a client other
// than holder granted in [from, to), or nil.
func grantedMeanwhile(holds []checker.Hold, holder int, from, to int64) *checker.Hold {
	for i := range holds {
		if h := &holds[i]; h.Process != holder && h.Start >= from && h.Start < to {
			return h
		}
	}
	return nil
}

// secs is a span in seconds with milliseconds, as explain prints times.
func secs(d int64) string { return explain.Secs(d) }

// MinWindow is the least time a struck hold must stay open after its
// strike for another client to act: one call to a node, which the locks
// bound by TTL/10 (locks.Config.Timeout's default), at least 1 ms.
func MinWindow(ttl time.Duration) time.Duration { return max(ttl/10, time.Millisecond) }

// struckHold finds the hold of client the strike at time at aimed at: the
// one open at that time, else the first granted after it (a strike that
// delays a grant precedes its hold).
func struckHold(holds []checker.Hold, client int, at int64) (checker.Hold, bool) {
	var next *checker.Hold
	for i := range holds {
		h := &holds[i]
		if h.Process != client {
			continue
		}
		if h.Start <= at && at <= h.End {
			return *h, true
		}
		if h.Start > at && (next == nil || h.Start < next.Start) {
			next = h
		}
	}
	if next == nil {
		return checker.Hold{}, false
	}
	return *next, true
}

// contended reports whether a client other than holder had an acquire of
// the key in flight at some time in (from, to) that got a definite answer
// (granted or refused): a window in which every contender timed out (a
// slow machine, nodes that did not answer) tested nothing.
func contended(attempts []checker.Attempt, holder int, from, to int64) bool {
	for _, at := range attempts {
		if at.Process != holder && at.Definite && at.Call < to && at.Return > from {
			return true
		}
	}
	return false
}
