package checker

import (
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// Contradiction is a reply of the lock (Op, from Invoked to Completed)
// that what Node held at that moment contradicts (Observed; Text puts
// both side by side): an extend ok on a node that removed the key before
// the extend returned and did not renew it since the extend was sent, or
// a release ok while the key outlived it on a node and expired there
// later (what docs/correctness.md calls truthful answers).
//
// Observations carry no token, so a removal is taken for the lease's own
// when exactly one set of the key on that node was observed between the
// lease's acquire invoke and the removal (a node sets a key once per
// grant); for an extend, a del in between is a contender's cleanup and
// takes back one set (ownRemoval). A node's notifications arrive in order and after the change;
// the rule assumes they lag less than a lease lasts.
type Contradiction struct {
	Key       string          `json:"key"`
	Process   int             `json:"process"`
	Token     string          `json:"token"`
	Op        history.Func    `json:"op"`
	Invoked   int64           `json:"invoked"`
	Completed int64           `json:"completed"`
	Node      int             `json:"node"`
	Observed  NodeObservation `json:"observed"`
	Text      string          `json:"text"`
}

// Contradictions returns the contradicted replies by the time of the
// reply; none when the nodes were not observed. A reply's nodes are those
// that granted it; a single-node lock's reply without evidence is node 0's.
func (a *Analysis) Contradictions() []Contradiction {
	if !a.Observed {
		return nil
	}
	if a.cons == nil {
		a.cons = a.contradictions()
	}
	return *a.cons
}

// judgeAnswers gives the answers verdict: Invalid when a reply is
// contradicted, Unknown when the nodes were not observed or nothing was
// granted.
func judgeAnswers(a *Analysis) {
	r := &a.Result
	switch cs := a.Contradictions(); {
	case len(cs) > 0:
		r.Answers, r.Contradicted = Invalid, len(cs)
		r.AnswersReason = fmt.Sprintf("%d repl(ies) of the lock the nodes contradict; the first: P%d's %s of %q: %s", len(cs), cs[0].Process, cs[0].Op, cs[0].Key, cs[0].Text)
	case !a.Observed:
		r.Answers, r.AnswersReason = Unknown, "nothing to judge: the nodes were not observed"
	case r.Stats.AcquireOK == 0:
		r.Answers, r.AnswersReason = Unknown, ReasonNoAcquire+": no reply to hold against the nodes"
	default:
		r.Answers = Valid
	}
}

// contradictions computes Contradictions.
func (a *Analysis) contradictions() *[]Contradiction {
	var out []Contradiction
	for key, ke := range a.Keys {
		single := !slices.ContainsFunc(ke.Nodes, func(o NodeObservation) bool { return o.Node != 0 })
		nodes := func(reported []int) []int {
			if reported != nil {
				return reported
			}
			if single {
				return []int{0}
			}
			return nil
		}
		for _, l := range ke.Leases() {
			for _, x := range l.Extends {
				if x.Type != history.Ok {
					continue
				}
				for _, n := range nodes(x.Granted) {
					// Removed before the extend returned, no renewal (an
					// expire notification) since it was sent.
					if rm, ok := ownRemoval(ke.Nodes, n, l.Invoked, l.Start, x.Completed, true); ok && !renewed(ke.Nodes, n, x.Invoked, rm.Time) {
						out = append(out, Contradiction{Key: key, Process: l.Process, Token: l.Token, Op: history.Extend, Invoked: x.Invoked, Completed: x.Completed, Node: n, Observed: rm,
							Text: fmt.Sprintf("extend ok at %d (invoked %d); node %d: the key was %s at %d and not renewed since the extend was sent", x.Completed, x.Invoked, n, rm.Event, rm.Time)})
						break
					}
				}
			}
			r := l.Release
			if r == nil || r.Type != history.Ok {
				continue
			}
			for _, n := range nodes(r.Granted) {
				rm, ok := ownRemoval(ke.Nodes, n, l.Invoked, r.Invoked, 1<<62, false)
				if ok && rm.Time > r.Completed && rm.Event != "del" {
					out = append(out, Contradiction{Key: key, Process: l.Process, Token: l.Token, Op: history.Release, Invoked: r.Invoked, Completed: r.Completed, Node: n, Observed: rm,
						Text: fmt.Sprintf("release ok at %d (invoked %d); node %d: the key was still set, and %s at %d", r.Completed, r.Invoked, n, rm.Event, rm.Time)})
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y Contradiction) int { return int(min(max(x.Completed-y.Completed, -1), 1)) })
	return &out
}

// renewed reports whether node n renewed the key (an expire
// notification) between from and to.
func renewed(obs []NodeObservation, n int, from, to int64) bool {
	return slices.ContainsFunc(obs, func(o NodeObservation) bool {
		return o.Node == n && o.Event == "expire" && o.Time >= from && o.Time <= to
	})
}

// ownRemoval returns node n's first removal of the key observed after
// after and before before, provided it removes the key set for a lease
// invoked at invoked: exactly one set on n between invoked and the
// removal, and no removal between that set and after (one before any
// set is the previous holder's). With held, the lease is held until
// after before (its extends, before its release): a del then is not its
// key's (a correct lock deletes its own only at its release) but a
// contender's, whose partial grant and cleanup can race the acquire and
// be seen after its ok, so a del takes back one set instead.
func ownRemoval(obs []NodeObservation, n int, invoked, after, before int64, held bool) (NodeObservation, bool) {
	sets := 0
	for _, o := range obs {
		if o.Node != n || o.Time <= invoked {
			continue
		}
		switch o.Event {
		case "set":
			sets++
		case "del":
			if held {
				sets = max(sets-1, 0)
				continue
			}
			fallthrough
		case "expired", "evicted":
			if o.Time <= after {
				if sets > 0 {
					return NodeObservation{}, false // the key set after invoked was gone by after
				}
				continue // the previous holder's key
			}
			if o.Time >= before {
				return NodeObservation{}, false
			}
			return o, sets == 1
		}
	}
	return NodeObservation{}, false
}
