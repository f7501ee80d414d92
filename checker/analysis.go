package checker

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/locktorture/locktorture/history"
)

// Analysis is what one pass over a history derives for the report and
// the explanations: the verdicts, per key the leases, the ok sections and
// the node observations, and the pairs of ok sections that lost an
// update. Nothing in it refers back to the events.
type Analysis struct {
	Result Result `json:"result"`
	// Keys holds the evidence of each key.
	Keys map[string]*KeyEvidence `json:"keys"`
	// LostUpdates are, per key whose resource check failed, the first
	// two ok sections that read the same value, earliest first, at most
	// 100.
	LostUpdates []LostUpdate `json:"lost_updates,omitempty"`
	// Observed: the history has node observations (history.NodeKey).
	Observed bool `json:"observed"`
	// Reported: some completion carries per-node evidence.
	Reported bool `json:"reported"`

	d     *scanned         // what the checks kept: holds, sections, attempts
	procs []int            // the clients, sorted
	acqs  []Acquire        // Acquires, once computed
	cons  *[]Contradiction // Contradictions, once computed
}

// KeyEvidence is what a key's leases and nodes did.
type KeyEvidence struct {
	// Nodes are the node observations of the key, by time.
	Nodes []NodeObservation `json:"nodes,omitempty"`
	// leases are the acquires that returned ok, by the time of the ok,
	// kept small (a long history has hundreds of thousands).
	leases []leaseRec
}

// leaseRec is a Lease as kept.
type leaseRec struct {
	token                                      string
	invoked, start, validUntil, released, lost int64
	granted                                    uint64 // the granting nodes 0–63
	process                                    int32
	reported                                   bool // granted was reported
	more                                       *leaseMore
}

// leaseMore is what few leases have.
type leaseMore struct {
	extends []Extend
	big     []int // granting nodes ≥ 64
	release *Extend
}

// Leases returns the key's acquires that returned ok, by the time of the ok.
func (ke *KeyEvidence) Leases() []Lease {
	out := make([]Lease, len(ke.leases))
	for i := range ke.leases {
		out[i] = ke.leases[i].lease()
	}
	return out
}

// extra returns r.more, new when r had none.
func (r *leaseRec) extra() *leaseMore {
	if r.more == nil {
		r.more = &leaseMore{}
	}
	return r.more
}

func (r *leaseRec) lease() Lease {
	l := Lease{Process: int(r.process), Token: r.token, Invoked: r.invoked, Start: r.start, ValidUntil: r.validUntil, Released: r.released, Lost: r.lost}
	if r.reported {
		l.Granted = []int{}
		for i := range 64 {
			if r.granted&(1<<i) != 0 {
				l.Granted = append(l.Granted, i)
			}
		}
	}
	if r.more != nil {
		l.Extends = r.more.extends
		l.Granted = append(l.Granted, r.more.big...)
		l.Release = r.more.release
	}
	return l
}

// Lease is one acquire that returned ok and what became of it: invoked
// at Invoked, granted at Start by the nodes Granted (nil when not
// reported), valid until ValidUntil, its extends that completed, the
// invoke of its release and its first loss notice (0 for none), and its
// release's completion (nil when none; its Invoked is Released).
type Lease struct {
	Process    int      `json:"process"`
	Token      string   `json:"token"`
	Invoked    int64    `json:"invoked"`
	Start      int64    `json:"start"`
	ValidUntil int64    `json:"valid_until"`
	Granted    []int    `json:"granted"`
	Extends    []Extend `json:"extends,omitempty"`
	Released   int64    `json:"released,omitempty"`
	Lost       int64    `json:"lost,omitempty"`
	Release    *Extend  `json:"release,omitempty"`
}

// Extend is one completed extend of a lease.
type Extend struct {
	Invoked    int64        `json:"invoked"`
	Completed  int64        `json:"completed"`
	Type       history.Type `json:"type"`
	ValidUntil int64        `json:"valid_until,omitempty"`
	Granted    []int        `json:"granted,omitempty"`
}

// OKSection is a critical section that returned ok.
type OKSection struct {
	Process int    `json:"process"`
	Token   string `json:"token"`
	Call    int64  `json:"call"`
	Return  int64  `json:"return"`
	Read    int64  `json:"read"`
}

// NodeObservation is one history.NodeKey event of a key.
type NodeObservation struct {
	Time  int64  `json:"time"`
	Node  int    `json:"node"`
	Event string `json:"event"`
}

// LostUpdate is two ok sections of one key that read the same value.
type LostUpdate struct {
	Key string `json:"key"`
	// A completed first, B second; At is B's return.
	A, B OKSection `json:"-"`
	At   int64     `json:"at"`
	a, b section
}

// Lease returns the lease of key with token, and whether there is one.
func (a *Analysis) Lease(key, token string) (Lease, bool) {
	return a.LeaseAt(key, token, math.MinInt64)
}

// LeaseAt returns the lease of key with token current at time t: the
// latest granted at or before t, else the first; and whether there is
// one. A token fixed per client is granted many times: a hold's lease is
// LeaseAt(key, token, hold.Start), a section's LeaseAt(key, token,
// section.Call).
func (a *Analysis) LeaseAt(key, token string, t int64) (Lease, bool) {
	ke := a.Keys[key]
	if ke == nil {
		return Lease{}, false
	}
	found := -1
	for i := range ke.leases {
		if ke.leases[i].token != token {
			continue
		}
		if found < 0 || ke.leases[i].start <= t {
			found = i
		}
		if ke.leases[i].start > t {
			break
		}
	}
	if found < 0 {
		return Lease{}, false
	}
	return ke.leases[found].lease(), true
}

// keyData is what the checks kept of every key; nil when nothing was
// analysed.
func (a *Analysis) keyData() map[string]*keyData {
	if a.d == nil {
		return nil
	}
	return a.d.keys
}

// key is what the checks kept of key k, nil for none.
func (a *Analysis) key(k string) *keyData { return a.keyData()[k] }

// Sections returns the ok critical sections of key, by call.
func (a *Analysis) Sections(key string) []OKSection {
	kd := a.key(key)
	if kd == nil {
		return nil
	}
	var out []OKSection
	for _, s := range kd.sections {
		if s.kind == sectionOK {
			out = append(out, a.okSection(key, s))
		}
	}
	return out
}

// okSection is s with the token of the last lease of its process on key
// granted before the section began (the lease it runs in).
func (a *Analysis) okSection(key string, s section) OKSection {
	o := OKSection{Process: s.process, Call: s.call, Return: s.ret, Read: s.read}
	if r := a.Keys[key].latest(s.process, "", s.call); r != nil {
		o.Token = r.token
	}
	return o
}

// latest returns the latest lease of ke granted to process p (of token,
// unless it is "") at or before t, or nil.
func (ke *KeyEvidence) latest(p int, token string, t int64) *leaseRec {
	if ke == nil {
		return nil
	}
	for i := len(ke.leases) - 1; i >= 0; i-- {
		if r := &ke.leases[i]; int(r.process) == p && (token == "" || r.token == token) && r.start <= t {
			return r
		}
	}
	return nil
}

// Analyze checks events and derives their Analysis in the same pass.
func Analyze(events []history.Event, opts Options) (Analysis, error) {
	a, _, err := analyze(events, nil, true, opts)
	return a, err
}

// AnalyzeDecoder is Analyze on the history d reads, streamed (see
// CheckDecoder).
func AnalyzeDecoder(d *history.Decoder, opts Options) (Analysis, int, error) {
	return analyze(nil, d, true, opts)
}

// analyze checks events, then what d reads when d is not nil, on a new
// Stream (that Analyzes when full), and returns the number of events.
func analyze(events []history.Event, d *history.Decoder, full bool, opts Options) (Analysis, int, error) {
	st := NewStream()
	if full {
		st.Analyze()
	}
	err := st.s.addAll(events)
	if err == nil && d != nil {
		err = st.addDecoded(d)
	}
	n := st.Events()
	if err != nil {
		return Analysis{}, n, err
	}
	a, err := st.FinishAnalysis(opts)
	return a, n, err
}

// Analyze makes the stream collect, besides what the checks need, what
// an Analysis holds. Call it before the first Add.
func (st *Stream) Analyze() {
	if st.s != nil && st.s.an == nil {
		st.s.an = newCollector()
	}
}

// FinishAnalysis is Finish, with the Analysis of a stream that Analyzed
// (else only its Result).
func (st *Stream) FinishAnalysis(opts Options) (Analysis, error) {
	var an *collector
	if st.s != nil {
		an = st.s.an
	}
	r, d, err := st.finish(opts)
	if err != nil {
		return Analysis{}, err
	}
	if an == nil {
		return Analysis{Result: r}, nil
	}
	a := an.analysis(r, d)
	judgeAnswers(&a)
	judgeSplitVotes(&a, opts.SplitVoteBound)
	return a, nil
}

// Collect derives from events what Analyze does, except the verdicts
// (Result is zero), and accepts a history without events: for drawing a
// history (package report's plots).
func Collect(events []history.Event) (Analysis, error) {
	s := newScanner()
	s.an = newCollector()
	if err := s.addAll(events); err != nil {
		return Analysis{}, err
	}
	an := s.an
	d := s.finish()
	return an.analysis(Result{Stats: Stats{FaultWindows: d.windows, Start: d.first, End: d.last}}, d), nil
}

// analysis builds the Analysis of the scanned d with the check's r.
func (an *collector) analysis(r Result, d *scanned) Analysis {
	a := Analysis{Result: r, Keys: an.keys, Observed: an.observed, Reported: an.reported, d: d}
	a.procs = slices.Sorted(maps.Keys(an.procs))
	for _, ke := range an.keys {
		slices.SortStableFunc(ke.leases, func(x, y leaseRec) int { return cmp.Compare(x.start, y.start) })
		slices.SortStableFunc(ke.Nodes, func(x, y NodeObservation) int { return cmp.Compare(x.Time, y.Time) })
	}
	for _, k := range r.ResourceFailedKeys {
		if lu, ok := lostUpdate(k, d.keys[k].sections); ok {
			lu.A, lu.B = a.okSection(k, lu.a), a.okSection(k, lu.b)
			a.LostUpdates = append(a.LostUpdates, lu)
		}
	}
	slices.SortFunc(a.LostUpdates, func(x, y LostUpdate) int { return cmp.Compare(x.At, y.At) })
	a.LostUpdates = a.LostUpdates[:min(len(a.LostUpdates), maxReportedOverlaps)]
	return a
}

// Span returns the times of the first and last event that is not a node
// observation, and whether there is one.
func (a *Analysis) Span() (first, last int64, ok bool) {
	if a.d == nil || a.d.first > a.d.last || (a.d.events == 0) {
		return 0, 0, false
	}
	return a.d.first, a.d.last, true
}

// Processes returns the clients of the history, sorted.
func (a *Analysis) Processes() []int { return a.procs }

// Holds returns every hold per key, as Holds does.
func (a *Analysis) Holds() map[string][]Hold {
	if a.d == nil {
		return map[string][]Hold{}
	}
	return a.d.holds()
}

// Acquire is one completed acquire: its return, latency and success.
type Acquire struct {
	Return, Latency int64
	OK              bool
}

// Acquires returns every acquire that completed, by return time. The
// slice is computed once and shared: do not modify it.
func (a *Analysis) Acquires() []Acquire {
	if a.d == nil || a.acqs != nil {
		return a.acqs
	}
	out := []Acquire{}
	for _, kd := range a.d.keys {
		for _, at := range kd.attempts {
			if at.ret != math.MaxInt64 {
				out = append(out, Acquire{Return: at.ret, Latency: at.ret - at.call, OK: at.ok})
			}
		}
	}
	slices.SortFunc(out, func(x, y Acquire) int { return cmp.Compare(x.Return, y.Return) })
	a.acqs = out
	return out
}

// Attempt is one acquire of a key: the client, its invoke, its completion
// (math.MaxInt64 when it never completed), whether it returned ok, and
// whether it got an answer about the key (granted, or refused by a node
// that answered; a timeout is not one).
type Attempt struct {
	Process      int
	Call, Return int64
	OK, Definite bool
}

// Attempts returns every acquire of key, in the order they completed
// (those that never did last).
func (a *Analysis) Attempts(key string) []Attempt {
	kd := a.key(key)
	if kd == nil {
		return nil
	}
	out := make([]Attempt, len(kd.attempts))
	for i, at := range kd.attempts {
		out[i] = Attempt{Process: at.process, Call: at.call, Return: at.ret, OK: at.ok, Definite: at.definite}
	}
	return out
}

// BusiestKey returns the key with the most acquires and sections (the
// smallest such name), "" for none.
func (a *Analysis) BusiestKey() string {
	best, n := "", -1
	for k, kd := range a.keyData() {
		m := len(kd.attempts) + len(kd.sections)
		if m > n || (m == n && k < best) {
			best, n = k, m
		}
	}
	return best
}

// Visualize is the package's Visualize on the analysed history.
func (a *Analysis) Visualize(w io.Writer, key, which string, opts Options) error {
	if a.d == nil {
		return fmt.Errorf("checker: visualize: nothing analysed")
	}
	return visualize(w, a.d, key, which, opts)
}

// lostUpdate finds, among a key's ok sections, the first (by return)
// that read a value an earlier-returned one read; as firstLostUpdate.
func lostUpdate(key string, secs []section) (LostUpdate, bool) {
	var oks []section
	for _, s := range secs {
		if s.kind == sectionOK {
			oks = append(oks, s)
		}
	}
	slices.SortStableFunc(oks, func(a, b section) int { return cmp.Compare(a.ret, b.ret) })
	seen := make(map[int64]int, len(oks))
	for i, s := range oks {
		if j, ok := seen[s.read]; ok {
			return LostUpdate{Key: key, a: oks[j], b: s, At: s.ret}, true
		}
		seen[s.read] = i
	}
	return LostUpdate{}, false
}

// collector is the scanner's part of Stream.Analyze.
type collector struct {
	keys      map[string]*KeyEvidence
	releasing map[int]leaseRef // per process: the lease its open release gives up
	open      map[string]int   // key + "\x00" + token → index in Leases, until its release
	procs     map[int]bool
	observed  bool
	reported  bool
}

func newCollector() *collector {
	return &collector{keys: make(map[string]*KeyEvidence), releasing: make(map[int]leaseRef), open: make(map[string]int), procs: make(map[int]bool)}
}

// leaseRef names a lease kept: its key and index in the key's leases.
type leaseRef struct {
	key string
	i   int
}

func (c *collector) lease(key, token string) *leaseRec {
	i, ok := c.open[key+"\x00"+token]
	if !ok {
		return nil
	}
	return &c.keys[key].leases[i]
}

func granted(n *history.Nodes) []int {
	if n == nil {
		return nil
	}
	if n.Granted == nil {
		return []int{}
	}
	return slices.Clone(n.Granted)
}

// node takes a history.NodeKey event.
func (c *collector) node(e *history.Event) {
	c.observed = true
	ke := entry(c.keys, e.Key)
	ke.Nodes = append(ke.Nodes, NodeObservation{Time: e.Time, Node: *e.Node, Event: e.Value})
}

// acquired takes an acquire ok invoked at invoked.
func (c *collector) acquired(p int, e *history.Event, token string, invoked int64) {
	c.reported = c.reported || e.Nodes != nil
	ke := entry(c.keys, e.Key)
	c.open[e.Key+"\x00"+token] = len(ke.leases)
	r := leaseRec{token: token, invoked: invoked, start: e.Time, validUntil: e.ValidUntil, process: int32(p), reported: e.Nodes != nil}
	if e.Nodes != nil {
		for _, n := range e.Nodes.Granted {
			if n < 64 {
				r.granted |= 1 << n
				continue
			}
			r.extra().big = append(r.extra().big, n)
		}
	}
	ke.leases = append(ke.leases, r)
}

// extended takes an extend's completion.
func (c *collector) extended(e *history.Event, token string, invoked int64) {
	c.reported = c.reported || e.Nodes != nil
	if l := c.lease(e.Key, token); l != nil {
		l.extra().extends = append(l.extra().extends, Extend{Invoked: invoked, Completed: e.Time, Type: e.Type, ValidUntil: e.ValidUntil, Granted: granted(e.Nodes)})
	}
}

// released takes a release's invoke.
func (c *collector) released(e *history.Event) {
	delete(c.releasing, e.Process)
	if l := c.lease(e.Key, e.Token); l != nil && l.released == 0 {
		c.releasing[e.Process] = leaseRef{e.Key, c.open[e.Key+"\x00"+e.Token]}
		l.released = max(e.Time, 1)
		delete(c.open, e.Key+"\x00"+e.Token) // a lease does nothing after its release
	}
}

// releaseDone takes a release's completion.
func (c *collector) releaseDone(e *history.Event) {
	c.reported = c.reported || e.Nodes != nil
	ref, ok := c.releasing[e.Process]
	delete(c.releasing, e.Process)
	if !ok {
		return
	}
	l := &c.keys[ref.key].leases[ref.i]
	l.extra().release = &Extend{Invoked: l.released, Completed: e.Time, Type: e.Type, Granted: granted(e.Nodes)}
}

// lost takes a loss notice of the latest lease of its key and token
// granted to its process by then (even released: a hand-written history
// may show that); only the first counts.
func (c *collector) lost(e *history.Event) {
	if r := c.keys[e.Key].latest(e.Process, e.Token, e.Time); r != nil && r.lost == 0 {
		r.lost = max(e.Time, 1)
	}
}
