package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// clusterHealTimeout bounds the wait for a healthy cluster after a heal.
const clusterHealTimeout = 25 * time.Second

func redisClusterOf(t *Target) (*cluster.RedisCluster, error) {
	if t.Cluster == nil || t.Cluster.RedisCluster() == nil {
		return nil, errors.New("no cluster topology")
	}
	return t.Cluster.RedisCluster(), nil
}

// healthy ends every cluster kind's heal: first, then a healthy cluster.
func healthy(ctx context.Context, t *Target, first func(*cluster.RedisCluster) error) error {
	rc, err := redisClusterOf(t)
	if err != nil {
		return err
	}
	if first != nil {
		if err := first(rc); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, clusterHealTimeout)
	defer cancel()
	return rc.WaitHealthy(wctx)
}

// ClusterFailoverUnreplicated is failover-unreplicated on Redis Cluster:
// the master of the key's slot is cut from its replica (the replication
// stream only) and Start promotes the replica (CLUSTER FAILOVER FORCE).
type ClusterFailoverUnreplicated struct {
	GrantWait Duration `json:"grant_wait"`
	Aim

	cut       []*cluster.Node // the master, then the nodes cut from it, until lifted
	partition bool            // cluster-partition-master's: cut it from every node, no forced failover
}

var clusterFailoverUnreplicatedKind = clusterKind[ClusterFailoverUnreplicated]("cluster-failover-unreplicated", 3*time.Second, 20*time.Second, false,
	"cut the master of a key's slot from its replica right before a grant, then promote the replica at once (CLUSTER FAILOVER FORCE): it never had the grant",
	func(s Setup) Fault {
		return &ClusterFailoverUnreplicated{GrantWait: Duration(min(s.TTL/2, 500*time.Millisecond)), Aim: newAim(s)}
	})

// clusterKind's window is one key held for ttl less half a second, for a
// run of dur; process: it kills nodes.
func clusterKind[T any, P aimedOf[T]](name string, ttl, dur time.Duration, process bool, summary string, plan func(Setup) Fault) Kind {
	return Kind{
		Name:    name,
		Family:  "cluster",
		Window:  Workload{Keys: 1, TTL: ttl, Hold: ttl - 500*time.Millisecond, Interval: 3 * time.Second, Duration: dur},
		Summary: summary,
		Needs:   Needs{Topology: cluster.TopologyCluster, Cluster: cluster.Abilities{Process: process}, TTL: true},
		Plan:    func(_ *rand.Rand, s Setup) Fault { return plan(s) },
		Decode:  decodeAimed[T, P],
	}
}

func (f *ClusterFailoverUnreplicated) Refuse(s Setup) string {
	kind := "cluster-failover-unreplicated"
	if f.partition {
		kind = "cluster-partition-master"
	}
	if f.GrantWait <= 0 {
		return fmt.Sprintf("%s: grant_wait %v: want it positive", kind, time.Duration(f.GrantWait))
	}
	if f.struck() && len(f.Decision.Targets) != 2 {
		return fmt.Sprintf("%s: decision: %d targets, want the master and its replica", kind, len(f.Decision.Targets))
	}
	return f.refuse(kind, s.Nodes)
}

func (f *ClusterFailoverUnreplicated) String() string {
	s := "cluster-failover-unreplicated: cut a key's master from its replica right before a grant, force the replica over"
	return s + f.says(func(d *Decision) string {
		return "master " + nodeNames(d.Targets[:1]) + " cut from replica " + nodeNames(d.Targets[1:]) + " at " + d.at()
	})
}

func (f *ClusterFailoverUnreplicated) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	rc, err := redisClusterOf(t)
	if err != nil {
		return false, err
	}
	if t.View == nil {
		return false, errNoView
	}
	// The next grant follows a release within a millisecond: the held
	// keys' owners are asked for now (a replay asks then).
	owners := map[string][]*cluster.Node{}
	if f.Decision == nil {
		holds, _ := t.View.Holds()
		for _, h := range holds {
			if _, ok := owners[h.Key]; ok {
				continue
			}
			if m, reps, err := rc.SlotOwner(ctx, nil, cluster.Slot(h.Key)); err == nil && len(reps) > 0 {
				owners[h.Key] = []*cluster.Node{m, reps[0]}
			}
		}
	}
	var master, replica *cluster.Node
	return f.cutBeforeGrant(ctx, t, base, time.Duration(f.GrantWait), primaryCut{
		primary: func(ctx context.Context, key string) ([]int, string, error) {
			if o, ok := owners[key]; ok {
				master, replica = o[0], o[1]
				return []int{master.Index(), replica.Index()}, "", nil
			}
			m, reps, err := rc.SlotOwner(ctx, nil, cluster.Slot(key))
			switch {
			case err != nil && ctx.Err() != nil:
				return nil, "the step's window closed before the cluster named the key's master", nil
			case err != nil:
				return nil, "", err
			case len(reps) == 0:
				return nil, fmt.Sprintf("the master %s of %s's slot has no replica", m.Name(), key), nil
			}
			master, replica = m, reps[0]
			return []int{master.Index(), replica.Index()}, "", nil
		},
		cut: func() error {
			f.cutOff(rc, master, replica)
			return nil
		},
		lift: func() error { return f.lift(rc) },
	})
}

// cutOff cuts master from replica (with partition, from every node).
func (f *ClusterFailoverUnreplicated) cutOff(rc *cluster.RedisCluster, master, replica *cluster.Node) {
	if f.partition {
		others := slices.DeleteFunc(rc.Cluster().Nodes(), func(n *cluster.Node) bool { return n == master })
		rc.Cut(master, others...)
		f.cut = append([]*cluster.Node{master}, others...)
		return
	}
	rc.CutReplication(master, replica)
	f.cut = []*cluster.Node{master, replica}
}

func (f *ClusterFailoverUnreplicated) lift(rc *cluster.RedisCluster) error {
	if len(f.cut) >= 2 {
		rc.Heal(f.cut[0], f.cut[1:]...)
	}
	f.cut = nil
	return nil
}

func (f *ClusterFailoverUnreplicated) Start(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	rc, err := redisClusterOf(t)
	if err != nil {
		return err
	}
	r, err := node(t, f.Decision.Targets[1])
	if err != nil {
		return err
	}
	if len(f.cut) == 0 { // not armed here (a test's Start alone)
		m, err := node(t, f.Decision.Targets[0])
		if err != nil {
			return err
		}
		f.cutOff(rc, m, r)
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if f.partition {
		// The majority promotes the replica once it calls the master
		// failed: the node timeout, then an election.
		return rc.WaitMaster(wctx, r)
	}
	return rc.ForceFailover(wctx, r)
}

func (f *ClusterFailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	return healthy(ctx, t, f.lift)
}

// ClusterKillMaster kills the master of a held key's slot at a grant; its
// replica is promoted with what it had received.
type ClusterKillMaster struct {
	Aim
}

var clusterKillMasterKind = clusterKind[ClusterKillMaster]("cluster-kill-master", 5*time.Second, 20*time.Second, true,
	"kill the master of a held key's slot; the cluster promotes its replica, which has the key if it was replicated",
	func(s Setup) Fault { return &ClusterKillMaster{Aim: newAim(s)} })

func (f *ClusterKillMaster) Refuse(s Setup) string {
	return f.refuse("cluster-kill-master", s.Nodes)
}

func (f *ClusterKillMaster) String() string {
	s := "cluster-kill-master: kill the master of a held key's slot"
	return s + f.says(func(d *Decision) string { return "master " + nodeNames(d.Targets) + " killed at " + d.at() })
}

func (f *ClusterKillMaster) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	d, err := armAtGrant(ctx, t, base, f.Decision, func(_ context.Context, _ *cluster.RedisCluster, master *cluster.Node) ([]int, string, error) {
		return []int{master.Index()}, "", nil
	})
	return f.settle(d, err)
}

// settle keeps an arm's decision, if any, and reports a strike.
func (a *Aim) settle(d *Decision, err error) (bool, error) {
	if d != nil {
		a.Decision = d
	}
	if err != nil {
		return false, err
	}
	return a.struck(), nil
}

// armAtGrant waits for a grant (a replay: the recorded offset) and aims
// at the nodes targets picks from the master of its key's slot; the
// decision is nil when the cluster could not be asked.
func armAtGrant(ctx context.Context, t *Target, base time.Time, rec *Decision,
	targets func(context.Context, *cluster.RedisCluster, *cluster.Node) ([]int, string, error)) (*Decision, error) {
	rc, err := redisClusterOf(t)
	if err != nil {
		return nil, err
	}
	d, err := watch(ctx, t, base, rec, func(c Change, _ time.Duration) (aim, bool) {
		return aim{}, c.Kind == HoldGranted
	})
	if err != nil || d.Missed != "" {
		return d, err
	}
	master, _, err := rc.SlotOwner(ctx, nil, cluster.Slot(d.Trigger.Key))
	missed := ""
	if err == nil {
		d.Targets, missed, err = targets(ctx, rc, master)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return &Decision{Missed: "the step's window closed before the cluster named the key's master"}, nil
	case err != nil:
		return nil, err
	case missed != "":
		return &Decision{Missed: missed}, nil
	}
	// A replay's d says already how the live holds met the recorded
	// trigger (replay); other nodes struck say more.
	if rec != nil {
		if v := verdict(rec, d, sameTargets); v != "same" {
			d.Replay = v
		}
	}
	return d, nil
}

func (f *ClusterKillMaster) Start(_ context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return eachNode(t, f.Decision.Targets[:1], func(n *cluster.Node) error { return n.Kill() })
}

func (f *ClusterKillMaster) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return healthy(ctx, t, func(*cluster.RedisCluster) error { return restartDown(ctx, t, f.Decision.Targets[:1]) })
}

// ClusterPartitionMaster cuts the master from every other node instead
// (replication and bus): it grants until the node timeout, and the
// majority promotes its replica without the grant.
type ClusterPartitionMaster struct {
	ClusterFailoverUnreplicated
}

var clusterPartitionMasterKind = clusterKind[ClusterPartitionMaster]("cluster-partition-master", 8*time.Second, 30*time.Second, false,
	"cut the master of a key's slot from every other node right before a grant: it keeps granting until the node timeout, and the majority promotes its replica without the key",
	func(s Setup) Fault {
		return &ClusterPartitionMaster{ClusterFailoverUnreplicated{GrantWait: Duration(min(s.TTL/2, 500*time.Millisecond)), Aim: newAim(s)}}
	})

func (f *ClusterPartitionMaster) String() string {
	s := "cluster-partition-master: cut a key's master from every other node right before a grant, the majority promotes its replica"
	return s + f.says(func(d *Decision) string { return "master " + nodeNames(d.Targets[:1]) + " cut off at " + d.at() })
}

func (f *ClusterPartitionMaster) Refuse(s Setup) string {
	f.partition = true
	return f.ClusterFailoverUnreplicated.Refuse(s)
}

func (f *ClusterPartitionMaster) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	f.partition = true
	return f.ClusterFailoverUnreplicated.Arm(ctx, t, base)
}

func (f *ClusterPartitionMaster) Start(ctx context.Context, t *Target) error {
	f.partition = true
	return f.ClusterFailoverUnreplicated.Start(ctx, t)
}

// ClusterMigrate moves the slot of a held key to the next master while it
// is held (cluster.RedisCluster.MigrateSlot); the slot stays there.
type ClusterMigrate struct {
	Aim
}

var clusterMigrateKind = clusterKind[ClusterMigrate]("cluster-migrate", 3*time.Second, 20*time.Second, false,
	"move the slot of a held key to another master while it is held (SETSLOT MIGRATING and IMPORTING, MIGRATE, SETSLOT NODE): the key moves with its TTL and clients follow ASK and MOVED",
	func(s Setup) Fault { return &ClusterMigrate{Aim: newAim(s)} })

func (f *ClusterMigrate) Refuse(s Setup) string {
	if f.struck() && len(f.Decision.Targets) != 2 {
		return fmt.Sprintf("cluster-migrate: decision: %d targets, want the old master and the new", len(f.Decision.Targets))
	}
	return f.refuse("cluster-migrate", s.Nodes)
}

func (f *ClusterMigrate) String() string {
	s := "cluster-migrate: move a held key's slot to another master"
	return s + f.says(func(d *Decision) string {
		return "slot moved from " + nodeNames(d.Targets[:1]) + " to " + nodeNames(d.Targets[1:]) + " at " + d.at()
	})
}

func (f *ClusterMigrate) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	d, err := armAtGrant(ctx, t, base, f.Decision, func(ctx context.Context, rc *cluster.RedisCluster, from *cluster.Node) ([]int, string, error) {
		masters, err := rc.MastersNow(ctx, from)
		if err != nil {
			return nil, "", err
		}
		to := nextMaster(masters, from)
		if to == nil {
			return nil, fmt.Sprintf("no master but %s to move the key's slot to", from.Name()), nil
		}
		return []int{from.Index(), to.Index()}, "", nil
	})
	return f.settle(d, err)
}

// nextMaster is the first of masters by index after from, wrapping, or nil.
func nextMaster(masters []*cluster.Node, from *cluster.Node) *cluster.Node {
	var first *cluster.Node
	for _, m := range masters {
		switch {
		case m == from:
		case m.Index() > from.Index():
			return m
		case first == nil:
			first = m
		}
	}
	return first
}

func (f *ClusterMigrate) Start(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	rc, err := redisClusterOf(t)
	if err != nil {
		return err
	}
	from, err := node(t, f.Decision.Targets[0])
	if err != nil {
		return err
	}
	to, err := node(t, f.Decision.Targets[1])
	if err != nil {
		return err
	}
	_, err = rc.MigrateSlot(ctx, cluster.Slot(f.Decision.Trigger.Key), from, to)
	return err
}

func (f *ClusterMigrate) Heal(ctx context.Context, t *Target) error { return healthy(ctx, t, nil) }
