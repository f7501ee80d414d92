package locks

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Per-node evidence: which nodes granted, refused or did not answer one
// call of a Lock.
//
// The design is net/http/httptrace's: the caller puts a collector in the
// call's context ([WithEvidence]) and a lock that can tell reports every
// node's answer into it ([Report]) while the call runs; the [Lock]
// interface is unchanged and a lock that reports nothing still works.
// The context, rather than a second set of methods (toxiproxy's style of
// optional interface), carries the evidence for two reasons. The library
// adapters cannot change the library, but the library hands the caller's
// context to every go-redis command it sends, so a go-redis hook on each
// node's client (libHook) sees each command, its reply and the call's
// collector without the library's help. And a wrapper around a Lock
// passes the evidence through for free. What a named interface is still
// good for is the declaration: a Lock that reports implements
// [NodeReporter], so that a caller knows that an absence of evidence means
// "no node asked", not "not reported".

// Answer is what one node answered to one command of a call.
type Answer uint8

const (
	// Granted: the node did it (set the key, deleted or extended this
	// call's token).
	Granted Answer = iota + 1
	// Refused: the node answered and did not do it (the key was held by
	// another token, or did not hold this one, or the node replied with
	// an error such as READONLY or LOADING).
	Refused
	// Silent: no answer (a timeout, a refused or lost connection, a
	// cancelled context): the command may or may not have taken effect on
	// the node.
	Silent
)

// String returns "granted", "refused" or "silent".
func (a Answer) String() string {
	switch a {
	case Granted:
		return "granted"
	case Refused:
		return "refused"
	case Silent:
		return "silent"
	}
	return "answer(" + strconv.Itoa(int(a)) + ")"
}

// NodeAnswer is one node's answer to one command of a call.
type NodeAnswer struct {
	// Node is the node's index in Config.Addrs, from 0: the order in
	// which the harness numbers its nodes (schedule.json). A
	// single-instance lock's node is 0, also when it finds its primary
	// through Sentinels (node 0 is then whichever primary it reached).
	Node int
	// Attempt is the attempt of the call the answer belongs to: 1 for the
	// first (and for a Release or an Extend, which make one), 2 for the
	// first retry of an Acquire, and so on. For a Cleanup it is the
	// attempt whose token it deletes, or 0 when the lock cannot tell.
	Attempt int
	// Cleanup marks the compare-and-delete of this call's own token after
	// a failed attempt (RedLock's "unlock every node"; setnx's clean-up
	// of a SET that may have landed unseen). Granted means it deleted a
	// grant: a partial grant undone.
	Cleanup bool
	// Answer is what the node answered.
	Answer Answer
	// Err is the node's error: the reason of a Silent, or the error reply
	// of a Refused; nil otherwise.
	Err error
}

// NodeReporter is implemented by a Lock that reports per-node evidence:
// in every call whose context carries an [Evidence], it reports each
// node's answer to each command it sends ([Report]). ReportsNodes says
// whether this lock does (a [ProcessLock] does when its client says so in
// its hello). Every lock of this package implements it.
//
// A lock that reports leaves an Evidence empty only for a call that asked
// no node (an Extend refused locally because the lease's validity had
// passed, a client process that died before it answered). A lock that
// does not implement NodeReporter, or says false, reports nothing: its
// calls' evidence is "not reported", never "no node granted".
type NodeReporter interface {
	ReportsNodes() bool
}

// Evidence collects the node answers of one call. Put it in the call's
// context with [WithEvidence]; a lock that reports adds to it with
// [Report]. It is safe for concurrent use (RedLock asks its nodes in
// parallel). The zero value is ready to use; use one per call, or Reset
// it between calls.
type Evidence struct {
	mu      sync.Mutex
	answers []NodeAnswer
	first   [5]NodeAnswer // the first answers (a RedLock of 5 nodes), without an allocation
}

// evidenceKey is the context key of an *Evidence.
type evidenceKey struct{}

// WithEvidence returns a copy of ctx that carries e: the locks that
// report add the answers of the call made with it to e.
func WithEvidence(ctx context.Context, e *Evidence) context.Context {
	return context.WithValue(ctx, evidenceKey{}, e)
}

// ContextEvidence returns the Evidence that ctx carries, or nil.
func ContextEvidence(ctx context.Context) *Evidence {
	e, _ := ctx.Value(evidenceKey{}).(*Evidence)
	return e
}

// Report adds a to the Evidence that ctx carries; without one it does
// nothing. A lock registered from elsewhere calls it once for each answer
// of each node it asks, from any goroutine, before the call returns.
func Report(ctx context.Context, a NodeAnswer) { ContextEvidence(ctx).add(a) }

// add adds a to e; a nil e does nothing.
func (e *Evidence) add(a NodeAnswer) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if e.answers == nil {
		e.answers = e.first[:0]
	}
	e.answers = append(e.answers, a)
	e.mu.Unlock()
}

// Reset forgets every answer, for a caller that makes one call after
// another with the same Evidence (the harness: one per client). A lock
// must then have reported every answer of a call before it returned.
func (e *Evidence) Reset() {
	e.mu.Lock()
	clear(e.first[:])
	e.answers = nil
	e.mu.Unlock()
}

// Answers returns a copy of every answer reported so far, in the order
// in which they were reported.
func (e *Evidence) Answers() []NodeAnswer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.answers)
}

// Nodes sums the answers up: those of the call's last attempt, and the
// partial grants undone. Nodes{} (Attempt 0) when no answer but
// clean-ups' was reported.
func (e *Evidence) Nodes() Nodes {
	e.mu.Lock()
	defer e.mu.Unlock()
	return summarize(e.answers)
}

// Nodes is the per-node evidence of one call, summed up.
type Nodes struct {
	// Attempt is the call's last attempt, from 1, whose answers the three
	// lists below hold; 0 when nothing was reported. For a successful
	// RedLock Acquire, Granted is the quorum that granted the lease.
	Attempt int
	// Granted, Refused and Silent are the nodes (indices, ascending) that
	// granted, refused or did not answer in that attempt; a node is in at
	// most one of them (its last answer in the attempt counts).
	Granted, Refused, Silent []int
	// Unlocked are the nodes, ascending, on which a clean-up of any
	// attempt deleted this call's token: the partial grants undone after
	// a failed attempt (RedLock), or a SET that had landed unseen (setnx).
	Unlocked []int
}

// Reported reports whether n holds any evidence.
func (n Nodes) Reported() bool { return n.Attempt > 0 }

// summarize folds answers into Nodes (see Evidence.Nodes). An answer of
// a negative node is ignored. The four lists share one allocation.
func summarize(answers []NodeAnswer) Nodes {
	last := 0
	for _, a := range answers {
		if !a.Cleanup && a.Node >= 0 {
			last = max(last, a.Attempt, 1)
		}
	}
	if last == 0 {
		return Nodes{}
	}
	type final struct {
		node   int
		answer Answer
	}
	var finalBuf [16]final
	finals := finalBuf[:0] // each node's last answer in the last attempt
	var unlockedBuf [16]int
	unlocked := unlockedBuf[:0]
	for _, a := range answers {
		switch {
		case a.Node < 0:
		case a.Cleanup && a.Answer == Granted:
			if !slices.Contains(unlocked, a.Node) {
				unlocked = append(unlocked, a.Node)
			}
		case !a.Cleanup && max(a.Attempt, 1) == last:
			if i := slices.IndexFunc(finals, func(f final) bool { return f.node == a.Node }); i >= 0 {
				finals[i].answer = a.Answer
			} else {
				finals = append(finals, final{a.Node, a.Answer})
			}
		}
	}
	var count [3]int // granted, refused, silent
	for _, f := range finals {
		count[listOf(f.answer)]++
	}
	all := make([]int, 0, len(finals)+len(unlocked))
	lists := [3][]int{}
	for k := range lists {
		lists[k] = all[len(all) : len(all) : len(all)+count[k]]
		for _, f := range finals {
			if listOf(f.answer) == k {
				lists[k] = append(lists[k], f.node)
			}
		}
		all = all[:len(all)+count[k]]
	}
	n := Nodes{Attempt: last}
	if len(unlocked) > 0 {
		n.Unlocked = append(all[len(all):len(all):cap(all)], unlocked...)
	}
	for k, dst := range [...]*[]int{&n.Granted, &n.Refused, &n.Silent} {
		if len(lists[k]) > 0 {
			*dst = lists[k]
		}
	}
	for _, l := range [][]int{n.Granted, n.Refused, n.Silent, n.Unlocked} {
		slices.Sort(l)
	}
	return n
}

// listOf is the list of Nodes an answer goes to: 0 Granted, 1 Refused, 2
// Silent (and anything else).
func listOf(a Answer) int {
	switch a {
	case Granted:
		return 0
	case Refused:
		return 1
	}
	return 2
}

// answerOf is the answer of a node whose command replied yes (it did
// it) or failed with err: an error reply of the node (redis.Error, which
// redis.Nil is too) is Refused, any other error (no reply) Silent.
func answerOf(yes bool, err error) Answer {
	var reply redis.Error
	switch {
	case err == nil && yes:
		return Granted
	case err == nil, errors.As(err, &reply):
		return Refused
	}
	return Silent
}

// errOf is err unless it is redis.Nil, which is a "no", not an error.
func errOf(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}
