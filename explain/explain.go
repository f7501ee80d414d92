package explain

import (
	"fmt"

	"github.com/locktorture/locktorture/checker"
)

// Explanation is the cause of one violation, in one paragraph.
type Explanation struct {
	// Property is "lease" (two holds overlapped), "fence" (a later
	// grant's token not above an earlier one's), "resource" (a lost
	// update), "holds" (holds.go) or "answers" (answers.go).
	Property string `json:"property"`
	// Key is the lock key.
	Key string `json:"key"`
	// At is when: the overlap's start, or the second section's return.
	At int64 `json:"at"`
	// Cause is the cause named.
	Cause Cause `json:"cause"`
	// Fault is the blamed fault's number (1, 2, … of
	// Result.Stats.FaultWindows); 0 for none.
	Fault int `json:"fault,omitempty"`
	// Nodes are the nodes (n1, n2, …) of the evidence.
	Nodes []string `json:"nodes,omitempty"`
	// Text is the paragraph.
	Text string `json:"text"`
}

// DefaultLimit is Explain's limit when it is given none.
const DefaultLimit = 20

// Explain explains at most limit (≤ 0: DefaultLimit) violations of a, in
// order of property (lease, fence, resource, holds, answers), each
// earliest first; total is how many there are within the checker's caps.
func Explain(a *checker.Analysis, limit int) (ex []Explanation, total int) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	r := &a.Result
	total = len(r.LeaseViolations) + len(r.FenceViolations) + len(a.LostUpdates)
	if !explainAll(&ex, limit, r.LeaseViolations, func(ov checker.Overlap) Explanation { return overlap(a, ov) }) ||
		!explainAll(&ex, limit, r.FenceViolations, func(v checker.FenceViolation) Explanation { return fence(a, v) }) ||
		!explainAll(&ex, limit, a.LostUpdates, func(lu checker.LostUpdate) Explanation { return lost(a, lu) }) {
		return ex, total
	}
	total += min(r.SpuriousCount, len(r.Cuts))
	ex = append(ex, spuriousCuts(a, limit-len(ex))...)
	cs := a.Contradictions()
	total += len(cs)
	explainAll(&ex, limit, cs, contradiction)
	return ex, total
}

// explainAll appends to ex the explanation of each of vs while ex holds
// fewer than limit, and reports whether every one fitted.
func explainAll[V any](ex *[]Explanation, limit int, vs []V, explain func(V) Explanation) bool {
	for _, v := range vs {
		if len(*ex) >= limit {
			return false
		}
		*ex = append(*ex, explain(v))
	}
	return true
}

func overlap(a *checker.Analysis, ov checker.Overlap) Explanation {
	ex := Explanation{Property: "lease", Key: ov.Key, At: ov.Start, Cause: Unknown}
	la, okA := a.LeaseAt(ov.Key, ov.A.Token, ov.A.Start)
	lb, okB := a.LeaseAt(ov.Key, ov.B.Token, ov.B.Start)
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
	ex.blame(f)
	ex.Text = fmt.Sprintf("%s. %s %s. %s Cause: %s.", head, f.text, tail, both, f.cause)
	return ex
}

// blame names f's cause, fault and node in ex.
func (ex *Explanation) blame(f finding) {
	ex.Cause, ex.Fault = f.cause, f.fault
	if f.node >= 0 {
		ex.Nodes = []string{NodeName(f.node)}
	}
}

// fence explains a fencing token that did not grow: a node of the later
// grant restarted between the two (its counter began again), or else the
// lock's tokens do not order its grants.
func fence(a *checker.Analysis, v checker.FenceViolation) Explanation {
	ex := Explanation{Property: "fence", Key: v.Key, At: v.B.Start, Cause: LockLogic}
	text := fmt.Sprintf("P%d was granted %s at %s with fencing token %d, after P%d's grant at %s with %d: the tokens do not increase in grant order, so a resource that keeps the highest token refuses the newer holder, or, checking writes only, takes the older holder's late write.",
		v.B.Process, v.Key, Secs(v.B.Start), v.B.Fence, v.A.Process, Secs(v.A.Start), v.A.Fence)
	la, okA := a.LeaseAt(v.Key, v.A.Token, v.A.Start)
	lb, okB := a.LeaseAt(v.Key, v.B.Token, v.B.Start)
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

// lost explains a lost update: two sections that read the same value.
func lost(a *checker.Analysis, lu checker.LostUpdate) Explanation {
	ex := Explanation{Property: "resource", Key: lu.Key, At: lu.At, Cause: Unknown}
	s1, s2 := lu.A, lu.B
	desc := fmt.Sprintf("P%d's section (%s–%s) and P%d's (%s–%s) on %s both read %d and wrote %d: an update was lost.",
		s1.Process, Secs(s1.Call), Secs(s1.Return), s2.Process, Secs(s2.Call), Secs(s2.Return), lu.Key, s1.Read, s1.Read+1)
	l1, ok1 := a.LeaseAt(lu.Key, s1.Token, s1.Call)
	l2, ok2 := a.LeaseAt(lu.Key, s2.Token, s2.Call)
	if !ok1 || !ok2 {
		ex.Text = desc + " No lease of the sections is known. Cause: unknown."
		return ex
	}
	fs := faults(&a.Result)
	// A section that returned after its lease's validity: a stall.
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
	ex.blame(f)
	firstValid := "valid to " + Secs(validity(first))
	if untilReleased(first) {
		firstValid = "held until released or told it lost the lock"
	}
	ex.Text = fmt.Sprintf("%s Both wrote within their leases (P%d's %s, P%d's from %s): the leases overlapped. %s Cause: %s.",
		desc, first.Process, firstValid, second.Process, Secs(second.Start), f.text, f.cause)
	return ex
}
