package explain

import (
	"fmt"

	"github.com/locktorture/locktorture/checker"
)

// Explanation is the cause of one violation, in one paragraph.
type Explanation struct {
	// Property is "lease" (two holds overlapped), "fence" (a later
	// grant's fencing token was not above an earlier one's: a lease
	// violation too), "resource" (an update was lost), "holds" (a hold
	// cut short while no fault was active, holds.go) or "answers" (a
	// reply of the lock a node contradicts, answers.go).
	Property string `json:"property"`
	// Key is the lock key.
	Key string `json:"key"`
	// At is the time of the violation: the start of the overlap, or the
	// return of the section that completed second.
	At int64 `json:"at"`
	// Cause is the cause named.
	Cause Cause `json:"cause"`
	// Fault is the number (1, 2, …, as in Result.Stats.FaultWindows) of
	// the fault blamed; 0 for none.
	Fault int `json:"fault,omitempty"`
	// Nodes are the nodes (n1, n2, …) of the evidence.
	Nodes []string `json:"nodes,omitempty"`
	// Text is the paragraph.
	Text string `json:"text"`
}

// DefaultLimit is how many violations Explain explains when its limit is
// not positive.
const DefaultLimit = 20

// Explain explains the violations of a: the lease overlaps first, then
// the fencing tokens out of order, then the lost updates, then the holds
// cut short while no fault was active (holds.go), then the replies a
// node contradicts (answers.go), each earliest first, at most limit of them (when limit ≤ 0, DefaultLimit); total is
// how many there are (those beyond the checker's caps not counted).
func Explain(a *checker.Analysis, limit int) (ex []Explanation, total int) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	r := &a.Result
	total = len(r.LeaseViolations) + len(r.FenceViolations) + len(a.LostUpdates)
	for _, ov := range r.LeaseViolations {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, overlap(a, ov))
	}
	for _, fv := range r.FenceViolations {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, fence(a, fv))
	}
	for _, lu := range a.LostUpdates {
		if len(ex) >= limit {
			return ex, total
		}
		ex = append(ex, lost(a, lu))
	}
	total += min(r.SpuriousCount, len(r.Cuts))
	ex = append(ex, spuriousCuts(a, limit-len(ex))...)
	cs := a.Contradictions()
	total += len(cs)
	for _, c := range cs {
		if len(ex) >= limit {
			break
		}
		ex = append(ex, contradiction(c))
	}
	return ex, total
}

// lease is the lease of key with token current at t (a hold's start, a
// section's call): a token fixed per client is granted many times.
func lease(a *checker.Analysis, key, token string, t int64) (checker.Lease, bool) {
	return a.LeaseAt(key, token, t)
}

func overlap(a *checker.Analysis, ov checker.Overlap) Explanation {
	ex := Explanation{Property: "lease", Key: ov.Key, At: ov.Start, Cause: Unknown}
	la, okA := lease(a, ov.Key, ov.A.Token, ov.A.Start)
	lb, okB := lease(a, ov.Key, ov.B.Token, ov.B.Start)
	head := fmt.Sprintf("P%d held %s from %s", ov.A.Process, ov.Key, Secs(ov.A.Start))
	tail := fmt.Sprintf("P%d acquired %s at %s", ov.B.Process, ov.Key, Secs(ov.B.Start))
	if okA {
		valid := "valid to " + Secs(validity(la))
		if untilReleased(la) {
			valid = "no validity: held until released or told it lost the lock"
		}
		head += fmt.Sprintf(" (token %s, granted by %s, %s)", Short(la.Token), nodeList(la.Granted), valid)
	}
	if okB {
		tail += fmt.Sprintf(" from %s", nodeList(lb.Granted))
	}
	both := fmt.Sprintf("Both held it %s–%s.", Secs(ov.Start), Secs(ov.End))
	if !okA || !okB {
		ex.Text = fmt.Sprintf("%s. %s. %s No evidence of the leases.", head, tail, both)
		return ex
	}
	fs := faults(&a.Result)
	ke := a.Keys[ov.Key]
	f := explainOverlap(a, fs, ke, la, lb)
	ex.Cause, ex.Fault = f.cause, f.fault
	if f.node >= 0 {
		ex.Nodes = []string{NodeName(f.node)}
	}
	ex.Text = fmt.Sprintf("%s. %s %s. %s Cause: %s.", head, f.text, tail, both, f.cause)
	return ex
}

// fence explains a fencing token that did not grow: a node that granted
// the later hold and restarted between the two grants (a kill fault on
// it) began its counter again; else the lock's tokens do not order its
// grants (RedLock's maximum of per-node counters: two majorities count
// different grants).
func fence(a *checker.Analysis, v checker.FenceViolation) Explanation {
	ex := Explanation{Property: "fence", Key: v.Key, At: v.B.Start, Cause: LockLogic}
	text := fmt.Sprintf("P%d was granted %s at %s with fencing token %d, after P%d's grant at %s with %d: the tokens do not increase in grant order, so a resource that keeps the highest token refuses the newer holder, or, checking writes only, takes the older holder's late write.",
		v.B.Process, v.Key, Secs(v.B.Start), v.B.Fence, v.A.Process, Secs(v.A.Start), v.A.Fence)
	la, okA := lease(a, v.Key, v.A.Token, v.A.Start)
	lb, okB := lease(a, v.Key, v.B.Token, v.B.Start)
	if okA && okB && la.Granted != nil && lb.Granted != nil {
		text += fmt.Sprintf(" P%d's grant came from %s, P%d's from %s.", v.A.Process, nodeList(la.Granted), v.B.Process, nodeList(lb.Granted))
		fs := faults(&a.Result)
		for _, n := range lb.Granted {
			if f, ok := find(fs, Restart, n, v.A.Start, v.B.Start); ok && len(f.nodes) > 0 {
				ex.Cause, ex.Fault, ex.Nodes = Restart, f.num, []string{NodeName(n)}
				ex.Text = fmt.Sprintf("%s %s restarted %s between the two grants: its counter began again. Cause: %s.", text, capital(f.String()), NodeName(n), Restart)
				return ex
			}
		}
	}
	ex.Text = fmt.Sprintf("%s No restart came between them: the lock's token does not order its grants (a maximum of per-node counters counts, on each majority, only the grants that majority saw). Cause: %s.", text, LockLogic)
	return ex
}

// lost explains a lost update: the sections of two leases that read the
// same value.
func lost(a *checker.Analysis, lu checker.LostUpdate) Explanation {
	ex := Explanation{Property: "resource", Key: lu.Key, At: lu.At, Cause: Unknown}
	s1, s2 := lu.A, lu.B
	desc := fmt.Sprintf("P%d's section (%s–%s) and P%d's (%s–%s) on %s both read %d and wrote %d: an update was lost.",
		s1.Process, Secs(s1.Call), Secs(s1.Return), s2.Process, Secs(s2.Call), Secs(s2.Return), lu.Key, s1.Read, s1.Read+1)
	l1, ok1 := lease(a, lu.Key, s1.Token, s1.Call)
	l2, ok2 := lease(a, lu.Key, s2.Token, s2.Call)
	if !ok1 || !ok2 {
		ex.Text = desc + " No lease of the sections is known. Cause: unknown."
		return ex
	}
	fs := faults(&a.Result)
	// A section that returned after its lease's validity: the holder
	// stalled (the later write is the stale one).
	for _, p := range []struct {
		s checker.OKSection
		l checker.Lease
	}{{s1, l1}, {s2, l2}} {
		v := validity(p.l)
		if p.s.Return <= v {
			continue
		}
		ex.Cause = Stalled
		text := fmt.Sprintf(" P%d's lease %s was valid to %s; its section wrote at %s, %s later", p.l.Process, Short(p.l.Token), Secs(v), Secs(p.s.Return), secsDelta(p.s.Return-v))
		if f, ok := find(fs, Stalled, -1, p.s.Call, p.s.Return); ok {
			ex.Fault = f.num
			text += fmt.Sprintf(", stalled by %s", f)
		}
		ex.Text = desc + text + ". Cause: " + string(Stalled) + "."
		return ex
	}
	// Both wrote within their validity: the leases overlapped.
	first, second := l1, l2
	if second.Start < first.Start {
		first, second = second, first
	}
	f := explainOverlap(a, fs, a.Keys[lu.Key], first, second)
	ex.Cause, ex.Fault = f.cause, f.fault
	if f.node >= 0 {
		ex.Nodes = []string{NodeName(f.node)}
	}
	firstValid := "valid to " + Secs(validity(first))
	if untilReleased(first) {
		firstValid = "held until released or told it lost the lock"
	}
	ex.Text = fmt.Sprintf("%s Both wrote within their leases (P%d's %s, P%d's from %s): the leases overlapped. %s Cause: %s.",
		desc, first.Process, firstValid, second.Process, Secs(second.Start), f.text, f.cause)
	return ex
}
