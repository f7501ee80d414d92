package checker

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Wait is a client's longest wait for a key that other clients kept
// acquiring meanwhile (starvation): from the invoke of its first acquire
// of the key after its last grant of it (or the history's start) to the
// ok of its next grant, or to the history's end (UntilEnd) when none
// came. Only a wait in which some other client was granted the key
// counts: a key nobody got is liveness's concern (Gap, Stuck), not
// fairness's.
type Wait struct {
	Key     string        `json:"key"`
	Process int           `json:"process"`
	From    int64         `json:"from"`
	To      int64         `json:"to"`
	Length  time.Duration `json:"length_ns"`
	// Attempts are the client's acquires of the key in the wait;
	// Others the grants of the key to other clients in it.
	Attempts int  `json:"attempts"`
	Others   int  `json:"others"`
	UntilEnd bool `json:"until_end,omitempty"`
}

// longestWait returns the longest wait of any client on key (see Wait),
// and whether there is one; end is the history's last time.
func longestWait(key string, kd *keyData, end int64) (Wait, bool) {
	ats := slices.Clone(kd.attempts)
	slices.SortFunc(ats, func(a, b attempt) int { return cmp.Compare(a.call, b.call) })
	var grants []int64 // the oks' times, sorted, with their clients
	var grantee []int
	byRet := slices.Clone(ats)
	slices.SortFunc(byRet, func(a, b attempt) int { return cmp.Compare(a.ret, b.ret) })
	for _, a := range byRet {
		if a.ok {
			grants, grantee = append(grants, a.ret), append(grantee, a.process)
		}
	}
	others := func(p int, from, to int64) int {
		n := 0
		i, _ := slices.BinarySearch(grants, from)
		for ; i < len(grants) && grants[i] <= to; i++ {
			if grantee[i] != p {
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
		if o := others(p, w.from, to); o > 0 && (!found || to-w.from > int64(best.Length)) {
			best = Wait{Key: key, Process: p, From: w.from, To: to, Length: time.Duration(to - w.from), Attempts: w.attempts, Others: o, UntilEnd: untilEnd}
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
	procs := make([]int, 0, len(waiting))
	for p := range waiting {
		procs = append(procs, p)
	}
	slices.Sort(procs)
	for _, p := range procs {
		consider(p, waiting[p], end, true)
	}
	return best, found
}
