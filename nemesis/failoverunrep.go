package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

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

var _ aimedFault = (*FailoverUnreplicated)(nil)

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
	if _, err := waitPromotion(wctx, fo, old); err != nil {
		return err
	}
	return f.fo.blackHole(old.Proxy())
}

// Heal removes the cuts and waits until the old primary has rejoined as a
// replica (the failover kind's heal).
func (f *FailoverUnreplicated) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return f.fo.Heal(ctx, t)
}
