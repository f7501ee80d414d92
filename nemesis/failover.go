package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/wait"
)

// Failover cuts the primary of the failover topology off its replica and
// the sentinels (its internal proxy; it still takes the clients' writes),
// waits until a majority of the sentinels name the replica, waits
// HoldOldPrimary (go-redis's failover client drops its connections to the
// old primary as soon as a sentinel announces the switch; a client that
// does not follow the sentinels keeps them), then cuts the old primary
// off the clients too. The replica is asynchronous: what the old primary
// took after the cut is missing on the new one. Heal removes the toxics
// and waits until the sentinels have made the old primary a replica.
type Failover struct {
	// HoldOldPrimary is how long after the promotion the old primary stays
	// reachable by clients (0: cut off at once).
	HoldOldPrimary Duration `json:"hold_old_primary,omitempty"`

	cut []*toxiproxy.Proxy // proxies that may hold this fault's toxics
}

const (
	promoteTimeout = 30 * time.Second
	rejoinTimeout  = 25 * time.Second // less than healTimeout
	failoverPoll   = 50 * time.Millisecond
)

var failoverKind = Kind{
	Name:    "failover",
	Family:  "failover",
	Summary: "isolate the primary from its replica and the sentinels until they promote the replica, then from clients; rejoin it as a replica",
	Needs:   Needs{Topology: cluster.TopologyFailover},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Half the time the old primary stays reachable for half a TTL.
		return &Failover{HoldOldPrimary: Duration(time.Duration(rng.IntN(2)) * s.TTL / 2)}
	},
	Decode: decode[Failover],
}

func (f *Failover) Refuse(Setup) string {
	if f.HoldOldPrimary < 0 {
		return fmt.Sprintf("failover: negative hold_old_primary %v", time.Duration(f.HoldOldPrimary))
	}
	return ""
}

func (f *Failover) String() string {
	if f.HoldOldPrimary == 0 {
		return "failover: isolate the primary, promote the replica"
	}
	return fmt.Sprintf("failover: isolate the primary, promote the replica, old primary reachable by clients for %s more",
		time.Duration(f.HoldOldPrimary))
}

func (f *Failover) Start(ctx context.Context, t *Target) error {
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	old, err := fo.WaitPrimary(wctx)
	if err != nil {
		return err
	}
	if err := f.blackHole(fo.InternalProxy(old)); err != nil {
		return err
	}
	return f.promoted(ctx, wctx, fo, old, time.Duration(f.HoldOldPrimary))
}

// promoted polls, within wctx, until a majority of the sentinels name a
// primary other than old, then, hold later, cuts old off the clients.
func (f *Failover) promoted(ctx, wctx context.Context, fo *cluster.Failover, old *cluster.Node, hold time.Duration) error {
	for {
		n, err := fo.Primary(wctx)
		if err == nil && n != old {
			break
		}
		if err == nil {
			err = fmt.Errorf("the sentinels still name %s", old.Name())
		}
		if serr := wait.Sleep(wctx, failoverPoll); serr != nil {
			return fmt.Errorf("wait for the sentinels to promote a replica: %w (last: %v)", serr, err)
		}
	}
	if err := wait.Sleep(ctx, hold); err != nil {
		return err
	}
	return f.blackHole(old.Proxy())
}

// blackHole drops every byte through px both ways, and keeps px for Heal.
func (f *Failover) blackHole(px *toxiproxy.Proxy) error {
	f.cut = append(f.cut, px)
	for _, tx := range []struct{ name, stream string }{{failoverUp, "upstream"}, {failoverDown, "downstream"}} {
		body := fmt.Sprintf(`{"name":%q,"type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, tx.name, tx.stream)
		if _, err := px.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("toxic %s on %s: %w", tx.name, px.Name, err)
		}
	}
	return nil
}

func (f *Failover) Heal(ctx context.Context, t *Target) error {
	if err := f.uncut(ctx); err != nil {
		return err
	}
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	_, err = fo.WaitHealthy(wctx)
	return err
}

// uncut removes every toxic the fault added.
func (f *Failover) uncut(ctx context.Context) error {
	var errs []error
	for _, px := range f.cut {
		for _, name := range []string{failoverUp, failoverDown} {
			if err := px.Toxics.RemoveToxic(ctx, name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
				errs = append(errs, fmt.Errorf("remove toxic %s from %s: %w", name, px.Name, err))
			}
		}
	}
	f.cut = nil
	return errors.Join(errs...)
}

func failoverOf(t *Target) (*cluster.Failover, error) {
	if t.Cluster == nil || t.Cluster.Failover() == nil {
		return nil, errors.New("no failover topology")
	}
	return t.Cluster.Failover(), nil
}

// FailoverUnreplicated is the failover aimed at a grant: the primary is
// cut from its replica and the sentinels right before the next grant
// (cutBeforeGrant, within GrantWait, less than the sentinels' 1 s
// down-after), so the grant is never replicated and the replica is
// promoted without it. With Force (Plan sets it; older schedules lack it)
// Start asks the sentinels to fail over at once (SENTINEL FAILOVER), as
// an operator's manual failover right after a write. Heal is failover's.
type FailoverUnreplicated struct {
	GrantWait Duration `json:"grant_wait"`
	Force     bool     `json:"force,omitempty"`
	Aim

	fo Failover // its cuts, and their heal
}

var failoverUnreplicatedKind = Kind{
	Name:    "failover-unreplicated",
	Family:  "failover",
	Twin:    Twin{Kinds: []string{"failover"}},
	Window:  Workload{TTL: 3 * time.Second, Hold: 2500 * time.Millisecond, Interval: 3 * time.Second, Duration: 20 * time.Second},
	Summary: "isolate the primary from its replica and the sentinels right before a grant, so the grant is never replicated; the replica is promoted without it",
	Needs:   Needs{Topology: cluster.TopologyFailover, TTL: true},
	Plan: func(_ *rand.Rand, s Setup) Fault {
		return &FailoverUnreplicated{GrantWait: Duration(min(s.TTL/2, 500*time.Millisecond)), Force: true, Aim: newAim(s)}
	},
	Decode: decodeAimed[FailoverUnreplicated],
}

func (f *FailoverUnreplicated) Refuse(s Setup) string {
	if f.GrantWait <= 0 {
		return fmt.Sprintf("failover-unreplicated: grant_wait %v: want it positive", time.Duration(f.GrantWait))
	}
	return f.refuse("failover-unreplicated", s.Nodes)
}

func (f *FailoverUnreplicated) String() string {
	s := "failover-unreplicated: isolate the primary right before a grant, promote the replica"
	if f.Force {
		s += " at once (SENTINEL FAILOVER)"
	}
	return s + f.says(func(d *Decision) string { return "primary " + nodeNames(d.Targets) + " cut from " + d.at() })
}

// Arm cuts the primary's internal path before a grant (cutBeforeGrant);
// with Force, a cut under which no grant came is lifted and tried again.
func (f *FailoverUnreplicated) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	fo, err := failoverOf(t)
	if err != nil {
		return false, err
	}
	var old *cluster.Node
	return f.cutBeforeGrant(ctx, t, base, time.Duration(f.GrantWait), primaryCut{
		primary: func(ctx context.Context, _ string) ([]int, string, error) {
			if old, err = fo.WaitPrimary(ctx); err != nil {
				if ctx.Err() != nil {
					return nil, "the sentinels named no primary within the step's window", nil
				}
				return nil, "", err
			}
			return []int{slices.Index(fo.Nodes(), old)}, "", nil
		},
		cut:    func() error { return f.fo.blackHole(fo.InternalProxy(old)) },
		lift:   func() error { return f.lift(ctx) },
		anyKey: true,
		retry:  f.Force,
	})
}

func (f *FailoverUnreplicated) lift(ctx context.Context) error {
	return f.fo.uncut(context.WithoutCancel(ctx))
}

func (f *FailoverUnreplicated) Start(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	old, err := node(t, f.Decision.Targets[0])
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if f.Force {
		if err := fo.ForceFailover(wctx); err != nil {
			return err
		}
	}
	return f.fo.promoted(ctx, wctx, fo, old, 0)
}

func (f *FailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return f.fo.Heal(ctx, t)
}

// The replication-link kinds fault the link between the primary and its
// replica alone (cluster.Failover.ReplicationLink): replica-partition
// black-holes it (the replica gets nothing, and the sentinels, who still
// reach the primary, promote nobody), replica-latency holds it Latency ±
// Jitter. Alone neither breaks a lock that talks to the primary only; a
// fault composed with it (a kill of the primary, a failover) makes the
// replica's copy matter; a lock that waits for its replica (setnx with
// WAIT 1) refuses its grants under the cut. Each acts on the primary of
// the moment; Heal clears every replication link and waits for a healthy
// topology.
type ReplicaPartition struct{}

// ReplicaLatency slows the replication link.
type ReplicaLatency struct {
	Latency Duration `json:"latency"`
	Jitter  Duration `json:"jitter"`
}

var replicaNeeds = Needs{Topology: cluster.TopologyFailover, Cluster: cluster.Abilities{Links: true}, TTL: true}

var replicaPartitionKind = Kind{
	Name:    "replica-partition",
	Family:  "replica-link",
	Summary: "cut the replication link between the primary and its replica both ways; the sentinels and the clients still reach both",
	Needs:   replicaNeeds,
	Plan:    func(*rand.Rand, Setup) Fault { return &ReplicaPartition{} },
	Decode:  decode[ReplicaPartition],
}

var replicaLatencyKind = Kind{
	Name:    "replica-latency",
	Family:  "replica-link",
	Summary: "delay the replication link between the primary and its replica by a tenth to half a TTL",
	Needs:   replicaNeeds,
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ReplicaLatency{}
		f.Latency, f.Jitter = drawLatency(rng, s.TTL/10, s.TTL/4, s.TTL/2)
		return f
	},
	Decode: decode[ReplicaLatency],
}

func (*ReplicaPartition) Refuse(Setup) string { return "" }

func (*ReplicaPartition) String() string {
	return "replica-partition: cut the replication link of the primary both ways"
}

func (p *ReplicaPartition) Start(ctx context.Context, t *Target) error {
	l, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	return blackHole(ctx, l, replicaCutUp, replicaCutDown)
}

func (p *ReplicaPartition) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaCutUp, replicaCutDown)
}

func (l *ReplicaLatency) Refuse(Setup) string {
	return refusal("replica-latency", checkLatency(l.Latency, l.Jitter))
}

func (l *ReplicaLatency) String() string {
	return fmt.Sprintf("replica-latency: the replication link of the primary %v±%v both ways", time.Duration(l.Latency), time.Duration(l.Jitter))
}

func (l *ReplicaLatency) Start(ctx context.Context, t *Target) error {
	link, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	return injectToxic(ctx, link, latencySpecs(l.Latency, l.Jitter, replicaLatencyDn, replicaLatencyUp)...)
}

func (l *ReplicaLatency) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaLatencyUp, replicaLatencyDn)
}

// primaryLink is the replication link of the sentinels' primary.
func primaryLink(ctx context.Context, t *Target) (*cluster.Link, error) {
	fo, err := failoverOf(t)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	p, err := fo.WaitPrimary(wctx)
	if err != nil {
		return nil, err
	}
	l := fo.ReplicationLink(p)
	if l == nil {
		return nil, fmt.Errorf("%s has no replication link of its own (the docker backend)", p.Name())
	}
	return l, nil
}

// healLinks removes the toxics names from every replication link and
// waits until the topology is healthy.
func healLinks(ctx context.Context, t *Target, names ...string) error {
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range fo.Nodes() {
		if l := fo.ReplicationLink(n); l != nil {
			errs = append(errs, removeToxics(ctx, l, names))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	if _, err := fo.WaitHealthy(wctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
