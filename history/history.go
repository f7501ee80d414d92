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

// Func names the operation an event belongs to. docs/correctness.md
// ("The history format") says which events of each carry which fields.
type Func string

const (
	Acquire Func = "acquire"
	Release Func = "release"
	Extend  Func = "extend"
	// Section: one critical section on the resource of Key: read the
	// value, hold, write value+1. A Fail (refused by fencing, or abandoned
	// because the lease expired) wrote nothing.
	Section Func = "section"
	// FaultStart and FaultStop: the nemesis started or healed the fault
	// Value (Info events of NemesisProcess, with no Invoke).
	FaultStart Func = "fault-start"
	FaultStop  Func = "fault-stop"
	// NodeKey: a node's observer saw a lock key change on Node (Value is
	// the keyspace notification), stamped when the notification arrived.
	// An Info event of ObserverProcess with no Invoke; no verdict depends
	// on it.
	NodeKey Func = "node"
	// Lost: the lock told the holder Process that it no longer holds the
	// lease Token on Key; Error says why. An Info event with no Invoke,
	// which may come while that client has an operation open.
	Lost Func = "lost"
)

// NemesisProcess is the Process of every nemesis event.
const NemesisProcess = -1

// ObserverProcess is the Process of every NodeKey event: a node's observation, not a client's.
const ObserverProcess = -2

// Event is one line of a history; docs/correctness.md's table says what
// each field holds. Times (Time, ValidUntil) are nanoseconds from the
// run's monotonic base. A client (Process ≥ 0) has at most one operation
// open, so an Invoke is completed by the next event of its Process.
type Event struct {
	Type       Type   `json:"type"`
	F          Func   `json:"f"`
	Process    int    `json:"process"`
	Time       int64  `json:"time"`
	Key        string `json:"key,omitempty"`
	Token      string `json:"token,omitempty"`
	Fence      int64  `json:"fence,omitempty"` // 0 for none
	ValidUntil int64  `json:"valid_until,omitempty"`
	// Nodes is the per-node evidence on the completion of an acquire,
	// release or extend. Nil is "not reported", never "no node granted".
	Nodes  *Nodes `json:"nodes,omitempty"`
	Node   *int   `json:"node,omitempty"`
	Read   *int64 `json:"read,omitempty"`
	Wrote  *int64 `json:"wrote,omitempty"`
	Value  string `json:"value,omitempty"`
	Family string `json:"family,omitempty"` // nemesis.Kind.Family; "" in older histories
	Error  string `json:"error,omitempty"`
}

// Nodes is what the nodes answered to one acquire, release or extend
// (locks.Nodes; docs/correctness.md's table says what each list holds).
// Nodes are numbered from 0 in the run's order, as schedule.json numbers
// them (node 0 is n1); a single-instance lock's node is 0. Attempt is 0
// only in a history written by hand.
type Nodes struct {
	Attempt  int   `json:"attempt,omitempty"`
	Granted  []int `json:"granted,omitempty"`
	Refused  []int `json:"refused,omitempty"`
	Silent   []int `json:"silent,omitempty"`
	Unlocked []int `json:"unlocked,omitempty"`
}

// validate checks n on its own: no negative node, no node in two of
// Granted, Refused and Silent (or twice in one), no negative attempt.
func (n *Nodes) validate() error {
	if n.Attempt < 0 {
		return fmt.Errorf("%w: nodes: negative attempt %d", ErrInvalid, n.Attempt)
	}
	seen := map[int]bool{} // small: on the stack
	for _, l := range [][]int{n.Granted, n.Refused, n.Silent} {
		for _, i := range l {
			switch {
			case i < 0:
				return fmt.Errorf("%w: nodes: negative node %d", ErrInvalid, i)
			case seen[i]:
				return fmt.Errorf("%w: nodes: node %d listed twice among granted, refused and silent", ErrInvalid, i)
			}
			seen[i] = true
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
