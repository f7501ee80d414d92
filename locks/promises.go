package locks

import (
	"github.com/locktorture/locktorture/internal/suggest"

	"errors"
	"fmt"
	"slices"
	"strings"
)

// Promises is what a lock says of itself, beside its registration: the
// design its safety rests on, what it assumes of the nodes, and the faults
// it claims to survive. The release gate (package gate) derives from it
// the cells the lock is tested on, each with the expectation the
// literature gives a lock of its class (matrix.Literature); a lock fails
// its gate when it breaks a promise it declared. A mutant declares what
// the lock it mutates claims: that is how it fails.
//
// The zero value is a single-instance lock that promises mutual exclusion
// without faults and nothing more.
type Promises struct {
	// Quorum is the number of independent masters the lock acquires on,
	// granting with a majority of them (RedLock); 0 is a single instance.
	Quorum int `json:"quorum,omitempty"`
	// ElapsedFromRequest: the validity the lock reports is counted from
	// before its first request (TTL − elapsed − drift), so a slow reply
	// shortens it instead of stretching it past the key's expiry.
	ElapsedFromRequest bool `json:"elapsed_from_request,omitempty"`
	// MonotonicClock: the client counts its validity on a monotonic
	// clock, which a jump of its wall clock does not move. Declared by
	// the locks whose clients the clock shim can move (process clients,
	// Spec.Process), so that the client-clock fault can test it; Go's
	// time.Now carries a monotonic reading, but no fault here reaches it.
	MonotonicClock bool `json:"monotonic_clock,omitempty"`
	// Fences: the lock issues fencing tokens (Config.Fencing).
	Fences bool `json:"fences,omitempty"`
	// FenceSound: every token is greater than the token of every hold
	// granted before it (one counter), so a resource that refuses older
	// tokens is safe whatever the holders do. Needs Fences.
	FenceSound bool `json:"fence_sound,omitempty"`
	// Extends: Extend renews the lease only while the caller still holds
	// it.
	Extends bool `json:"extends,omitempty"`
	// Persistence is what the lock assumes of a node that restarts:
	// PersistNone (nothing: a restart may forget its keys) or
	// PersistDelayedRestart (a restarted node stays down longer than the
	// TTL, the Redis documentation's rule for RedLock without fsync).
	Persistence string `json:"persistence,omitempty"`
	// Topologies are the topologies the lock runs on besides independent
	// masters (cluster.TopologyFailover: a primary and a replica behind
	// Sentinel, which the lock follows).
	Topologies []string `json:"topologies,omitempty"`
	// ReportsNodes: the lock reports which nodes granted each call
	// (NodeReporter), so the targeted faults that aim at the nodes of a
	// hold (kill-quorum: one node of a hold a bare majority granted) can
	// aim at it; without it they would never strike, and the gate keeps
	// the random form of those faults. A client process's hello
	// sets it with "reports_nodes".
	ReportsNodes bool `json:"reports_nodes,omitempty"`
	// Renews: the lock renews its lease by itself while it is held (a
	// watchdog: Redisson's, rueidislock's auto-extend), so its holder may
	// hold past the TTL, claims no validity, and is told when the lock
	// lost the lease (Lease.Lost; a client process's "lost" event). Its
	// hold lasts until it is released or its holder is told: a correct
	// watchdog tells before the key can expire when its renewals fail,
	// and a stopped process is told only once it runs again.
	Renews bool `json:"renews,omitempty"`
	// NoticeInTime: a lock that renews itself tells its holder of a loss
	// before the key can expire (its renewal gives up within the lease's
	// last validity), so no one else is granted the key while the holder
	// still counts on it. Needs Renews. rueidislock's auto-extend, by
	// contrast, fails only at its own new deadline, after the key expired.
	NoticeInTime bool `json:"notice_in_time,omitempty"`
	// ClientToken: the lock's token is fixed per client (Redisson's is
	// its client id and thread; a user's may be a host name), the same on
	// every acquire of that client, not one per lease; a client that
	// finds the key holding its own token holds it again.
	ClientToken bool `json:"client_token,omitempty"`
	// Consensus: the lock is granted by a consensus system (one Raft
	// group: etcd), not by Redis nodes: its own class ("consensus",
	// instead of "single" or "quorum"), which the literature expects
	// safe under partitions, kills and restarts of its members, and
	// which takes no Redis-only row. Excludes Quorum.
	Consensus bool `json:"consensus,omitempty"`
	// SafeUnder lists fault kinds (cell names after the lock's, e.g.
	// "client-pause", "kill-immediate") the lock claims to survive beyond
	// what its class survives: the gate then expects them safe. Without
	// fencing no lock keeps "client-pause" (Kleppmann); a lock that claims
	// it is shown wrong.
	SafeUnder []string `json:"safe_under,omitempty"`
}

// What a lock assumes of restarts (Promises.Persistence).
const (
	// PersistNone: the lock assumes nothing; a node restarted without
	// persistence may forget the lock.
	PersistNone = ""
	// PersistDelayedRestart: a crashed node is restarted only after the
	// TTL has run out, so every lock it granted has expired anyway.
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
// select locks by (matrix.Expectation.When): "consensus", "single" or "quorum",
// "elapsed", "monotonic", "fences", "fence-sound", "extends", "reports",
// "renews", "notice-in-time", "client-token", "persist:" + Persistence,
// "topology:" + each of Topologies, "safe-under:" + each of SafeUnder.
// A new promise is a new word here; the table selects by words, and the
// gate never looks at a promise by name.
func (p Promises) Traits() []string {
	var t []string
	if p.Consensus {
		t = append(t, "consensus")
	} else if p.Quorum > 0 {
		t = append(t, "quorum")
	} else {
		t = append(t, "single")
	}
	for _, b := range []struct {
		on   bool
		word string
	}{{p.ElapsedFromRequest, "elapsed"}, {p.MonotonicClock, "monotonic"}, {p.Fences, "fences"}, {p.FenceSound, "fence-sound"}, {p.Extends, "extends"}, {p.ReportsNodes, "reports"}, {p.Renews, "renews"}, {p.NoticeInTime, "notice-in-time"}, {p.ClientToken, "client-token"}} {
		if b.on {
			t = append(t, b.word)
		}
	}
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

// Match reports whether traits meet when: alternatives separated by "|",
// each a space-separated list of traits that must all be present, or
// absent when written with a leading "!". An empty when, or "*", selects
// everything.
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

// What the mutants claim: the promises of the lock each mutates, less the
// fencing their Spec does not offer. A mutant breaks one of them.
var (
	mutantOfSetNX   = &Promises{ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart}
	mutantOfRedLock = &Promises{Quorum: 5, ElapsedFromRequest: true, Extends: true, Persistence: PersistDelayedRestart, ReportsNodes: true}
)

// checkPromises refuses a Spec whose promises contradict themselves or
// what the Spec offers: fencing tokens it cannot issue, a quorum of one
// node.
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

// PromiseNames are the names that a lock's promises may use for its
// topologies and the faults it claims to survive. This package knows
// neither: the topologies are the cluster's (cluster.TopologyFailover),
// the faults the names of the literature table's rows (matrix.Literature:
// "client-pause", "kill-immediate", the part of a row's name after its
// last "/"). The caller that derives cells from promises passes them
// (WithKnownNames).
type PromiseNames struct {
	// Topologies are the names Promises.Topologies may hold.
	Topologies []string
	// SafeUnder are the names Promises.SafeUnder may hold.
	SafeUnder []string
}

// CheckNames refuses, in one line, a name in p's Topologies or SafeUnder
// that known does not hold, saying which known name is closest when one
// is close: a misspelt name would otherwise match no row, and what the
// lock declares would be dropped without a word.
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

// WithKnownNames makes DeclaredPromises refuse promises that name a
// topology or a fault known does not hold (Promises.CheckNames). By
// default no name is checked.
func WithKnownNames(known PromiseNames) PromisesOption {
	return func(o *promisesOptions) { o.known = &known }
}

// DeclaredPromises returns what the lock s declares: s.Promises, or, for a
// lock that declares none in its Spec and is served by client processes
// (ExecSpec), what its client says in its hello (ClientInfo.Promises), read
// from one process started for the purpose with an address it must not
// connect to before a request. A lock that declares nothing is refused
// with ErrNoPromises; with WithKnownNames, one whose promises name an
// unknown topology or fault with ErrBadPromises, saying whose fault it is
// (the Spec's, or the client's hello).
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

// ErrNoPromises: the lock declares no promises (Spec.Promises, or for a
// client process the "promises" of its hello).
var ErrNoPromises = errors.New("locks: the lock declares no promises")
