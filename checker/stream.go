package checker

import (
	"errors"
	"fmt"
	"time"

	"github.com/locktorture/locktorture/history"
)

// Stream checks a history fed to it one event at a time, keeping only
// what the checks need (about a tenth of the decoded events' size). It is
// not safe for concurrent use.
type Stream struct {
	s   *scanner
	err error
}

// NewStream returns a Stream at the start of a history.
func NewStream() *Stream { return &Stream{s: newScanner()} }

// Add takes the next event, not retained. It returns an error wrapping
// ErrMalformed, naming the event's index and time, when the history is
// malformed (see Check), and again on every later Add and Finish.
func (st *Stream) Add(e *history.Event) error {
	if st.err != nil {
		return st.err
	}
	if st.s == nil {
		return errFinished
	}
	st.err = st.s.add(e)
	return st.err
}

// addDecoded adds every event d reads, up to the first error.
func (st *Stream) addDecoded(d *history.Decoder) error {
	for e, err := range d.All() {
		if err == nil {
			err = st.Add(&e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Watch makes the stream look, as each event is added, for a violation
// the events so far already show (see Violation). Call it before the
// first Add. It is for ending a run at its first violation
// (harness.WithStop, in cmd/bench): events arrive in the order recorded,
// which may differ by microseconds from that of their times, so what it
// sees is a reason to stop, not a verdict. It also keeps the values each
// key's ok sections read.
func (st *Stream) Watch() {
	if st.s != nil && st.s.watch == nil {
		st.s.watch = &watch{reads: make(map[keyRead]bool), of: make(map[string]*Violation)}
	}
}

// FirstViolation returns the first violation a watching stream (see
// Watch) saw, and whether it saw one.
func (st *Stream) FirstViolation() (Violation, bool) {
	if st.s == nil || st.s.watch == nil || st.s.watch.first == nil {
		return Violation{}, false
	}
	return *st.s.watch.first, true
}

// FirstViolationOf returns the first violation of property ("lease" or
// "resource") a watching stream saw, and whether it saw one.
func (st *Stream) FirstViolationOf(property string) (Violation, bool) {
	if st.s == nil || st.s.watch == nil || st.s.watch.of[property] == nil {
		return Violation{}, false
	}
	return *st.s.watch.of[property], true
}

// Violation is what a watching Stream saw as the events were added, on
// Key at the Event-th event, at Time. Property "lease": an acquire ok
// while another hold of the key is open (not released, still valid);
// "resource": a section ok that read a value another ok section of the
// key read (an update was lost).
type Violation struct {
	Property string
	Key      string
	Event    int
	Time     int64
}

// watch is the scanner's part of Stream.Watch.
type watch struct {
	reads map[keyRead]bool // the values each key's ok sections read
	first *Violation
	of    map[string]*Violation // the first of each property
}

type keyRead struct {
	key  string
	read int64
}

// acquired takes an acquire ok, the idx-th event, and its key's open holds.
func (w *watch) acquired(idx int, e *history.Event, open []*activeHold) {
	for _, a := range open {
		if a.validUntil > e.Time {
			w.saw(Violation{Property: "lease", Key: e.Key, Event: idx, Time: e.Time})
			return
		}
	}
}

// read takes a section ok, the idx-th event.
func (w *watch) read(idx int, e *history.Event) {
	k := keyRead{e.Key, *e.Read}
	if w.reads[k] {
		w.saw(Violation{Property: "resource", Key: e.Key, Event: idx, Time: e.Time})
	}
	w.reads[k] = true
}

func (w *watch) saw(v Violation) {
	if w.first == nil {
		w.first = &v
	}
	if w.of[v.Property] == nil {
		w.of[v.Property] = &v
	}
}

// Events returns the number of events added so far.
func (st *Stream) Events() int {
	if st.s == nil {
		return 0
	}
	return st.s.n
}

var errFinished = errors.New("checker: stream already finished")

// Finish ends the history and checks it, exactly as Check would. It
// returns the first error of Add, if any, and an error wrapping
// ErrMalformed when no event was added. A Stream can be finished once.
func (st *Stream) Finish(opts Options) (Result, error) {
	r, _, err := st.finish(opts)
	return r, err
}

// finish is Finish, also returning the scanned data.
func (st *Stream) finish(opts Options) (Result, *scanned, error) {
	if st.err != nil {
		return Result{}, nil, st.err
	}
	if st.s == nil {
		return Result{}, nil, errFinished
	}
	if st.s.n == 0 {
		st.s = nil
		return Result{}, nil, fmt.Errorf("%w: no event: a history without events tests nothing", ErrMalformed)
	}
	start := time.Now()
	d := st.s.finish()
	st.s = nil
	if opts.Timings != nil {
		opts.Timings.Finish = time.Since(start)
	}
	return check(d, opts), d, nil
}

// CheckDecoder checks the history that d reads, streaming it, and returns
// the number of events. Its error is the decoder's, unwrapped (a torn
// last line is skipped, as by history.Read; d.Torn tells), or one
// wrapping ErrMalformed.
func CheckDecoder(d *history.Decoder, opts Options) (Result, int, error) {
	a, n, err := analyze(nil, d, false, opts)
	return a.Result, n, err
}

// Timings are how long each phase of a check took, wall clock (porcupine
// runs on GOMAXPROCS workers). Finish closes open operations and holds
// and sorts (the scan runs in Add); Sweep is the lease sweep and the
// first lost update search; Stats computes Result.Stats and the other
// verdicts.
type Timings struct {
	Finish            time.Duration
	LeasePorcupine    time.Duration
	ResourcePorcupine time.Duration
	Sweep             time.Duration
	Stats             time.Duration
}
