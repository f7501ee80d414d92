package checker

import (
	"fmt"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// Contradiction is a reply of the lock that what a node held at that
// moment contradicts, the reply and the node's observation side by side:
// an extend that said ok on a node that removed the key before the
// extend returned and never renewed it since the extend was sent (the
// token it claims to have renewed was gone when it arrived), or a
// release that said done while the key outlived it on a node and
// expired there later (the release deleted nothing).
//
// A node's observations carry no token, so a removal is taken for the
// lease's own when exactly one set of the key on that node was observed
// between the lease's acquire invoke and the removal: its own set (a
// node sets a key once per grant, and removes it before the next). The
// observer's notifications of a node arrive in order and after the
// change; the rule assumes they lag less than a lease lasts.
type Contradiction struct {
	Key     string       `json:"key"`
	Process int          `json:"process"`
	Token   string       `json:"token"`
	Op      history.Func `json:"op"`
	// Invoked and Completed are the reply's call and return.
	Invoked   int64 `json:"invoked"`
	Completed int64 `json:"completed"`
	// Node is the node whose observation contradicts the reply, Observed
	// that observation.
	Node     int             `json:"node"`
	Observed NodeObservation `json:"observed"`
	// Text puts the reply and the node's state side by side.
	Text string `json:"text"`
}

// Contradictions returns the replies of the lock that the nodes'
// observations contradict (see Contradiction), by the time of the reply;
// none when the nodes were not observed. A reply names its nodes by its
// per-node evidence (the nodes that granted it); a single-node lock's
// reply without evidence is node 0's.
func (a *Analysis) Contradictions() []Contradiction {
	if !a.Observed {
		return nil
	}
	if a.cons == nil {
		a.cons = a.contradictions()
	}
	return *a.cons
}

// judgeAnswers gives the answers verdict (Result.Answers).
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
					// The key removed before the extend returned, and no
					// renewal of it (an expire notification) seen since the
					// extend was sent: the extend found the token gone.
					if rm, ok := ownRemoval(ke.Nodes, n, l.Invoked, l.Start, x.Completed); ok && !renewed(ke.Nodes, n, x.Invoked, rm.Time) {
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
				rm, ok := ownRemoval(ke.Nodes, n, l.Invoked, r.Invoked, 1<<62)
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

// ownRemoval returns node n's first removal of the key (expired,
// evicted, del) observed after after and before before, provided it is
// the removal of the key set for a lease invoked at invoked: exactly one
// set of the key on n was observed between invoked and the removal, and
// no removal between that set and after (a removal observed after
// invoked but before any set there is the previous holder's).
func ownRemoval(obs []NodeObservation, n int, invoked, after, before int64) (NodeObservation, bool) {
	sets := 0
	for _, o := range obs {
		if o.Node != n || o.Time <= invoked {
			continue
		}
		switch o.Event {
		case "set":
			sets++
		case "expired", "evicted", "del":
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
