package history

import (
	"errors"
	"fmt"
)

// Type is the kind of an event: an operation begins with an Invoke and
// completes with exactly one of Ok, Fail or Info.
type Type string

const (
	Invoke Type = "invoke" // a client begins an operation
	Ok     Type = "ok"     // it completed and took effect
	Fail   Type = "fail"   // it completed and definitely did not take effect
	// Info: the outcome is unknown (a timeout, a lost connection). An
	// Info also stands alone for events that are no client's operation.
	Info Type = "info"
)

// Func names the operation an event belongs to.
type Func string

const (
	// Acquire: a client asks for the lock on Key. Its Ok carries Token,
	// Fence (0 when the lock issues none) and ValidUntil; its completion,
	// like a release's and an extend's, may carry Nodes.
	Acquire Func = "acquire"
	// Release: a client gives up the lease Token on Key.
	Release Func = "release"
	// Extend: a client extends the lease Token on Key; its Ok carries the
	// new ValidUntil.
	Extend Func = "extend"
	// Section: one critical section on the resource of Key: read the
	// value, hold, write value+1. The Invoke carries the Fence presented;
	// the Ok carries Read and Wrote; a Fail (refused by fencing, or
	// abandoned because the lease expired) wrote nothing.
	Section Func = "section"
	// FaultStart and FaultStop: the nemesis started or healed the fault
	// Value. Info events of NemesisProcess with no Invoke.
	FaultStart Func = "fault-start"
	FaultStop  Func = "fault-stop"
	// NodeKey: a node's observer saw a lock key change on Node: Value is
	// the keyspace notification ("set", "expired", "del", "evicted",
	// "expire"). An Info event of ObserverProcess with no Invoke, stamped
	// when the notification arrived (after the change). No verdict
	// depends on it.
	NodeKey Func = "node"
	// Lost: the lock told the holder Process, at Time, that it no longer
	// holds the lease Token on Key (a watchdog's renewal was refused, a
	// context the lock hands its holder was cancelled); Error says why.
	// An Info event with no Invoke: it may come while that client has an
	// operation open. A hold ends at the earliest of its release, its
	// validity and its loss notice.
	Lost Func = "lost"
)

// NemesisProcess is the Process of every nemesis event.
const NemesisProcess = -1

// ObserverProcess is the Process of every NodeKey event: a node's observation, not a client's.
const ObserverProcess = -2

// Event is one line of a history.
type Event struct {
	Type Type `json:"type"`
	F    Func `json:"f"`
	// Process is the client (0, 1, …), NemesisProcess or ObserverProcess.
	// A client has at most one operation open, so an Invoke is completed
	// by the next event of the same Process.
	Process int `json:"process"`
	// Time is the offset in nanoseconds from the run's monotonic base.
	Time int64 `json:"time"`
	// Key is the lock key (and the resource's key).
	Key string `json:"key,omitempty"`
	// Token identifies the lease: on an acquire's Ok, and on every
	// release, extend and section of that lease.
	Token string `json:"token,omitempty"`
	// Fence is the fencing token, 0 for none.
	Fence int64 `json:"fence,omitempty"`
	// ValidUntil is the end of the lease's validity, an offset like Time,
	// on an acquire's or extend's Ok.
	ValidUntil int64 `json:"valid_until,omitempty"`
	// Nodes is the per-node evidence of an acquire, release or extend, on
	// its completion. Nil when the lock reported none: "not reported",
	// never "no node granted". No verdict depends on it.
	Nodes *Nodes `json:"nodes,omitempty"`
	// Node is the node (numbered as in Nodes) of a NodeKey event only.
	Node *int `json:"node,omitempty"`
	// Read and Wrote are the values a Section read and wrote.
	Read  *int64 `json:"read,omitempty"`
	Wrote *int64 `json:"wrote,omitempty"`
	// Value describes a nemesis or NodeKey event.
	Value string `json:"value,omitempty"`
	// Family is the fault family (nemesis.Kind.Family: clock, kill, …) of
	// a FaultStart, the cause explain names for it; empty in a history
	// written before it was recorded, or by hand.
	Family string `json:"family,omitempty"`
	// Error is the error text of a Fail or Info.
	Error string `json:"error,omitempty"`
}

// Nodes is what the nodes answered to one acquire, release or extend
// (locks.Nodes). Nodes are numbered from 0 in the run's order, as
// schedule.json numbers them (node 0 is n1); a single-instance lock's
// node is 0.
type Nodes struct {
	// Attempt is the attempt of the call (1, 2, …) whose answers the lists
	// hold: its last. 0 only in a history written by hand.
	Attempt int `json:"attempt,omitempty"`
	// Granted did it in that attempt: set the key, or deleted or extended
	// the token (on a RedLock acquire's Ok, the quorum).
	Granted []int `json:"granted,omitempty"`
	// Refused answered and did not: another token held the key, the token
	// was gone, or an error reply.
	Refused []int `json:"refused,omitempty"`
	// Silent did not answer: the command may or may not have taken effect.
	Silent []int `json:"silent,omitempty"`
	// Unlocked are the nodes on which the clean-up after a failed attempt
	// deleted this call's token: partial grants undone.
	Unlocked []int `json:"unlocked,omitempty"`
}

// validate checks n on its own: no negative node, no node in two of
// Granted, Refused and Silent (or twice in one), no negative attempt.
func (n *Nodes) validate() error {
	if n.Attempt < 0 {
		return fmt.Errorf("%w: nodes: negative attempt %d", ErrInvalid, n.Attempt)
	}
	var low uint64        // nodes 0–63 seen
	var high map[int]bool // the others, in the rare history that has them
	for _, l := range [][]int{n.Granted, n.Refused, n.Silent} {
		for _, i := range l {
			dup := false
			switch {
			case i < 0:
				return fmt.Errorf("%w: nodes: negative node %d", ErrInvalid, i)
			case i < 64:
				dup = low&(1<<i) != 0
				low |= 1 << i
			default:
				if high == nil {
					high = map[int]bool{}
				}
				dup = high[i]
				high[i] = true
			}
			if dup {
				return fmt.Errorf("%w: nodes: node %d listed twice among granted, refused and silent", ErrInvalid, i)
			}
		}
	}
	for _, i := range n.Unlocked {
		if i < 0 {
			return fmt.Errorf("%w: nodes: negative unlocked node %d", ErrInvalid, i)
		}
	}
	return nil
}

// Int64 returns a pointer to v, for Event.Read and Event.Wrote.
func Int64(v int64) *int64 { return &v }

// Int returns a pointer to v, for Event.Node.
func Int(v int) *int { return &v }

// ErrInvalid is wrapped by every error that rejects an event.
var ErrInvalid = errors.New("history: invalid event")

// Validate checks one event on its own.
func (e Event) Validate() error {
	switch e.Type {
	case Invoke, Ok, Fail, Info:
	default:
		return fmt.Errorf("%w: unknown type %q", ErrInvalid, e.Type)
	}
	op := e.F == Acquire || e.F == Release || e.F == Extend || e.F == Section
	info := e.F == FaultStart || e.F == FaultStop || e.F == Lost || e.F == NodeKey
	switch {
	case !op && !info:
		return fmt.Errorf("%w: unknown f %q", ErrInvalid, e.F)
	case info && e.Type != Info:
		return fmt.Errorf("%w: %s must be of type info, not %q", ErrInvalid, e.F, e.Type)
	case (op || e.F == Lost) && e.Process < 0:
		return fmt.Errorf("%w: %s by negative process %d", ErrInvalid, e.F, e.Process)
	case op && e.Key == "":
		return fmt.Errorf("%w: %s %s without a key", ErrInvalid, e.F, e.Type)
	case e.F == Lost && (e.Key == "" || e.Token == ""):
		return fmt.Errorf("%w: %s without a key or a token", ErrInvalid, e.F)
	case e.F == NodeKey && (e.Node == nil || *e.Node < 0):
		return fmt.Errorf("%w: %s without a node", ErrInvalid, e.F)
	case e.F == NodeKey && (e.Key == "" || e.Value == ""):
		return fmt.Errorf("%w: %s without a key or a value", ErrInvalid, e.F)
	}
	if e.Time < 0 {
		return fmt.Errorf("%w: negative time %d", ErrInvalid, e.Time)
	}
	if e.ValidUntil < 0 { // would turn the checker's differences of times into overflows
		return fmt.Errorf("%w: negative valid_until %d", ErrInvalid, e.ValidUntil)
	}
	if e.Type == Ok && (e.F == Acquire || e.F == Extend) {
		if e.Token == "" {
			return fmt.Errorf("%w: %s ok without a token", ErrInvalid, e.F)
		}
		if e.ValidUntil == 0 {
			return fmt.Errorf("%w: %s ok without valid_until", ErrInvalid, e.F)
		}
	}
	if e.Type == Ok && e.F == Section && (e.Read == nil || e.Wrote == nil) {
		return fmt.Errorf("%w: section ok without read and wrote", ErrInvalid)
	}
	if e.Node != nil && e.F != NodeKey {
		return fmt.Errorf("%w: node on %s %s; only a %s event has one", ErrInvalid, e.F, e.Type, NodeKey)
	}
	if e.Nodes != nil {
		if e.Type == Invoke || (e.F != Acquire && e.F != Release && e.F != Extend) {
			return fmt.Errorf("%w: nodes on %s %s; only the completion of an acquire, release or extend has them", ErrInvalid, e.F, e.Type)
		}
		if err := e.Nodes.validate(); err != nil {
			return err
		}
	}
	return nil
}
