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
// As in net/http/httptrace, the caller puts a collector in the call's
// context and a lock reports into it; Lock is unchanged. Why the context
// rather than methods on an optional interface (toxiproxy's style): the
// library adapters cannot change their library, but it hands the caller's
// context to every go-redis command, so a hook on each node's client
// (libHook) sees the command, its reply and the collector; and a wrapper
// around a Lock passes the evidence on for free. The named interface,
// [NodeReporter], only declares that an absence of evidence means "no node
// asked", not "not reported".

// Answer is what one node answered to one command of a call.
type Answer uint8

const (
	Granted Answer = iota + 1 // the node did it
	// Refused: the node answered and did not (another token, or an error
	// reply such as READONLY or LOADING).
	Refused
	// Silent: no answer (timeout, lost connection, cancelled context): the
	// command may or may not have taken effect.
	Silent
)

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
	// Node is the index in Config.Addrs, as the harness numbers nodes
	// (schedule.json); 0 for a single instance, also through Sentinels.
	Node int
	// Attempt is 1 for the first attempt (and for Release and Extend),
	// 2 for an Acquire's first retry, and so on; for a Cleanup the attempt
	// whose token it deletes, or 0 when the lock cannot tell.
	Attempt int
	// Cleanup marks the compare-and-delete of the call's own token after a
	// failed attempt; Granted then means a partial grant undone.
	Cleanup bool
	Answer  Answer
	Err     error // a Silent's reason or a Refused's error reply
}

// NodeReporter is implemented by a Lock that reports each node's answer
// to each command ([Report]) of a call whose context carries an
// [Evidence], when ReportsNodes says so. Its Evidence is empty only for a
// call that asked no node (an Extend refused locally, a client that died
// first). Another lock's evidence is "not reported", never "no node
// granted".
type NodeReporter interface {
	ReportsNodes() bool
}

// reports is embedded by the locks that report every node's answer.
type reports struct{}

func (reports) ReportsNodes() bool { return true }

// Evidence collects the node answers of one call ([WithEvidence],
// [Report]), safe for concurrent use. The zero value is ready; use one
// per call, or Reset it between calls.
type Evidence struct {
	mu      sync.Mutex
	answers []NodeAnswer
	first   [5]NodeAnswer // the first answers (a RedLock of 5 nodes), without an allocation
}

type evidenceKey struct{}

// WithEvidence returns ctx carrying e.
func WithEvidence(ctx context.Context, e *Evidence) context.Context {
	return context.WithValue(ctx, evidenceKey{}, e)
}

// ContextEvidence returns the Evidence that ctx carries, or nil.
func ContextEvidence(ctx context.Context) *Evidence {
	e, _ := ctx.Value(evidenceKey{}).(*Evidence)
	return e
}

// Report adds a to the Evidence in ctx, if any: once for each answer of
// each node, from any goroutine, before the call returns.
func Report(ctx context.Context, a NodeAnswer) { ContextEvidence(ctx).add(a) }

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

// Reset forgets every answer, for a caller that reuses e (the harness:
// one per client).
func (e *Evidence) Reset() {
	e.mu.Lock()
	clear(e.first[:])
	e.answers = nil
	e.mu.Unlock()
}

// Answers returns a copy of the answers, in the order reported.
func (e *Evidence) Answers() []NodeAnswer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.answers)
}

// Nodes sums up the last attempt's answers and the grants undone;
// Nodes{} when only clean-ups were reported.
func (e *Evidence) Nodes() Nodes {
	e.mu.Lock()
	defer e.mu.Unlock()
	return summarize(e.answers)
}

// Nodes is the per-node evidence of one call, summed up.
type Nodes struct {
	// Attempt is the last attempt, from 1; 0 when nothing was reported.
	Attempt int
	// Granted, Refused and Silent are the nodes (ascending) by their last
	// answer in that attempt.
	Granted, Refused, Silent []int
	// Unlocked are the nodes (ascending) where a clean-up of any attempt
	// deleted the call's token.
	Unlocked []int
}

// Reported reports whether n holds any evidence.
func (n Nodes) Reported() bool { return n.Attempt > 0 }

// summarize folds answers into Nodes, ignoring negative nodes; the four
// lists share one allocation.
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

// listOf is an answer's list: 0 Granted, 1 Refused, 2 anything else.
func listOf(a Answer) int {
	switch a {
	case Granted:
		return 0
	case Refused:
		return 1
	}
	return 2
}

// answerOf is a node's answer from yes or err: an error reply
// (redis.Error, redis.Nil too) is Refused, any other error Silent.
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

// errOf is err but redis.Nil, a "no".
func errOf(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}
