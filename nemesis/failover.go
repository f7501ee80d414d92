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

// The kinds of the failover topology (cluster.Failover: a primary, its
// replica and the sentinels): failover, its aimed form
// failover-unreplicated (the step it shares with the Redis Cluster
// kinds is in unreplicated.go), and the replication-link kinds
// replica-partition and replica-latency.

// Failover isolates the primary of the failover topology (see
// cluster.Failover) so that the sentinels promote the replica while
// clients still write to the old primary, then isolates the old primary
// from the clients too, and brings it back when healed. It is the
// failover scenario of the literature: the replica is asynchronous, so
// every write the old primary accepted after the cut, locks included, is
// missing on the new primary, and a lock granted there is granted again.
//
// Start, in order:
//
//  1. black-holes both streams of the primary's internal proxy, the path
//     by which the replica and the sentinels reach it (toxiproxy timeout
//     toxics with timeout 0, as a partition: nothing is closed, bytes are
//     dropped). Clients still reach it through their own proxy, and it
//     still accepts writes: it has no min-replicas-to-write;
//  2. waits, at most 30 s, until a majority of the sentinels name the
//     replica as the primary (they call the old one down after 1 s
//     without a PING reply and promote the replica within a few seconds);
//  3. waits HoldOldPrimary, during which clients still connected to the
//     old primary keep writing to it. go-redis's failover client drops
//     those connections as soon as a sentinel announces the switch; a
//     client that does not follow the sentinels keeps them;
//  4. black-holes both streams of the clients' proxy to the old primary:
//     it is now cut off from everyone.
//
// Heal removes every toxic Start added (which closes the connections they
// held) and waits, at most 25 s, until the topology is healthy again (see
// cluster.Failover.WaitHealthy): the sentinels find the old primary still
// claiming to be a primary and reconfigure it as a replica of the new one
// (about 2 s later with the cluster's sentinel timings); it resynchronises
// from the new primary and the writes it took during the fault are gone.
type Failover struct {
	// HoldOldPrimary is how long after the promotion the old primary stays
	// reachable by clients. The default, 0, cuts it off at once.
	HoldOldPrimary Duration `json:"hold_old_primary,omitempty"`

	cut []*toxiproxy.Proxy // proxies that may hold this fault's toxics
}

// Bounds of the failover fault's waits.
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

// Refuse says why the fault does not fit s, or "".
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

// Start isolates the primary and waits for the promotion (see Failover).
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

// promoted is the end of a failover's start: it polls, within wctx, until
// a majority of the sentinels name a primary other than old, then, hold
// later (within ctx), cuts old from the clients too.
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

// blackHole drops every byte both ways through px, on open and new
// connections, and remembers px for Heal.
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

// Heal removes the toxics and waits until the old primary has rejoined
// as a replica (see Failover).
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

// uncut removes every toxic the fault added, which closes the
// connections they held.
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

// failoverOf returns the failover topology of t's cluster.
func failoverOf(t *Target) (*cluster.Failover, error) {
	if t.Cluster == nil || t.Cluster.Failover() == nil {
		return nil, errors.New("no failover topology")
	}
	return t.Cluster.Failover(), nil
}

// FailoverUnreplicated is the failover of the literature aimed at a grant:
// the primary is isolated from its replica and the sentinels (as the
// failover kind does) right before the next grant, so that the grant is
// never replicated; the sentinels promote the replica without the key,
// and a second client acquires it there while the first still holds it.
//
// Arm is the step the Redis Cluster kinds share (cutBeforeGrant): when a
// hold ends, it cuts the primary's internal path at once and waits up to
// GrantWait (less than the sentinels' 1 s down-after) for a grant under
// the cut; a lock that waits for its replica (setnx with WAIT 1) gives
// none, and the failover goes on. Start waits for the promotion and cuts
// the clients' path to the old primary too; Heal is the failover kind's
// (the old primary rejoins as a replica).
//
// With Force (Plan sets it) Start does not leave the promotion to the
// sentinels' down-after (1 s) and election: it asks them to fail over at
// once (SENTINEL FAILOVER), as an operator's manual failover does right
// after a write it does not know is unreplicated. Without it (schedules
// written before Force) the sentinels find the primary down themselves.
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
	Decode: decode[FailoverUnreplicated],
}

// Refuse says why the fault does not fit s, or "".
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

// Arm is the failover before the grant replicates (cutBeforeGrant) on
// the Sentinel topology: it cuts the primary's internal path (from its
// replica and the sentinels). With Force, a cut under which no grant came
// is lifted (before the sentinels' down-after) and tried again at the
// next hold's end while the window leaves room for one more.
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

// lift removes the cuts made so far.
func (f *FailoverUnreplicated) lift(ctx context.Context) error {
	return f.fo.uncut(context.WithoutCancel(ctx))
}

// Start waits for the sentinels to promote the replica, then cuts the old
// primary from the clients too.
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

// Heal removes the cuts and waits until the old primary has rejoined as a
// replica (the failover kind's heal).
func (f *FailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return f.fo.Heal(ctx, t)
}

// The replication-link kinds fault the link between the primary of the
// failover topology and its replica, and nothing else: the sentinels and
// the clients reach both nodes as before (cluster.Failover.ReplicationLink).
//
//   - replica-partition black-holes the link both ways (toxiproxy timeout
//     toxics, as a partition's): the primary keeps granting, the replica
//     gets none of it, and the sentinels, who still reach the primary,
//     promote nobody. Heal lifts the cut, which closes the link; the
//     replica reconnects and catches up.
//   - replica-latency holds the replication stream (and the replica's
//     acknowledgements) by Latency ± Jitter: the replica lags.
//
// Alone neither breaks a lock that talks to the primary only: the
// replica's copy matters once it is promoted, which a fault composed
// with it (a kill of the primary, a failover) makes happen. A lock that
// waits for its replica (setnx with WAIT 1) refuses its grants while the
// link is cut. Each acts on the primary of the moment it starts; Heal
// clears every replication link and waits until the topology is healthy.
type ReplicaPartition struct{}

// ReplicaLatency slows the replication link (see ReplicaPartition).
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
		d := [...]time.Duration{s.TTL / 10, s.TTL / 4, s.TTL / 2}[rng.IntN(3)]
		d = max(d.Truncate(time.Millisecond), time.Millisecond)
		return &ReplicaLatency{Latency: Duration(d), Jitter: Duration(time.Duration(rng.Int64N(int64(d/10) + 1)).Truncate(time.Millisecond))}
	},
	Decode: decode[ReplicaLatency],
}

func (*ReplicaPartition) String() string {
	return "replica-partition: cut the replication link of the primary both ways"
}

// Start black-holes the replication link of the current primary.
func (p *ReplicaPartition) Start(ctx context.Context, t *Target) error {
	l, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	return blackHole(ctx, l, replicaCutUp, replicaCutDown)
}

// Heal lifts every cut and waits for the replica to catch up.
func (p *ReplicaPartition) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaCutUp, replicaCutDown)
}

// Refuse says why the fault does not fit s, or "".
func (l *ReplicaLatency) Refuse(Setup) string {
	if l.Latency < Duration(time.Millisecond) || l.Jitter < 0 || l.Jitter > l.Latency {
		return fmt.Sprintf("replica-latency: latency %v, jitter %v: want latency ≥ 1ms and 0 ≤ jitter ≤ latency", time.Duration(l.Latency), time.Duration(l.Jitter))
	}
	return ""
}

func (l *ReplicaLatency) String() string {
	return fmt.Sprintf("replica-latency: the replication link of the primary %v±%v both ways", time.Duration(l.Latency), time.Duration(l.Jitter))
}

// Start slows the replication link of the current primary both ways.
func (l *ReplicaLatency) Start(ctx context.Context, t *Target) error {
	link, err := primaryLink(ctx, t)
	if err != nil {
		return err
	}
	attrs := map[string]int64{"latency": time.Duration(l.Latency).Milliseconds(), "jitter": time.Duration(l.Jitter).Milliseconds()}
	return errors.Join(
		injectToxic(ctx, link, toxicSpec{Name: replicaLatencyDn, Type: "latency", Stream: downstream, Attributes: attrs}),
		injectToxic(ctx, link, toxicSpec{Name: replicaLatencyUp, Type: "latency", Stream: upstream, Attributes: attrs}))
}

// Heal removes the latency and waits for the replica to catch up.
func (l *ReplicaLatency) Heal(ctx context.Context, t *Target) error {
	return healLinks(ctx, t, replicaLatencyUp, replicaLatencyDn)
}

// primaryLink returns the replication link of the primary the sentinels
// agree on.
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

// healLinks removes the toxics names from every node's replication link
// and waits, at most rejoinTimeout, until the topology is healthy.
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
