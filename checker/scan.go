package checker

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// Hold is one interval in which a client believed it held a key (see the
// package doc): Process held Key with the lease Token (and Fence, 0 for
// none) from Start, the Time of its acquire's ok, to End ≥ Start, when
// its release was invoked, the lock's loss notice came or its validity
// passed.
type Hold struct {
	Key     string `json:"key"`
	Process int    `json:"process"`
	Token   string `json:"token"`
	Fence   int64  `json:"fence,omitempty"`
	Start   int64  `json:"start"`
	End     int64  `json:"end"`
	// Lost: the lock's loss notice ended the hold, before its validity
	// and before any release.
	Lost bool `json:"lost,omitempty"`
}

// Holds returns every hold in the history, per key, sorted by Start then
// End. An acquire whose validity had passed when it returned ok holds
// nothing; a hold still open at the end of the history ends at its
// validity.
func Holds(events []history.Event) (map[string][]Hold, error) {
	s := newScanner()
	if err := s.addAll(events); err != nil {
		return nil, err
	}
	return s.finish().holds(), nil
}

// holds are the holds of every key that has one.
func (d *scanned) holds() map[string][]Hold {
	out := make(map[string][]Hold, len(d.keys))
	for k, kd := range d.keys {
		if len(kd.holds) > 0 {
			out[k] = kd.holds
		}
	}
	return out
}

// sectionKind is how a section ended.
type sectionKind uint8

const (
	sectionOK      sectionKind = iota // read Read, wrote Read+1
	sectionFail                       // wrote nothing
	sectionUnknown                    // info or unfinished: +0 or +1
)

// section is one critical section, kept small.
type section struct {
	process int
	kind    sectionKind
	call    int64
	ret     int64 // math.MaxInt64 when unfinished
	read    int64 // for sectionOK
	fence   int64
}

// attempt is one acquire: from its invoke to its completion
// (math.MaxInt64 when unfinished).
type attempt struct {
	process   int
	call, ret int64
	ok        bool
	definite  bool // see definite
}

// definite reports whether the completion e of an acquire is an answer
// about the key: granted, or a fail some node answered (one whose
// evidence lists only silent nodes, a timeout on every node, is not). An
// info completion (a timeout, a lost connection) never is.
func definite(e *history.Event) bool {
	switch e.Type {
	case history.Ok:
		return true
	case history.Fail:
		n := e.Nodes
		return n == nil || len(n.Granted)+len(n.Refused) > 0 || len(n.Silent) == 0
	}
	return false
}

// keyData is what the checks need of one key.
type keyData struct {
	holds    []Hold
	sections []section
	attempts []attempt
}

// openOp is what is kept of an invoke until its completion.
type openOp struct {
	idx   int
	f     history.Func
	key   string
	token string
	fence int64
	t     int64
}

// activeHold is a hold whose end is not known yet.
type activeHold struct {
	hold       Hold
	validUntil int64
}

// lastOp is the latest completion of a process, which its next invoke
// cannot precede.
type lastOp struct {
	idx int
	f   history.Func
	typ history.Type
	t   int64
}

// scanner reads a history one event at a time, pairing invokes with
// completions per process, and keeps per key only holds, sections and
// acquire attempts: nothing refers back to the events.
type scanner struct {
	n         int // events seen
	open      map[int]openOp
	prev      map[int]lastOp           // per process
	active    map[string][]*activeHold // per key
	watch     *watch                   // nil unless Stream.Watch
	an        *collector               // nil unless Stream.Analyze
	keys      map[string]*keyData
	windows   faultWindows
	releasing map[int]activeHold // per process: the hold its open release ended
	tallies
}

// tallies are what a scan counts beside the keys' data.
type tallies struct {
	first, last int64
	ops         map[string]map[string]int
	latencies   []int64
	emptyHolds  int
	lateExtends int   // extend oks invoked after the hold's validity
	lossNotices int   // lost events
	maxValidity int64 // the longest validity an acquire ok granted, from its invoke
	maxCall     int64 // the longest an acquire that completed took
	faultEvents int
	cuts        []Cut                         // holds cut short (see Cut)
	errs        map[history.Func]*errorCounts // of failed and unknown acquires and sections
}

func newScanner() *scanner {
	return &scanner{
		open:      make(map[int]openOp),
		prev:      make(map[int]lastOp),
		active:    make(map[string][]*activeHold),
		releasing: make(map[int]activeHold),
		keys:      make(map[string]*keyData),
		tallies: tallies{
			errs:  make(map[history.Func]*errorCounts),
			ops:   make(map[string]map[string]int),
			first: math.MaxInt64,
			last:  math.MinInt64,
		},
	}
}

// entry returns m[k], first storing a new zero V there when k has none.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

func (s *scanner) count(f history.Func, outcome string) {
	if s.ops[string(f)] == nil {
		s.ops[string(f)] = make(map[string]int)
	}
	s.ops[string(f)][outcome]++
}

// addAll adds events, stopping at the first error.
func (s *scanner) addAll(events []history.Event) error {
	for i := range events {
		if err := s.add(&events[i]); err != nil {
			return err
		}
	}
	return nil
}

// add takes the next event of the history.
func (s *scanner) add(e *history.Event) error {
	idx := s.n
	s.n++
	if err := e.Validate(); err != nil {
		return fmt.Errorf("%w: event %d (time %d): %w", ErrMalformed, idx, e.Time, err)
	}
	if e.F == history.NodeKey { // evidence for explanations only
		if s.an != nil {
			s.an.node(e)
		}
		return nil
	}
	s.first = min(s.first, e.Time)
	s.last = max(s.last, e.Time)

	switch {
	case e.F == history.Lost:
		return s.lostNotice(idx, e)
	case e.F == history.FaultStart || e.F == history.FaultStop:
		s.faultEvents++
		s.windows.add(e)
		s.count(e.F, string(e.Type))
		return nil
	case e.Type == history.Invoke:
		return s.invoke(idx, e)
	}
	return s.complete(idx, e)
}

// lostNotice takes e, the idx-th event, a loss notice: the client's
// current hold of the token ends here, if it has not ended yet. A notice
// is no operation: it may come while the client has one open.
func (s *scanner) lostNotice(idx int, e *history.Event) error {
	if i := s.findHold(e.Process, e.Key, e.Token); i >= 0 {
		a := s.active[e.Key][i]
		if e.Time < a.hold.Start { // it would hide the hold (see invoke)
			return malformed(idx, e.Time, "lost notice of process %d on %q at %d is earlier than the grant it ends, at %d: a notice comes after the grant of the hold it ends",
				e.Process, e.Key, e.Time, a.hold.Start)
		}
		s.cut(a, e.Time, CutLost, e)
	}
	s.lossNotices++
	s.count(e.F, string(e.Type))
	s.endHold(e.Process, e.Key, e.Token, e.Time, true)
	if s.an != nil {
		s.an.lost(e)
	}
	return nil
}

// invoke takes e, the idx-th event, an invoke: it opens the process's
// operation; a release's invoke ends the hold it releases.
func (s *scanner) invoke(idx int, e *history.Event) error {
	p := e.Process
	if op, busy := s.open[p]; busy {
		return malformed(idx, e.Time, "process %d invokes %s on %q while its %s invoked at event %d is still open", p, e.F, e.Key, op.f, op.idx)
	}
	if l, ok := s.prev[p]; ok && e.Time < l.t {
		// A release invoked before its own acquire's ok would
		// otherwise end the hold before it began: no hold at all,
		// which could hide an overlap with another client.
		return malformed(idx, e.Time, "process %d invokes %s at %d, earlier than its %s %s at %d (event %d): a process does one thing at a time",
			p, e.F, e.Time, l.f, l.typ, l.t, l.idx)
	}
	s.open[p] = openOp{idx: idx, f: e.F, key: e.Key, token: e.Token, fence: e.Fence, t: e.Time}
	if s.an != nil {
		s.an.procs[p] = true
	}
	if e.F == history.Release {
		delete(s.releasing, p)
		if i := s.findHold(p, e.Key, e.Token); i >= 0 {
			s.releasing[p] = *s.active[e.Key][i]
		}
		s.endHold(p, e.Key, e.Token, e.Time, false)
		if s.an != nil {
			s.an.released(e)
		}
	}
	return nil
}

// complete takes e, the idx-th event, the completion of its process's
// open operation.
func (s *scanner) complete(idx int, e *history.Event) error {
	p := e.Process
	op, ok := s.open[p]
	if !ok {
		return malformed(idx, e.Time, "%s %s of process %d without an open invoke", e.F, e.Type, p)
	}
	if op.f != e.F || op.key != e.Key {
		return malformed(idx, e.Time, "%s %s on %q of process %d completes its %s on %q invoked at event %d", e.F, e.Type, e.Key, p, op.f, op.key, op.idx)
	}
	if e.Time < op.t {
		return malformed(idx, e.Time, "%s %s of process %d is earlier than its invoke at %d (event %d)", e.F, e.Type, p, op.t, op.idx)
	}
	delete(s.open, p)
	s.prev[p] = lastOp{idx: idx, f: e.F, typ: e.Type, t: e.Time}
	s.count(e.F, string(e.Type))
	if e.Type != history.Ok && (e.F == history.Acquire || e.F == history.Section) {
		entry(s.errs, e.F).add(e.Error)
	}
	token := cmp.Or(e.Token, op.token)

	switch e.F {
	case history.Acquire:
		s.acquireDone(idx, e, token, op.t)
	case history.Extend:
		if s.an != nil {
			s.an.extended(e, token, op.t)
		}
		if e.Type == history.Ok {
			s.extendHold(idx, e, token, op.t)
		} else if i := s.findHold(p, e.Key, token); i >= 0 && refused(e) {
			s.cut(s.active[e.Key][i], e.Time, CutExtend, e)
		}
	case history.Release:
		if s.an != nil {
			s.an.releaseDone(e)
		}
		if a, ok := s.releasing[p]; ok && refused(e) {
			s.cut(&a, e.Time, CutRelease, e)
		}
		delete(s.releasing, p)
	case history.Section:
		return s.sectionDone(idx, e, op)
	}
	return nil
}

// acquireDone takes e, the idx-th event, the completion of an acquire of
// token invoked at invoked: an attempt, and with an ok a hold.
func (s *scanner) acquireDone(idx int, e *history.Event, token string, invoked int64) {
	p := e.Process
	kd := entry(s.keys, e.Key)
	kd.attempts = append(kd.attempts, attempt{process: p, call: invoked, ret: e.Time, ok: e.Type == history.Ok, definite: definite(e)})
	s.maxCall = max(s.maxCall, e.Time-invoked)
	if e.Type != history.Ok {
		return
	}
	s.latencies = append(s.latencies, e.Time-invoked)
	s.maxValidity = max(s.maxValidity, e.ValidUntil-invoked)
	if s.watch != nil {
		s.watch.acquired(idx, e, s.active[e.Key])
	}
	if s.an != nil {
		s.an.acquired(p, e, token, invoked)
	}
	// A token fixed per client: the client's earlier hold of it ends here.
	s.endHold(p, e.Key, token, e.Time, false)
	s.grant(Hold{Key: e.Key, Process: p, Token: token, Fence: e.Fence, Start: e.Time}, e.ValidUntil)
}

// grant starts a hold valid until validUntil.
func (s *scanner) grant(h Hold, validUntil int64) {
	s.active[h.Key] = append(s.active[h.Key], &activeHold{hold: h, validUntil: validUntil})
}

// sectionDone takes e, the idx-th event, the completion of section op.
func (s *scanner) sectionDone(idx int, e *history.Event, op openOp) error {
	p := e.Process
	sec := section{process: p, call: op.t, ret: e.Time, fence: op.fence}
	switch e.Type {
	case history.Ok:
		if *e.Wrote != *e.Read+1 {
			return malformed(idx, e.Time, "section ok of process %d read %d but wrote %d, not %d", p, *e.Read, *e.Wrote, *e.Read+1)
		}
		sec.kind, sec.read = sectionOK, *e.Read
		if s.watch != nil {
			s.watch.read(idx, e)
		}
	case history.Fail:
		sec.kind = sectionFail
	default:
		sec.kind = sectionUnknown
	}
	kd := entry(s.keys, e.Key)
	kd.sections = append(kd.sections, sec)
	return nil
}

// findHold returns the index in s.active[key] of process p's latest
// active hold of token (any token when token is empty), or -1: a release
// or an extend acts on the client's current grant of its token.
func (s *scanner) findHold(p int, key, token string) int {
	as := s.active[key]
	for i := len(as) - 1; i >= 0; i-- {
		if a := as[i]; a.hold.Process == p && (token == "" || a.hold.Token == token) {
			return i
		}
	}
	return -1
}

// endHold ends p's hold of token on key at t, or at its validity if that
// came first.
func (s *scanner) endHold(p int, key, token string, t int64, lost bool) {
	i := s.findHold(p, key, token)
	if i < 0 {
		return
	}
	a := s.active[key][i]
	s.active[key] = slices.Delete(s.active[key], i, i+1)
	a.hold.Lost = lost && t < a.validUntil
	s.closeHold(a, min(t, a.validUntil))
}

// extendHold applies e, the idx-th event, an extend ok of token invoked
// at invoked: it moves the hold's validity, or, for a late extend, ends
// the hold at its validity and starts a new one (see the package doc).
func (s *scanner) extendHold(idx int, e *history.Event, token string, invoked int64) {
	p, key := e.Process, e.Key
	i := s.findHold(p, key, token)
	if i < 0 {
		return
	}
	a := s.active[key][i]
	if invoked < a.validUntil {
		a.validUntil = e.ValidUntil
		return
	}
	s.active[key] = slices.Delete(s.active[key], i, i+1)
	s.closeHold(a, a.validUntil)
	if s.watch != nil {
		s.watch.acquired(idx, e, s.active[key])
	}
	s.lateExtends++
	s.grant(Hold{Key: key, Process: p, Token: a.hold.Token, Fence: a.hold.Fence, Start: e.Time}, e.ValidUntil)
}

func (s *scanner) closeHold(a *activeHold, end int64) {
	if end < a.hold.Start {
		s.emptyHolds++
		return
	}
	a.hold.End = end
	kd := entry(s.keys, a.hold.Key)
	kd.holds = append(kd.holds, a.hold)
}

// scanned is the outcome of a scan; first and last are 0 without events.
type scanned struct {
	keys    map[string]*keyData
	events  int
	windows []Window
	tallies
}

// finish ends the scan: open operations become unfinished, open holds end
// at their validity, and every key's holds and sections are sorted.
func (s *scanner) finish() *scanned {
	for _, p := range slices.Sorted(maps.Keys(s.open)) {
		op := s.open[p]
		s.count(op.f, "unfinished")
		switch op.f {
		case history.Acquire:
			kd := entry(s.keys, op.key)
			kd.attempts = append(kd.attempts, attempt{process: p, call: op.t, ret: math.MaxInt64})
		case history.Section:
			kd := entry(s.keys, op.key)
			kd.sections = append(kd.sections, section{process: p, kind: sectionUnknown, call: op.t, ret: math.MaxInt64, fence: op.fence})
		}
	}
	s.open = nil
	s.prev = nil

	for _, as := range s.active {
		for _, a := range as {
			s.closeHold(a, a.validUntil)
		}
	}
	s.active = nil

	for _, kd := range s.keys {
		slices.SortFunc(kd.sections, func(a, b section) int {
			return cmp.Or(cmp.Compare(a.call, b.call), cmp.Compare(a.ret, b.ret), cmp.Compare(a.process, b.process))
		})
		slices.SortFunc(kd.holds, func(a, b Hold) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.Process, b.Process), cmp.Compare(a.Token, b.Token))
		})
	}
	d := &scanned{keys: s.keys, events: s.n, windows: s.windows.finish(s.last), tallies: s.tallies}
	if s.n == 0 {
		d.first, d.last = 0, 0
	}
	return d
}

func (d *scanned) sortedKeys() []string { return slices.Sorted(maps.Keys(d.keys)) }
