package harness

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// Config is one torture test, grouped by concern in embedded structs, so
// every field stays one selector away (cfg.Lock) and results.json one flat
// object. A zero field takes its default (Defaults; WithDefaults for those
// that depend on the lock or backend).
type Config struct {
	Workload
	Cluster
	Faults
	Output
}

// Workload is what the clients do. Each field is the flag of its name
// (BindFlags, which says its default and range).
type Workload struct {
	// Lock is the registry name of the lock under test. Required.
	Lock     string        `json:"lock"`
	Clients  int           `json:"clients"`
	Keys     int           `json:"keys"`
	Duration time.Duration `json:"duration"` // how long clients start new cycles
	TTL      time.Duration `json:"ttl"`
	// Hold is the time inside the critical section. Longer than the TTL,
	// a correct lock lets no section write (resource verdict unknown), and
	// one that over-reports its validity is caught at once.
	Hold time.Duration `json:"hold"`
	// NoHold makes Hold 0 (--hold 0), for throughput measurements.
	NoHold bool `json:"no_hold,omitempty"`
	// KeyPerClient gives client i the key "k<i>" (Keys is then Clients);
	// else each cycle draws one of Keys from the seed.
	KeyPerClient bool  `json:"key_per_client,omitempty"`
	Seed         int64 `json:"seed"`
	Fencing      bool  `json:"fencing"`
	// Store is StoreAll or StoreWriteOnly (needs Fencing).
	Store string `json:"store,omitempty"`
	// RetryDelay sets locks.Config.EqualRetry: clients that fail together
	// retry together.
	RetryDelay     time.Duration `json:"retry_delay,omitempty"`
	AcquireTimeout time.Duration `json:"acquire_timeout"`
	Quorum         int           `json:"quorum,omitempty"`        // locks.Config.Quorum
	WaitReplicas   int           `json:"wait_replicas,omitempty"` // locks.Config.WaitReplicas
	// Extend renews the lease while the client works, as redsync's Extend,
	// redislock's Refresh and Redisson's watchdog do (work, in extend.go).
	Extend      bool          `json:"extend,omitempty"`
	ExtendEvery time.Duration `json:"extend_every,omitempty"`
	// ClientProcess serves a Go lock in client processes of its own
	// (locks.AsProcess), which the client-stop kinds stop whole; a lock
	// that runs as processes already refuses it.
	ClientProcess bool `json:"client_process,omitempty"`
}

// Cluster is where the nodes run: cluster.Spec (see it for each field), a
// type of its own so that Config does not take on its methods. Nodes
// defaults to locks.Spec.DefaultNodes, at most MaxNodes on the backends
// that start their nodes. Password is never on a command line; written
// only to the nodes' own redis.conf (mode 0600, in a folder of mode 0700),
// and for the external backend not at all.
type Cluster cluster.Spec

// Faults is what the nemesis injects; each field is the flag of its name.
type Faults struct {
	// Nemesis lists the fault kinds (nemesis.Kinds). A run with faults
	// whose schedule holds none is refused: it would test nothing.
	Nemesis         []string      `json:"nemesis,omitempty"`
	NemesisInterval time.Duration `json:"nemesis_interval,omitempty"`
	// NemesisCompose is the most kinds one step may hold (nemesis.Plan);
	// 0 as 1. A replay takes its steps as schedule.json holds them.
	NemesisCompose int           `json:"nemesis_compose,omitempty"`
	RestartDelay   time.Duration `json:"restart_delay,omitempty"`
	Restart        string        `json:"restart,omitempty"` // nemesis.RestartMixed, …
	// LivenessBound is the check's (checker.Options.LivenessBound).
	LivenessBound time.Duration `json:"liveness_bound,omitempty"`
	// Replay is a schedule.json to replay instead of drawing faults from
	// the seed; Nemesis is set to its kinds (one given must name the
	// same), and a step the run lacks the nodes, client groups or
	// parameters for, or that ends after Duration, is refused.
	Replay string `json:"replay,omitempty"`
}

// Output is where the run is written.
type Output struct {
	// Dir is the run directory (history.jsonl, schedule.json, nodes/).
	// Required by Run and WithDefaults; NewPlan ignores it (Plan.Run takes
	// each run's).
	Dir string `json:"-"`
}

// Defaults returns the default of each field whose default depends on
// nothing else; cmd/torture's flags take theirs from here. Nodes, Image,
// AcquireTimeout and RestartDelay depend on the lock, the backend or the
// TTL (see their docs).
func Defaults() Config {
	return Config{
		Workload: Workload{Clients: 10, Keys: 2, Duration: 10 * time.Second, TTL: time.Second, Hold: 10 * time.Millisecond, Seed: 1},
		Cluster:  Cluster{Backend: cluster.BackendProcess, Topology: cluster.TopologyMasters},
		Faults:   Faults{NemesisInterval: 2 * time.Second, Restart: nemesis.RestartMixed},
	}
}

// WithDefaults is NewPlan(c).Config() with c.Dir required: c with every
// zero field set to its default, or an error naming the first invalid
// field, what this machine cannot run (MaxNodes, MaxClients, file
// descriptors, programs) or a run with faults whose schedule would inject
// none.
func (c Config) WithDefaults() (Config, error) {
	if c.Dir == "" {
		return c, errors.New("harness: no run directory")
	}
	p, err := NewPlan(c)
	if err != nil {
		return c, err
	}
	return p.Config(), nil
}

// withDefaults sets the defaults of every group and checks each, then
// what the lock asks of them together.
func (c Config) withDefaults(lock locks.Spec) (Config, error) {
	c = c.window()
	d := Defaults()
	var err error
	if c.Workload, err = c.Workload.withDefaults(d.Workload, lock); err != nil {
		return c, err
	}
	if c.Faults, err = c.Faults.withDefaults(d.Faults); err != nil {
		return c, err
	}
	c.LivenessBound = cmp.Or(c.LivenessBound, 3*c.TTL)
	if c.Nodes == 0 && !cluster.Spec(c.Cluster).NodesFixed() {
		c.Nodes = lock.DefaultNodes()
	}
	// The lock says what its nodes run (etcd members for etcd-mutex).
	switch {
	case c.Server == "":
		c.Server = lock.Server
	case c.Server != lock.Server && (c.Server != cluster.ServerRedis || lock.Server != ""):
		return c, fmt.Errorf("harness: %s runs against %s, not %s", c.Lock, serverName(lock.Server), serverName(c.Server))
	}
	spec, err := cluster.Spec(c.Cluster).WithDefaults()
	if err != nil {
		return c, fmt.Errorf("harness: %w", err)
	}
	c.Cluster = Cluster(spec)
	switch {
	case (c.Topology == cluster.TopologyFailover || c.Topology == cluster.TopologyCluster) && lock.MultiNode:
		return c, fmt.Errorf("harness: %s needs independent masters; topology %s is for single-instance locks", c.Lock, c.Topology)
	case c.Topology == cluster.TopologyCluster && !lock.Cluster:
		return c, fmt.Errorf("harness: %s does not speak Redis Cluster (setnx, its mutants and redislock do, through go-redis's cluster client)", c.Lock)
	case !lock.MultiNode && c.Nodes != 1 && c.Topology == cluster.TopologyMasters:
		return c, fmt.Errorf("harness: %s is a single-instance lock; it takes 1 node, not %d", c.Lock, c.Nodes)
	case c.Quorum != 0 && !lock.Quorum:
		return c, fmt.Errorf("harness: %s takes no quorum (only redlock does)", c.Lock)
	case c.Quorum != 0 && (c.Quorum <= c.Nodes/2 || c.Quorum > c.Nodes):
		return c, fmt.Errorf("harness: quorum %d of %d nodes: want more than half of them, at most all", c.Quorum, c.Nodes)
	case c.WaitReplicas != 0 && !lock.Wait:
		return c, fmt.Errorf("harness: %s takes no WAIT (only setnx does)", c.Lock)
	case c.WaitReplicas < 0 || c.WaitReplicas > 1:
		return c, fmt.Errorf("harness: wait-replicas %d: the failover and cluster topologies have one replica per primary", c.WaitReplicas)
	case c.WaitReplicas != 0 && c.Topology != cluster.TopologyFailover && c.Topology != cluster.TopologyCluster:
		return c, errors.New("harness: WAIT needs a replica: topology failover or cluster")
	}
	return c, nil
}

// window returns c with the workload fields the user left unset (clients,
// keys, TTL, hold, nemesis interval, duration) taken from the Window of
// its fault kinds (nemesis.WindowOf; a replayed schedule's included): a
// targeted kind strikes at one hold, and tests something only while that
// hold lasts. A field the user set is kept, whatever the kind asks.
func (c Config) window() Config {
	kinds := c.Nemesis
	if len(kinds) == 0 && c.Replay != "" {
		kinds, _ = nemesis.ScheduleKinds(c.Replay) // an unreadable schedule is refused by Faults.withDefaults
	}
	w := nemesis.WindowOf(kinds)
	c.Clients = cmp.Or(c.Clients, w.Clients)
	if !c.KeyPerClient {
		c.Keys = cmp.Or(c.Keys, w.Keys)
	}
	c.TTL = cmp.Or(c.TTL, w.TTL)
	if !c.NoHold {
		c.Hold = cmp.Or(c.Hold, w.Hold)
	}
	c.NemesisInterval = cmp.Or(c.NemesisInterval, w.Interval)
	c.Duration = cmp.Or(c.Duration, w.Duration)
	return c
}

// withDefaults sets w's zero fields from d (the TTL for AcquireTimeout)
// and checks them against the lock.
func (w Workload) withDefaults(d Workload, lock locks.Spec) (Workload, error) {
	w.Clients = cmp.Or(w.Clients, d.Clients)
	if w.KeyPerClient {
		w.Keys = w.Clients
	}
	w.Keys = cmp.Or(w.Keys, d.Keys)
	w.Duration = cmp.Or(w.Duration, d.Duration)
	w.TTL = cmp.Or(w.TTL, d.TTL)
	if w.NoHold {
		w.Hold = 0
	} else {
		w.Hold = cmp.Or(w.Hold, d.Hold)
	}
	w.Seed = cmp.Or(w.Seed, d.Seed)
	w.AcquireTimeout = cmp.Or(w.AcquireTimeout, w.TTL)
	if w.Extend {
		w.ExtendEvery = cmp.Or(w.ExtendEvery, w.TTL/3)
	}
	switch {
	case w.Clients < 1:
		return w, fmt.Errorf("harness: clients must be at least 1, got %d", w.Clients)
	case w.Keys < 1:
		return w, fmt.Errorf("harness: keys must be at least 1, got %d", w.Keys)
	case w.Duration < 0 || w.TTL < 0 || w.Hold < 0 || w.AcquireTimeout < 0 || w.ExtendEvery < 0 || w.RetryDelay < 0:
		return w, errors.New("harness: durations must not be negative")
	case w.ExtendEvery != 0 && !w.Extend:
		return w, errors.New("harness: extend every is only for extended leases (Extend)")
	case w.Extend && w.ExtendEvery >= w.TTL:
		return w, fmt.Errorf("harness: extend every %s must be shorter than the TTL of %s: every lease would lapse before its renewal", w.ExtendEvery, w.TTL)
	case w.Store != "" && w.Store != StoreAll && w.Store != StoreWriteOnly:
		return w, fmt.Errorf("harness: unknown store %q (want %s or %s)", w.Store, StoreAll, StoreWriteOnly)
	case w.Store == StoreWriteOnly && !w.Fencing:
		return w, errors.New("harness: store write-only checks fencing tokens on writes; it needs fencing")
	case w.Fencing && !lock.Fencing:
		return w, fmt.Errorf("harness: %s issues no fencing tokens", w.Lock)
	}
	return w, nil
}

// withDefaults sets f's zero fields from d, checks them, and takes the
// kinds of a replayed schedule from it.
func (f Faults) withDefaults(d Faults) (Faults, error) {
	switch f.Restart {
	case "":
		f.Restart = d.Restart
	case nemesis.RestartMixed, nemesis.RestartImmediate, nemesis.RestartDelayed:
	default:
		return f, fmt.Errorf("harness: unknown restart mode %q (want mixed, immediate or delayed)", f.Restart)
	}
	f.NemesisInterval = cmp.Or(f.NemesisInterval, d.NemesisInterval)
	if f.NemesisInterval < 0 || f.RestartDelay < 0 || f.LivenessBound < 0 {
		return f, errors.New("harness: durations must not be negative")
	}
	if f.NemesisCompose < 0 {
		return f, fmt.Errorf("harness: nemesis compose %d: want the most faults a step may hold, at least 1", f.NemesisCompose)
	}
	if f.NemesisCompose > max(1, len(f.Nemesis)) && f.Replay == "" {
		return f, fmt.Errorf("harness: nemesis compose %d: a step holds each kind at most once, so at most the %d kinds given", f.NemesisCompose, len(f.Nemesis))
	}
	if f.Replay == "" {
		return f, nil
	}
	// The schedule says which kinds it holds; the run is set up for them
	// (client groups, the clock shim) before its steps are checked
	// against that setup.
	kinds, err := nemesis.ScheduleKinds(f.Replay)
	if err != nil {
		return f, fmt.Errorf("harness: replay: %w", err)
	}
	if len(f.Nemesis) > 0 && !sameKinds(f.Nemesis, kinds) {
		return f, fmt.Errorf("harness: nemesis %s differs from the kinds of the replayed schedule (%s); the schedule says which kinds it holds", strings.Join(f.Nemesis, ","), strings.Join(kinds, ","))
	}
	f.Nemesis = kinds
	return f, nil
}

// sameKinds reports whether a and b name the same kinds, in any order.
func sameKinds(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// serverName names a cluster.Spec.Server for messages.
func serverName(s string) string {
	if s == "" || s == cluster.ServerRedis {
		return "redis-server"
	}
	return s + " members"
}
