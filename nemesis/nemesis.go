package nemesis

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/suggest"
)

// Setup describes the run a nemesis will act on.
type Setup struct {
	// Lock is the lock's registry name; MultiNode: it talks to every node.
	Lock      string
	MultiNode bool
	// Groups is the number of client groups, each with its own proxies.
	Nodes    int
	Groups   int
	TTL      time.Duration
	Topology string
	// Abilities: a Setup made by hand without them can do nothing to nodes.
	Abilities  cluster.Abilities
	Persistent bool
	// RestartDelay, when set, is the delay of delayed restarts; Restart is
	// RestartMixed (drawn from the seed, the default) or the other two.
	RestartDelay time.Duration
	Restart      string
	// ClientProcesses: the clients are processes of their own. GoClients:
	// the lock is Go, whose time.Now reads the clock without libc, which
	// the clock shim cannot move.
	ClientProcesses bool
	GoClients       bool
	// Compose is the most faults of different kinds a drawn step may hold.
	Compose int
}

// The restart modes of the kill kind.
const (
	RestartMixed     = "mixed"
	RestartImmediate = "immediate"
	RestartDelayed   = "delayed"
)

// Target is what faults act on.
type Target struct {
	Cluster *cluster.Cluster
	// Clients, View and ClientClock are nil when the run offers none.
	Clients     ClientStaller
	View        View
	ClientClock ClockSetter
}

// ClockSetter shifts a wall clock by an offset from the real time.
type ClockSetter interface {
	SetOffset(d time.Duration) error
}

// ClientStaller stalls lock-holding clients.
type ClientStaller interface {
	// Stall makes the next client that passes its last validity check
	// before a resource access wait d before the access. The returned
	// function withdraws a stall that has not begun yet.
	Stall(d time.Duration) (withdraw func())
}

// Fault is one occurrence of a fault kind; its exported fields are its
// parameters in schedule.json.
type Fault interface {
	Start(ctx context.Context, t *Target) error
	// Heal undoes it; after Heal every node is healthy and reachable
	// again. Heal is called once, also when Start failed half way.
	Heal(ctx context.Context, t *Target) error
	// String describes the occurrence for the history, e.g. "kill n2".
	String() string
}

// RefusingFault checks its parameters against a run (Load).
type RefusingFault interface {
	Fault
	// Refuse returns a one-line reason why it cannot act on s, or "".
	Refuse(s Setup) string
}

// LastingFault must stay active longer than a schedule's interval: Plan
// stretches its step to MinActive.
type LastingFault interface {
	Fault
	MinActive() time.Duration
}

// EndingFault may end by itself before its step does (a stopped client
// continued): its stop is recorded when Ended is closed, so its window in
// the history is as long as the fault was; Heal then only reports.
type EndingFault interface {
	Fault
	Ended() <-chan struct{}
}

// background is a fault's goroutine that goes on after Start returns.
type background struct {
	stop chan struct{} // closed by halt
	done chan struct{} // closed when f has returned
	err  error         // f's error; read once done is closed
}

// start runs f in a goroutine; f returns once stop is closed.
func (b *background) start(f func(stop <-chan struct{}) error) {
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.done)
		b.err = f(b.stop)
	}()
}

// halt stops the goroutine and returns its error, once.
func (b *background) halt() error {
	if b.stop == nil {
		return nil
	}
	close(b.stop)
	<-b.done
	b.stop = nil // done stays closed
	return b.err
}

// await waits for c: nil when it delivers, ctx's error when ctx is done
// first, ErrSlewStopped when stop is closed first.
func await(ctx context.Context, stop <-chan struct{}, c <-chan time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return ErrSlewStopped
	case <-c:
		return nil
	}
}

// Kind is one kind of fault.
type Kind struct {
	// Name selects the kind in --nemesis.
	Name string
	// Family is the cause explain names; every fault-start carries it.
	Family string
	// Twin is a targeted kind's random stand-in (cmd/bench).
	Twin    Twin
	Summary string
	Needs   Needs
	Plan    func(rng *rand.Rand, s Setup) Fault
	Decode  func(params json.RawMessage) (Fault, error)
	// Window is the workload a run takes each unset field of: a targeted
	// kind's strike needs holds that last (the default 10 ms holds end
	// before another client can be granted).
	Window Workload
}

// Twin is the kinds a targeted kind's stand-in draws, and its restart
// mode ("" for the run's own).
type Twin struct {
	Kinds   []string
	Restart string
}

// Workload is what a kind asks of a run's workload; zero asks nothing.
type Workload struct {
	Clients  int
	Keys     int
	TTL      time.Duration
	Hold     time.Duration
	Interval time.Duration
	Duration time.Duration
}

// WindowOf merges the Window of the kinds named: each field from the
// first that sets it. Unknown names are skipped.
func WindowOf(names []string) Workload {
	var w Workload
	for _, n := range names {
		k, err := Lookup(n)
		if err != nil {
			continue
		}
		kw := k.Window
		w.Clients, w.Keys, w.TTL = cmp.Or(w.Clients, kw.Clients), cmp.Or(w.Keys, kw.Keys), cmp.Or(w.TTL, kw.TTL)
		w.Hold, w.Interval, w.Duration = cmp.Or(w.Hold, kw.Hold), cmp.Or(w.Interval, kw.Interval), cmp.Or(w.Duration, kw.Duration)
	}
	return w
}

// kinds is every kind, in the order one seed draws from: a new kind is its
// code and one line here.
var kinds = []Kind{
	partitionKind,
	latencyKind,
	killKind,
	pauseKind,
	clockKind,
	clientPauseKind,
	failoverKind,
	killQuorumKind,
	clockHolderKind,
	clockMinorityKind,
	clockMajorityKind,
	pauseHolderKind,
	clockPartitionKind,
	clientCrashKind,
	clientClockKind,
	clockBackSlewKind,
	clockDriftKind,
	delayGrantKind,
	failoverUnreplicatedKind,
	clusterFailoverUnreplicatedKind,
	clusterKillMasterKind,
	clusterPartitionMasterKind,
	clusterMigrateKind,
	latencyGroupKind,
	clientStopKind,
	clientStopRandomKind,
	partitionHolderKind,
	evictKind,
	noevictionKind,
	powerLossKind,
	powerLossHolderKind,
	serverStallKind,
	serverStallHolderKind,
	resetPeerKind,
	limitDataKind,
	slicerKind,
	connDropKind,
	bandwidthKind,
	replicaPartitionKind,
	replicaLatencyKind,
}

// What the kinds' faults can do beyond RefusingFault (decode) or
// aimedFault (decodeAimed), checked by the compiler.
var (
	_ LastingFault = (*Kill)(nil)
	_ LastingFault = (*ClientPause)(nil)
	_ LastingFault = (*ClockBackSlew)(nil)
	_ LastingFault = (*ServerStall)(nil)
	_ EndingFault  = (*ClientStop)(nil)
	_ EndingFault  = (*ClientStopRandom)(nil)
)

func Kinds() []Kind { return slices.Clone(kinds) }

// Needs is what a kind needs of a run.
type Needs struct {
	MultiNode bool
	// Topology: the one topology the kind acts on; "" for any.
	Topology string
	Cluster  cluster.Abilities
	// Groups: the client groups the kind draws its faults for; 0 is one.
	Groups int
	TTL    bool
	// ClientClock: client processes the clock shim can move
	// (Target.ClientClock).
	ClientClock     bool
	ClientProcesses bool
	Persistent      bool
}

var topologies = map[string]string{
	cluster.TopologyMasters:  "independent masters",
	cluster.TopologyFailover: "a primary, a replica and sentinels",
	cluster.TopologyCluster:  "Redis Cluster, masters each with a replica",
}

// refuse returns a one-line reason why s does not meet n, or "".
func (n Needs) refuse(s Setup) string {
	switch {
	case n.MultiNode && !s.MultiNode:
		return fmt.Sprintf("needs a multi-node lock; %s uses one node", s.Lock)
	case n.Topology != "" && s.Topology != n.Topology:
		return fmt.Sprintf("needs topology %s (%s), the run's is %s", n.Topology, topologies[n.Topology], s.Topology)
	case n.TTL && s.TTL <= 0:
		return "needs the TTL, which is unknown"
	case n.Persistent && !s.Persistent:
		return "needs persistent nodes (--appendfsync always or everysec): without persistence a restarted node has nothing on disk to lose (kind kill)"
	case n.ClientClock && (!s.ClientProcesses || s.GoClients):
		return fmt.Sprintf("needs clients that run as processes (the process adapter) so the clock shim can move their wall clock; %s runs in Go, whose time.Now reads the clock without libc", s.Lock)
	case n.ClientProcesses && !s.ClientProcesses:
		return fmt.Sprintf("needs clients that run as processes of their own, so that a whole client can be stopped; %s runs in this process (add --client-process to serve a Go lock in client processes)", s.Lock)
	}
	return s.Abilities.Missing(n.Cluster)
}

// NeedsOf returns what the kinds need together (of two topologies the
// first: Check refuses the other).
func NeedsOf(ks []Kind) Needs {
	var all Needs
	for _, k := range ks {
		n, c := k.Needs, &all.Cluster
		all.MultiNode = all.MultiNode || n.MultiNode
		all.TTL = all.TTL || n.TTL
		all.ClientClock = all.ClientClock || n.ClientClock
		all.ClientProcesses = all.ClientProcesses || n.ClientProcesses
		all.Persistent = all.Persistent || n.Persistent
		c.Process, c.Clock, c.Network = c.Process || n.Cluster.Process, c.Clock || n.Cluster.Clock, c.Network || n.Cluster.Network
		c.PowerLoss, c.Links, c.Redis = c.PowerLoss || n.Cluster.PowerLoss, c.Links || n.Cluster.Links, c.Redis || n.Cluster.Redis
		all.Groups = max(all.Groups, n.Groups)
		all.Topology = cmp.Or(all.Topology, n.Topology)
	}
	return all
}

// ErrUnknownKind is returned for a kind name that is not known.
var ErrUnknownKind = errors.New("nemesis: unknown fault kind")

func Lookup(name string) (Kind, error) {
	var names []string
	for _, k := range kinds {
		if k.Name == name {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return Kind{}, fmt.Errorf("%w %q%s (known: %s)", ErrUnknownKind, name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}

// refusal is a RefusingFault's reason for err, "kind: err", or "" for nil.
func refusal(kind string, err error) string {
	if err == nil {
		return ""
	}
	return kind + ": " + err.Error()
}

// familyOf is the Family of the kind called name, "" for an unknown one.
func familyOf(name string) string {
	k, _ := Lookup(name)
	return k.Family
}

// Check looks every name up and refuses the first kind s does not meet.
func Check(names []string, s Setup) ([]Kind, error) {
	var ks []Kind
	for _, n := range names {
		k, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		if why := k.Needs.refuse(s); why != "" {
			return nil, fmt.Errorf("nemesis: %s refused: %s", n, why)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// faultOf is *T, a kind's fault declared by its struct T, which refuses
// what does not fit a run; aimedOf is a targeted kind's.
type faultOf[T any] interface {
	*T
	RefusingFault
}

type aimedOf[T any] interface {
	*T
	aimedFault
}

// decodeAimed is decode for a targeted kind.
func decodeAimed[T any, P aimedOf[T]](params json.RawMessage) (Fault, error) {
	return decode[T, P](params)
}

// decode is the Decode of a kind whose fault is *T: strict JSON, an
// unknown field is an error.
func decode[T any, P faultOf[T]](params json.RawMessage) (Fault, error) {
	var f T
	if len(params) > 0 {
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("nemesis: %w", err)
		}
	}
	return P(&f), nil
}
