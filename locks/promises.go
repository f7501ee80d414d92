package locks

import (
	"github.com/locktorture/locktorture/internal/suggest"

	"errors"
	"fmt"
	"slices"
	"strings"
)

// Promises is what a lock says of itself: the design its safety rests
// on, what it assumes of the nodes, the faults it claims to survive. The
// release gate derives from it the cells the lock is tested on, each with
// the expectation the literature gives its class (matrix.Literature). A
// mutant declares what the lock it mutates claims: that is how it fails.
// The zero value is a single instance that promises mutual exclusion
// without faults and nothing more.
type Promises struct {
	// Quorum is the number of independent masters granting by majority
	// (RedLock); 0 is a single instance.
	Quorum int `json:"quorum,omitempty"`
	// ElapsedFromRequest: the validity is counted from before the first
	// request (TTL − elapsed − drift), so a slow reply shortens it.
	ElapsedFromRequest bool `json:"elapsed_from_request,omitempty"`
	// MonotonicClock: the client counts its validity on a monotonic
	// clock. Declared by process clients, which the clock shim can move
	// (the client-clock fault); no fault here reaches Go's time.Now.
	MonotonicClock bool `json:"monotonic_clock,omitempty"`
	// Fences: the lock issues fencing tokens (Config.Fencing).
	Fences bool `json:"fences,omitempty"`
	// FenceSound: every token is greater than every earlier hold's (one
	// counter), so a resource refusing older tokens is safe. Needs Fences.
	FenceSound bool `json:"fence_sound,omitempty"`
	// Extends: Extend renews only while the caller still holds the lease.
	Extends bool `json:"extends,omitempty"`
	// Persistence is what the lock assumes of a restarted node:
	// PersistNone or PersistDelayedRestart.
	Persistence string `json:"persistence,omitempty"`
	// Topologies the lock runs on besides independent masters
	// (cluster.TopologyFailover).
	Topologies []string `json:"topologies,omitempty"`
	// ReportsNodes: the lock reports which nodes granted each call
	// (NodeReporter), so the faults aimed at a hold's nodes (kill-quorum)
	// can strike; without it the gate keeps their random form. A client's
	// hello sets it with "reports_nodes".
	ReportsNodes bool `json:"reports_nodes,omitempty"`
	// Renews: the lock renews its lease by itself (a watchdog), claims no
	// validity, and tells its holder of a loss (Lease.Lost; a client's
	// "lost" event); the hold lasts until released or told. A stopped
	// process is told only once it runs again.
	Renews bool `json:"renews,omitempty"`
	// NoticeInTime: the holder is told of a loss before the key can
	// expire (the renewal gives up within the last validity). Needs
	// Renews. rueidislock's auto-extend fails only at its own new
	// deadline, after the key expired.
	NoticeInTime bool `json:"notice_in_time,omitempty"`
	// ClientToken: the token is fixed per client (Redisson's client id and
	// thread), not per lease; a client that finds its own token in the
	// key holds it again.
	ClientToken bool `json:"client_token,omitempty"`
	// Consensus: granted by a consensus system (etcd's Raft group), a class
	// of its own that the literature expects safe under partitions, kills
	// and restarts, and that takes no Redis-only row. Excludes Quorum.
	Consensus bool `json:"consensus,omitempty"`
	// SafeUnder lists fault kinds (e.g. "kill-immediate") the lock claims
	// to survive beyond its class: the gate then expects them safe.
	// Without fencing no lock keeps "client-pause" (Kleppmann).
	SafeUnder []string `json:"safe_under,omitempty"`
}

// What a lock assumes of restarts (Promises.Persistence).
const (
	// PersistNone: nothing; a restart may forget the lock.
	PersistNone = ""
	// PersistDelayedRestart: a crashed node restarts only after the TTL
	// ran out (the Redis page's rule for RedLock without fsync).
	PersistDelayedRestart = "delayed-restart"
)

// ErrBadPromises: a Promises that contradicts itself.
var ErrBadPromises = errors.New("locks: bad promises")

// Check refuses promises that contradict themselves, in one line.
func (p Promises) Check() error {
	switch {
	case p.Quorum < 0:
		return fmt.Errorf("%w: quorum %d is negative", ErrBadPromises, p.Quorum)
	case p.Quorum == 1 || p.Quorum == 2:
		return fmt.Errorf("%w: a quorum of %d nodes survives no failure; use 0 (one instance) or at least 3", ErrBadPromises, p.Quorum)
	case p.Consensus && p.Quorum > 0:
		return fmt.Errorf("%w: consensus and a quorum of Redis masters", ErrBadPromises)
	case p.FenceSound && !p.Fences:
		return fmt.Errorf("%w: fence_sound without fences", ErrBadPromises)
	case p.NoticeInTime && !p.Renews:
		return fmt.Errorf("%w: notice_in_time without renews", ErrBadPromises)
	case p.Persistence != PersistNone && p.Persistence != PersistDelayedRestart:
		return fmt.Errorf("%w: persistence %q (want %q or none)", ErrBadPromises, p.Persistence, PersistDelayedRestart)
	}
	return nil
}

// Traits are the promises as words, which the literature table's rows
// select locks by (matrix.Expectation.When): "consensus", "single" or
// "quorum", a word per boolean promise, "persist:" + Persistence,
// "topology:" + each Topology, "safe-under:" + each SafeUnder. The gate
// never looks at a promise by name.
func (p Promises) Traits() []string {
	var t []string
	if p.Consensus {
		t = append(t, "consensus")
	} else if p.Quorum > 0 {
		t = append(t, "quorum")
	} else {
		t = append(t, "single")
	}
	t = appendWords(t, word{p.ElapsedFromRequest, "elapsed"}, word{p.MonotonicClock, "monotonic"}, word{p.Fences, "fences"},
		word{p.FenceSound, "fence-sound"}, word{p.Extends, "extends"}, word{p.ReportsNodes, "reports"}, word{p.Renews, "renews"},
		word{p.NoticeInTime, "notice-in-time"}, word{p.ClientToken, "client-token"})
	if p.Persistence != PersistNone {
		t = append(t, "persist:"+p.Persistence)
	}
	for _, s := range p.Topologies {
		t = append(t, "topology:"+s)
	}
	for _, s := range p.SafeUnder {
		t = append(t, "safe-under:"+s)
	}
	return t
}

// Satisfies reports whether the promises meet when (see Match).
func (p Promises) Satisfies(when string) bool { return Match(p.Traits(), when) }

// Match reports whether traits meet when: "|"-separated alternatives,
// each a space-separated list of traits that must all be present (absent
// with a leading "!"). An empty when, or "*", selects everything.
func Match(traits []string, when string) bool {
	if strings.TrimSpace(when) == "*" {
		return true
	}
	for alt := range strings.SplitSeq(when, "|") {
		if matchAll(traits, alt) {
			return true
		}
	}
	return false
}

func matchAll(traits []string, when string) bool {
	for _, w := range strings.Fields(when) {
		if neg, ok := strings.CutPrefix(w, "!"); ok {
			if slices.Contains(traits, neg) {
				return false
			}
		} else if !slices.Contains(traits, w) {
			return false
		}
	}
	return true
}

// String renders the promises as their traits.
func (p Promises) String() string { return strings.Join(p.Traits(), " ") }

// What the mutants claim: their lock's promises, less the fencing.
var (
	mutantOfSetNX   = &Promises{ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart}
	mutantOfRedLock = &Promises{Quorum: 5, ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true}
)

// checkPromises refuses a Spec whose promises contradict themselves or
// the Spec.
func checkPromises(s Spec) error {
	p := s.Promises
	if p == nil {
		return nil
	}
	if err := p.Check(); err != nil {
		return fmt.Errorf("%w: %q: %w", ErrBadSpec, s.Name, err)
	}
	switch {
	case p.Fences && !s.Fencing:
		return fmt.Errorf("%w: %q promises fencing tokens but its Spec has no Fencing", ErrBadSpec, s.Name)
	case p.Quorum > 0 && !s.MultiNode:
		return fmt.Errorf("%w: %q promises a quorum of %d but its Spec is not MultiNode", ErrBadSpec, s.Name, p.Quorum)
	}
	return nil
}

// PromiseNames are the names Promises.Topologies and SafeUnder may hold:
// the cluster's topologies and the literature table's row names (after
// the last "/"), which this package does not know; the caller passes them
// (WithKnownNames).
type PromiseNames struct {
	Topologies []string
	SafeUnder  []string
}

// CheckNames refuses, in one line, a name in p's Topologies or SafeUnder
// that known does not hold, with the closest known name: a misspelt name
// would match no row and be dropped without a word.
func (p Promises) CheckNames(known PromiseNames) error {
	for _, f := range []struct {
		field       string
		names, want []string
	}{{"topologies", p.Topologies, known.Topologies}, {"safe_under", p.SafeUnder, known.SafeUnder}} {
		for _, name := range f.names {
			if slices.Contains(f.want, name) {
				continue
			}
			if near := suggest.Closest(name, f.want); near != "" {
				return fmt.Errorf("%w: %s names %q, which is none of the known names (did you mean %q?)", ErrBadPromises, f.field, name, near)
			}
			return fmt.Errorf("%w: %s names %q, which is none of the known names (%s)", ErrBadPromises, f.field, name, strings.Join(f.want, ", "))
		}
	}
	return nil
}

// PromisesOption configures DeclaredPromises.
type PromisesOption func(*promisesOptions)

type promisesOptions struct {
	known *PromiseNames
}

// WithKnownNames makes DeclaredPromises check names (Promises.CheckNames);
// by default none is checked.
func WithKnownNames(known PromiseNames) PromisesOption {
	return func(o *promisesOptions) { o.known = &known }
}

// DeclaredPromises returns s.Promises, or, for an ExecSpec lock without
// them, its client's hello's (ClientInfo.Promises), read from one process
// started with an address it must not connect to before a request.
// ErrNoPromises when it declares nothing; with WithKnownNames,
// ErrBadPromises for an unknown name, saying whether the Spec or the
// hello named it.
func DeclaredPromises(s Spec, opts ...PromisesOption) (Promises, error) {
	var o promisesOptions
	for _, opt := range opts {
		opt(&o)
	}
	if s.Promises != nil {
		if err := checkPromises(s); err != nil {
			return *s.Promises, err
		}
		if o.known != nil {
			if err := s.Promises.CheckNames(*o.known); err != nil {
				return *s.Promises, fmt.Errorf("%w: %q: %w", ErrBadSpec, s.Name, err)
			}
		}
		return *s.Promises, nil
	}
	if !strings.HasPrefix(s.Name, ExecPrefix) {
		return Promises{}, fmt.Errorf("%w: %q", ErrNoPromises, s.Name)
	}
	l, err := s.New(Config{Addrs: []string{"127.0.0.1:1"}})
	if err != nil {
		return Promises{}, fmt.Errorf("%s: reading its promises from its hello: %w", s.Name, err)
	}
	defer l.Close()
	pl, ok := l.(*ProcessLock)
	if !ok || pl.Info().Promises == nil {
		return Promises{}, fmt.Errorf("%w: %q (its client's hello has no \"promises\"; see locks/clients/PROTOCOL.md)", ErrNoPromises, s.Name)
	}
	p := *pl.Info().Promises
	p.ReportsNodes = p.ReportsNodes || pl.ReportsNodes()
	if o.known != nil {
		if err := p.CheckNames(*o.known); err != nil {
			return p, fmt.Errorf("%s: the promises of its client's hello: %w", s.Name, err)
		}
	}
	s.Promises = &p
	return p, checkPromises(s)
}

// ErrNoPromises: neither Spec.Promises nor the client's hello declares any.
var ErrNoPromises = errors.New("locks: the lock declares no promises")
