package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Setup describes the run a nemesis will act on, for a kind to refuse
// what it cannot do and to draw the parameters of its faults.
type Setup struct {
	// Lock is the registry name of the lock under test; MultiNode says
	// whether it talks to every node (RedLock) or one.
	Lock      string
	MultiNode bool
	// Nodes is the number of Redis nodes; Groups the number of client
	// groups, each reaching the nodes through its own proxies.
	Nodes  int
	Groups int
	// TTL is the lock's time to live.
	TTL time.Duration
	// Backend runs the nodes: "process" (redis-server processes),
	// "docker" (containers) or "external" (nodes someone else runs, which
	// no process or clock fault can reach; see refuseBackend).
	Backend string
	// Toxiproxy is set when the external backend reaches its nodes through
	// a toxiproxy server, so network faults can act on them. The process
	// and docker backends always run their own proxies.
	Toxiproxy bool
	// Topology is "masters" (independent nodes) or "failover" (a primary,
	// a replica and sentinels).
	Topology string
	// Persistent is set when the nodes run with appendfsync always.
	Persistent bool
	// RestartDelay, when set, is the delay of every delayed restart the
	// kill kind draws; otherwise it draws 1.5×TTL.
	RestartDelay time.Duration
	// ClockShim is set when the nodes run with the clock shim preloaded.
	ClockShim bool
	// Restart says how the kill kind restarts nodes: RestartMixed (either,
	// drawn from the seed; the default), RestartImmediate or
	// RestartDelayed.
	Restart string
}

// The restart modes of the kill kind.
const (
	RestartMixed     = "mixed"
	RestartImmediate = "immediate"
	RestartDelayed   = "delayed"
)

// Target is what faults act on while the run goes.
type Target struct {
	// Cluster holds the nodes and their proxies.
	Cluster *cluster.Cluster
	// Failover is the failover topology (a primary, a replica and
	// sentinels) when Setup.Topology is "failover", else nil; Cluster is
	// then its data nodes, Failover.Cluster().
	Failover *cluster.Failover
	// Clients stalls lock holders; nil when the run offers no such hook.
	Clients ClientStaller
}

// ClientStaller stalls lock-holding clients: the GC-pause scenario.
type ClientStaller interface {
	// Stall makes the next client that passes its last validity check
	// before a resource access wait d before the access. The returned
	// function withdraws a stall that has not begun yet.
	Stall(d time.Duration) (withdraw func())
}

// Fault is one occurrence of a fault kind, with its parameters. Its
// exported fields are its JSON parameters in schedule.json.
type Fault interface {
	// Start injects the fault.
	Start(ctx context.Context, t *Target) error
	// Heal undoes it; after Heal every node is healthy and reachable
	// again. Heal is called once, also when Start failed half way.
	Heal(ctx context.Context, t *Target) error
	// String describes the occurrence for the history, e.g. "kill n2".
	String() string
	// Refuse returns a one-line reason why this occurrence cannot act on
	// s (a node, a client group or a parameter the run does not have),
	// or "" when it can. Load calls it on every step, so a schedule is
	// refused before any node starts.
	Refuse(s Setup) string
}

// Kind is one kind of fault.
type Kind struct {
	// Name selects the kind in --nemesis.
	Name string
	// Summary is a one-line description.
	Summary string
	// Refuse returns a one-line reason why the kind cannot act on s, or
	// "" when it can.
	Refuse func(s Setup) string
	// Plan draws one occurrence from rng.
	Plan func(rng *rand.Rand, s Setup) Fault
	// Decode reads an occurrence from its JSON parameters.
	Decode func(params json.RawMessage) (Fault, error)
}

// kinds lists every kind in a fixed order, so one seed always draws the
// same faults. Each kind lives in its own file.
var kinds []Kind

// register appends k to kinds; called from a package-level var in each
// kind's file and ordered by kindOrder, never by init order.
func register(k Kind) Kind {
	kinds = append(kinds, k)
	return k
}

// kindOrder is the fixed order of the kinds.
var kindOrder = []string{"partition", "latency", "kill", "pause", "clock", "client-pause", "failover"}

// Kinds returns every known kind in a fixed order.
func Kinds() []Kind {
	var out []Kind
	for _, name := range kindOrder {
		for _, k := range kinds {
			if k.Name == name {
				out = append(out, k)
			}
		}
	}
	return out
}

// ErrUnknownKind is returned for a kind name that is not known.
var ErrUnknownKind = errors.New("nemesis: unknown fault kind")

// Lookup returns the kind called name.
func Lookup(name string) (Kind, error) {
	var names []string
	for _, k := range Kinds() {
		if k.Name == name {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return Kind{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownKind, name, strings.Join(names, ", "))
}

// Check looks every name up and asks each kind whether it can act on s;
// the error is one line naming the first kind refused and why.
func Check(names []string, s Setup) ([]Kind, error) {
	var ks []Kind
	for _, n := range names {
		k, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		why := refuseBackend(n, s)
		if why == "" && k.Refuse != nil {
			why = k.Refuse(s)
		}
		if why != "" {
			return nil, fmt.Errorf("nemesis: %s refused: %s", n, why)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// decode is the Decode of a kind whose fault is the struct *T.
func decode[T any, P interface {
	*T
	Fault
}](params json.RawMessage) (Fault, error) {
	var f T
	if len(params) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(params)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("nemesis: %w", err)
		}
	}
	return P(&f), nil
}

// decodeChecked is the Decode of a kind whose fault checks its own
// parameters with fit (the number of nodes unknown: -1).
func decodeChecked[T any, P interface {
	*T
	Fault
	fit(nodes int) error
}](kind string) func(json.RawMessage) (Fault, error) {
	return func(params json.RawMessage) (Fault, error) {
		f, err := decode[T, P](params)
		if err != nil {
			return nil, err
		}
		if err := f.(P).fit(-1); err != nil {
			return nil, fmt.Errorf("nemesis: %s: %w", kind, err)
		}
		return f, nil
	}
}

// pickNodes draws k distinct node indices out of n, sorted.
func pickNodes(rng *rand.Rand, n, k int) []int {
	perm := rng.Perm(n)[:k]
	slices.Sort(perm)
	return perm
}

// nodeNames returns "n1,n3" for indices [0 2].
func nodeNames(idx []int) string {
	s := make([]string, len(idx))
	for i, n := range idx {
		s[i] = fmt.Sprintf("n%d", n+1)
	}
	return strings.Join(s, ",")
}
