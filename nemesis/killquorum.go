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

// KillQuorum is the restart case of the Redis distributed-locks page,
// aimed: a hold that exactly a bare majority of the nodes granted, one of
// those nodes SIGKILLed while the hold is valid and restarted at once. A
// node without persistence comes back empty: the nodes that still hold
// the lease are a minority, and the restarted node with the nodes that
// never granted it are a majority that can grant the lock to a second
// client while the first still counts on it (and why the page asks for a
// delayed restart).
//
// A bare majority is rare on a healthy cluster: every node grants a free
// key, and only contention splits them. With Isolate the fault makes one,
// as the page's example does ("D and E are unreachable"): once the key is
// about to be free (a hold ends, or none is open) it black-holes the
// nodes outside a bare majority (Cut) from every client, waits for a
// grant by exactly the nodes left, lifts the cut and kills one of them.
// Without Isolate (schedules written before it) it waits for contention
// to make the bare majority.
//
// Pick chooses which granting node (and, with Isolate, where the cut
// starts), counted from the lowest, wrapping. MinLeft is the least
// validity the hold must have left: a restart takes about 100 ms. With
// RestartDelay the node stays down that long instead (the delayed
// restart, drawn when the run's kill faults restart delayed): the
// control, where every lease the node granted is over before it is back;
// it is restarted the delay after the kill, in the background.
// On a single-instance lock the bare majority is the one node, and the
// kill takes every copy of the lease.
type KillQuorum struct {
	Pick         int      `json:"pick"`
	MinLeft      Duration `json:"min_left"`
	RestartDelay Duration `json:"restart_delay,omitempty"`
	Isolate      bool     `json:"isolate,omitempty"`
	// Cut are the nodes Isolate cut off (decided when it struck; a replay
	// cuts the same ones at the decision's offset).
	Cut []int `json:"cut,omitempty"`
	Aim

	restart background // the delayed restart, RestartDelay after the kill
}

var _ aimedFault = (*KillQuorum)(nil)

// Names of the toxics of a kill-quorum's cut.
const (
	killQuorumUp   = "kill_quorum_" + upstream
	killQuorumDown = "kill_quorum_" + downstream
)

var killQuorumKind = Kind{
	Name:    "kill-quorum",
	Family:  "kill",
	Twin:    Twin{Kinds: []string{"kill"}, Restart: RestartImmediate},
	Window:  Workload{Keys: 1, Hold: 800 * time.Millisecond, Interval: 250 * time.Millisecond},
	Summary: "cut the nodes outside a bare majority off the clients until that majority grants a hold, then kill one of its nodes while the hold is valid; restart it at once (or, with delayed restarts, after the delay)",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true, Network: true}, TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		k := &KillQuorum{Pick: rng.IntN(max(1, s.Nodes)), MinLeft: Duration(s.TTL / 4), Isolate: s.Nodes > quorum(s.Nodes), Aim: newAim(s)}
		if s.Restart == RestartDelayed {
			k.RestartDelay = Duration(s.TTL + s.TTL/2)
			if s.RestartDelay > 0 {
				k.RestartDelay = Duration(s.RestartDelay)
			}
			k.Active = max(k.Active, k.RestartDelay)
		}
		return k
	},
	Decode: decode[KillQuorum],
}

// Refuse says why the fault does not fit s, or "".
func (k *KillQuorum) Refuse(s Setup) string {
	if k.Pick < 0 || k.MinLeft < 0 || k.RestartDelay < 0 {
		return "kill-quorum: negative pick, min_left or restart_delay"
	}
	if k.Active < k.RestartDelay {
		return fmt.Sprintf("kill-quorum: active %v is shorter than the restart delay %v", time.Duration(k.Active), time.Duration(k.RestartDelay))
	}
	if len(k.Cut) > 0 {
		if err := checkNodes(k.Cut, s.Nodes); err != nil {
			return fmt.Sprintf("kill-quorum: cut: %v", err)
		}
		if want := s.Nodes - quorum(s.Nodes); len(k.Cut) != want {
			return fmt.Sprintf("kill-quorum: cut %s: the nodes outside a bare majority of %d are %d, not %d", nodeNames(k.Cut), s.Nodes, want, len(k.Cut))
		}
	}
	return k.refuse("kill-quorum", s.Nodes)
}

func (k *KillQuorum) String() string {
	restart := "restart at once"
	if k.RestartDelay > 0 {
		restart = "restart after " + time.Duration(k.RestartDelay).String()
	}
	s := "kill-quorum: kill one node of a hold a bare majority granted, " + restart
	if k.Isolate {
		s = "kill-quorum: cut a minority off until a bare majority grants, kill one of its nodes, " + restart
	}
	if k.struck() {
		what := "kill " + nodeNames(k.Decision.Targets) + ", " + restart
		if len(k.Cut) > 0 {
			what = "cut " + nodeNames(k.Cut) + " from " + k.Decision.at() + " until the grant, " + what
		}
		return s + decided(k.Decision, what)
	}
	return s + decided(k.Decision, "")
}

// Arm waits for a grant (or extend) by exactly a bare majority with at
// least MinLeft of validity left, and picks one of its nodes; with
// Isolate it first cuts the other nodes off (see KillQuorum).
func (k *KillQuorum) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	if k.Isolate && nodes > quorum(nodes) {
		return k.armCut(ctx, t, base, nodes)
	}
	return k.decide(ctx, t, base, func(c Change, left time.Duration) (aim, bool) {
		if (c.Kind != HoldGranted && c.Kind != HoldExtended) || !bare(c.Hold, nodes, nil) || left < time.Duration(k.MinLeft) {
			return aim{}, false
		}
		return aim{targets: nth(c.Hold.Granted, k.Pick, 1)}, true
	})
}

// armCut is Arm with Isolate: wait until the key is about to be free,
// cut the nodes outside a bare majority off every client, wait for the
// grant the others give, and lift the cut before the kill. A replay cuts
// the recorded nodes at the recorded offset.
func (k *KillQuorum) armCut(ctx context.Context, t *Target, base time.Time, nodes int) (bool, error) {
	rec := k.Decision
	after, missed, err := keyAboutFree(ctx, t, base, rec)
	if missed != nil || err != nil {
		k.Decision = missed
		return false, err
	}
	cut := nth(allNodes(nodes), k.Pick, nodes-quorum(nodes))
	if rec != nil && len(k.Cut) > 0 {
		cut = k.Cut
	}
	at := runNow(base)
	err = blackHoleNodes(ctx, t, cut, killQuorumUp, killQuorumDown)
	var grant Change
	if err == nil {
		grant, err = WaitFor(ctx, t.View, after, func(c Change) bool {
			return c.Kind == HoldGranted && c.Time >= at && bare(c.Hold, nodes, cut) &&
				time.Duration(c.Hold.ValidUntil-runNow(base)) >= time.Duration(k.MinLeft)
		})
	}
	heal := clearToxics(context.WithoutCancel(ctx), t, killQuorumUp, killQuorumDown)
	switch {
	case heal != nil:
		return false, heal
	case err != nil && ctx.Err() == nil:
		return false, err
	case err != nil:
		k.Decision = &Decision{Missed: "no grant by the bare majority the cut left within the step's window"}
		if rec != nil {
			k.Decision.Replay = verdict(rec, k.Decision, 0)
		}
		return false, nil
	}
	h := grant.Hold
	k.Cut = cut
	d := &Decision{
		At:      Duration(at),
		Trigger: &Trigger{Change: HoldGranted, Client: h.Client, Key: h.Key, Granted: slices.Clone(h.Granted), Left: Duration(h.ValidUntil - runNow(base))},
		Targets: nth(h.Granted, k.Pick, 1),
	}
	if rec != nil {
		if len(rec.Targets) > 0 {
			d.Targets = rec.Targets
		}
		d.Replay = verdict(rec, d, sameHold)
	}
	k.Decision = d
	return true, nil
}

// blackHoleNodes cuts nodes off every client group both ways, as a
// partition does (see Partition), under the toxic names up and down.
func blackHoleNodes(ctx context.Context, t *Target, nodes []int, up, down string) error {
	var errs []error
	for g := range t.Cluster.Groups() {
		for _, i := range nodes {
			n, err := node(t, i)
			if err != nil {
				return err
			}
			errs = append(errs, blackHole(ctx, n.GroupLink(g), up, down))
		}
	}
	return errors.Join(errs...)
}

// Start kills the chosen node and restarts it at once, or RestartDelay
// later (in the background: the step goes on meanwhile), so that the
// node is down for the delay exactly, not for the rest of the step.
func (k *KillQuorum) Start(ctx context.Context, t *Target) error {
	if !k.struck() {
		return nil
	}
	kill := &Kill{Nodes: k.Decision.Targets, RestartDelay: k.RestartDelay}
	if err := kill.Start(ctx, t); err != nil || k.RestartDelay == 0 {
		return err
	}
	k.restart.start(func(stop <-chan struct{}) error {
		timer := time.NewTimer(time.Duration(k.RestartDelay))
		defer timer.Stop()
		select {
		case <-stop:
			return nil // Heal restarts it
		case <-timer.C:
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
		defer cancel()
		return kill.Heal(rctx, t)
	})
	return nil
}

// Heal lifts a cut still in place and restarts the node if it is still
// down.
func (k *KillQuorum) Heal(ctx context.Context, t *Target) error {
	lift := clearToxics(ctx, t, killQuorumUp, killQuorumDown)
	if !k.struck() {
		return lift
	}
	return errors.Join(lift, k.restart.halt(), (&Kill{Nodes: k.Decision.Targets}).Heal(ctx, t))
}
