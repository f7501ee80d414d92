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

// The kinds of the cluster topology (cluster.RedisCluster): each aims at
// the master of the slot of a held key, which it finds by asking the
// cluster (CLUSTER NODES), so a run with keys spread over the masters
// strikes where the lock's key lives.

// clusterHealTimeout bounds the wait for a healthy cluster after a heal:
// a full resynchronisation of the old master, or a restarted node
// rejoining as a replica.
const clusterHealTimeout = 25 * time.Second

// redisClusterOf returns the cluster topology of t's cluster.
func redisClusterOf(t *Target) (*cluster.RedisCluster, error) {
	if t.Cluster == nil || t.Cluster.RedisCluster() == nil {
		return nil, errors.New("no cluster topology")
	}
	return t.Cluster.RedisCluster(), nil
}

// healthy ends every cluster kind's heal: it calls first (unless nil),
// then waits, at most clusterHealTimeout, for a healthy cluster.
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
// when a hold ends (its key about to be free), the master of the key's
// slot is cut from its replica (the replication stream between the two;
// the clients still reach both, and the cluster bus carries on), and the fault waits up to GrantWait for a grant of that key
// under the cut: the trigger (without one, the hold that ended). Start
// promotes the replica at once (CLUSTER FAILOVER FORCE, an operator's
// manual failover right after a write it does not know is unreplicated):
// the new master never had the grant; the old master learns of the
// promotion over the bus at once and turns replica, its clients are
// redirected (MOVED), and another client acquires the key on the new
// master while the first still holds it. Heal lifts the cut
// and waits for a healthy cluster (it resynchronises, losing the key).
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

// clusterKind is a kind of the cluster topology that aims at a held key:
// its window is one key held for ttl less half a second, with a TTL of
// ttl, for a run of dur; process: it needs to kill nodes.
func clusterKind[T any, P faultOf[T]](name string, ttl, dur time.Duration, process bool, summary string, plan func(Setup) Fault) Kind {
	return Kind{
		Name:    name,
		Family:  "cluster",
		Window:  Workload{Keys: 1, TTL: ttl, Hold: ttl - 500*time.Millisecond, Interval: 3 * time.Second, Duration: dur},
		Summary: summary,
		Needs:   Needs{Topology: cluster.TopologyCluster, Cluster: cluster.Abilities{Process: process}, TTL: true},
		Plan:    func(_ *rand.Rand, s Setup) Fault { return plan(s) },
		Decode:  decode[T, P],
	}
}

// Refuse says why the fault does not fit s, or "".
func (f *ClusterFailoverUnreplicated) Refuse(s Setup) string {
	return f.refuseAs("cluster-failover-unreplicated", s)
}

// refuseAs is Refuse of the kind called kind (cluster-partition-master
// shares it).
func (f *ClusterFailoverUnreplicated) refuseAs(kind string, s Setup) string {
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

// Arm is the failover before the grant replicates (cutBeforeGrant) on
// Redis Cluster: the primary is the master of the key's slot, cut from its
// replica (with partition, from every other node).
func (f *ClusterFailoverUnreplicated) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	rc, err := redisClusterOf(t)
	if err != nil {
		return false, err
	}
	if t.View == nil {
		return false, errNoView
	}
	// The next grant follows a release within a millisecond: the owners
	// of the held keys are asked for now, so that the cut follows the
	// end of a hold at once (a replay asks then).
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

// cutOff cuts master from replica, or, with partition, from every other
// node.
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

// Start promotes the replica (CLUSTER FAILOVER FORCE) and waits until it
// says it is a master.
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

// Heal lifts the cut and waits for a healthy cluster.
func (f *ClusterFailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	return healthy(ctx, t, f.lift)
}

// ClusterKillMaster kills the master of a held key's slot (SIGKILL): the
// other masters call it failed after the node timeout (1 s) and its
// replica is promoted with whatever it had received; a grant the master
// had not yet replicated is lost with it. Heal restarts the killed node,
// which rejoins as a replica of its promoted one (it keeps its
// nodes.conf; its data is gone without persistence), and waits for a
// healthy cluster.
type ClusterKillMaster struct {
	Aim
}

var clusterKillMasterKind = clusterKind[ClusterKillMaster]("cluster-kill-master", 5*time.Second, 20*time.Second, true,
	"kill the master of a held key's slot; the cluster promotes its replica, which has the key if it was replicated",
	func(s Setup) Fault { return &ClusterKillMaster{Aim: newAim(s)} })

// Refuse says why the fault does not fit s, or "".
func (f *ClusterKillMaster) Refuse(s Setup) string {
	return f.refuse("cluster-kill-master", s.Nodes)
}

func (f *ClusterKillMaster) String() string {
	s := "cluster-kill-master: kill the master of a held key's slot"
	return s + f.says(func(d *Decision) string { return "master " + nodeNames(d.Targets) + " killed at " + d.at() })
}

// Arm waits for a grant and aims at the master of its key's slot, as the
// cluster then says; a replay aims at the recorded offset.
func (f *ClusterKillMaster) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	d, err := armAtGrant(ctx, t, base, f.Decision, func(_ context.Context, _ *cluster.RedisCluster, master *cluster.Node) ([]int, string, error) {
		return []int{master.Index()}, "", nil
	})
	return f.settle(d, err)
}

// settle keeps an arm's decision, when there is one, and reports whether
// it struck.
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
// at the nodes targets picks from the master of the granted key's slot,
// as the cluster then says, or says why it missed; a replay's decision
// says what it found live. It returns the decision (nil when the cluster
// could not be asked, with the error).
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

// Start kills the master.
func (f *ClusterKillMaster) Start(_ context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	n, err := node(t, f.Decision.Targets[0])
	if err != nil {
		return err
	}
	return n.Kill()
}

// Heal restarts the killed node and waits for a healthy cluster.
func (f *ClusterKillMaster) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return healthy(ctx, t, func(*cluster.RedisCluster) error { return restartDown(ctx, t, f.Decision.Targets[:1]) })
}

// ClusterPartitionMaster is cluster-failover-unreplicated's aim with a
// partition instead of a forced failover: when a hold ends, the master of
// its key's slot is cut from every other node (the replication stream and
// the cluster bus, both ways; the clients still reach it), so the grant it
// gives next is never replicated. The majority calls it failed after the
// node timeout (1 s) and promotes its replica without the key, while the
// master, a minority of one, keeps accepting writes until it notices (the
// node timeout again, then CLUSTERDOWN); the next client acquires the key
// on the promoted replica while the first still holds it. Start waits for
// the promotion; Heal lifts the cut and waits for a healthy cluster (the
// old master rejoins as a replica).
type ClusterPartitionMaster struct {
	ClusterFailoverUnreplicated
}

var clusterPartitionMasterKind = clusterKind[ClusterPartitionMaster]("cluster-partition-master", 8*time.Second, 30*time.Second, false,
	"cut the master of a key's slot from every other node right before a grant: it keeps granting until the node timeout, and the majority promotes its replica without the key",
	func(s Setup) Fault {
		return &ClusterPartitionMaster{ClusterFailoverUnreplicated{GrantWait: Duration(min(s.TTL/2, 500*time.Millisecond)), Aim: newAim(s)}}
	})

// Refuse says why the fault does not fit s, or "".
func (f *ClusterPartitionMaster) Refuse(s Setup) string {
	return f.refuseAs("cluster-partition-master", s)
}

func (f *ClusterPartitionMaster) String() string {
	s := "cluster-partition-master: cut a key's master from every other node right before a grant, the majority promotes its replica"
	return s + f.says(func(d *Decision) string { return "master " + nodeNames(d.Targets[:1]) + " cut off at " + d.at() })
}

// Arm is cluster-failover-unreplicated's, with the master cut from every
// node.
func (f *ClusterPartitionMaster) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	f.partition = true
	return f.ClusterFailoverUnreplicated.Arm(ctx, t, base)
}

// Start waits until the majority has promoted the replica.
func (f *ClusterPartitionMaster) Start(ctx context.Context, t *Target) error {
	f.partition = true
	return f.ClusterFailoverUnreplicated.Start(ctx, t)
}

// ClusterMigrate moves the slot of a held key to another master while
// it is held, as an operator's live resharding does
// (cluster.RedisCluster.MigrateSlot): the old master migrates it, the
// new one imports it, MIGRATE moves the key with its remaining TTL, and
// the slot is given to the new master. A client whose key is gone from
// the old master is redirected (ASK, then MOVED) and finds it, still
// held, on the new one. The new master is the first other master by
// index after the old one. Heal waits for a healthy cluster; the slot
// stays where it moved.
type ClusterMigrate struct {
	Aim
}

var clusterMigrateKind = clusterKind[ClusterMigrate]("cluster-migrate", 3*time.Second, 20*time.Second, false,
	"move the slot of a held key to another master while it is held (SETSLOT MIGRATING and IMPORTING, MIGRATE, SETSLOT NODE): the key moves with its TTL and clients follow ASK and MOVED",
	func(s Setup) Fault { return &ClusterMigrate{Aim: newAim(s)} })

// Refuse says why the fault does not fit s, or "".
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

// Arm waits for a grant and aims at the master of its key's slot, as the
// cluster then says, and the next master after it; a replay aims at the
// recorded offset.
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

// nextMaster returns the first of masters (by index) after from, wrapping
// round, other than from; nil if there is none.
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

// Start moves the slot.
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

// Heal waits for a healthy cluster.
func (f *ClusterMigrate) Heal(ctx context.Context, t *Target) error { return healthy(ctx, t, nil) }
