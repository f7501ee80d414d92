package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The kinds that act on the process of nodes: kill (SIGKILL, restarted
// at once or after a delay) and its aimed form kill-quorum, pause
// (SIGSTOP), and power-loss (a kill that drops what the node did not
// fsync) and its aimed form power-loss-holder.

// Kill SIGKILLs nodes. With RestartDelay 0 they are restarted at once (a
// node without persistence comes back empty: it forgets every lock it
// held); otherwise they stay down for RestartDelay (the "delayed restart"
// of the Redis distributed-locks page: at least a TTL, so every lock the
// node granted has expired before it comes back) and are restarted by
// Heal. Whether data survives depends on the nodes' persistence, fixed
// when the nodes start.
type Kill struct {
	Nodes        []int    `json:"nodes"`
	RestartDelay Duration `json:"restart_delay"`
}

var killKind = Kind{
	Name:    "kill",
	Family:  "kill",
	Summary: "SIGKILL nodes; restart at once, or after a delay of at least the TTL",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &Kill{Nodes: someMinority.pick(rng, s.Nodes)}
		delayed := rng.IntN(2) == 1
		switch s.Restart {
		case RestartImmediate:
			delayed = false
		case RestartDelayed:
			delayed = true
		}
		if delayed {
			f.RestartDelay = restartDelay(s)
		}
		return f
	},
	Decode: decode[Kill],
}

// restartDelay is how long a delayed restart of s keeps a node down:
// s.RestartDelay when set, else 1.5 TTLs.
func restartDelay(s Setup) Duration {
	if s.RestartDelay > 0 {
		return Duration(s.RestartDelay)
	}
	return Duration(s.TTL + s.TTL/2)
}

// Refuse says why the fault's nodes or delay do not fit s, or "".
func (k *Kill) Refuse(s Setup) string {
	if err := checkNodes(k.Nodes, s.Nodes); err != nil {
		return "kill: " + err.Error()
	}
	if k.RestartDelay < 0 {
		return fmt.Sprintf("kill: negative restart delay %v", time.Duration(k.RestartDelay))
	}
	return ""
}

// MinActive keeps a delayed restart down for its whole delay.
func (k *Kill) MinActive() time.Duration { return time.Duration(k.RestartDelay) }

func (k *Kill) String() string {
	if k.RestartDelay == 0 {
		return fmt.Sprintf("kill %s, restart at once", nodeNames(k.Nodes))
	}
	return fmt.Sprintf("kill %s, restart after %s", nodeNames(k.Nodes), time.Duration(k.RestartDelay))
}

// Start kills the nodes (and, without a delay, restarts them).
func (k *Kill) Start(ctx context.Context, t *Target) error {
	err := eachNode(t, k.Nodes, func(n *cluster.Node) error { return n.Kill() })
	if k.RestartDelay == 0 {
		err = errors.Join(err, k.Heal(ctx, t))
	}
	return err
}

// Heal restarts every node of the fault that is not running.
func (k *Kill) Heal(ctx context.Context, t *Target) error { return restartDown(ctx, t, k.Nodes) }

// restartDown restarts every node of t at idx that is not running: the
// heal of the kinds that kill.
func restartDown(ctx context.Context, t *Target, idx []int) error {
	return eachNode(t, idx, func(n *cluster.Node) error {
		if n.Running() {
			return nil
		}
		return n.Restart(ctx)
	})
}

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
			k.RestartDelay = restartDelay(s)
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
	err = injectToxics(ctx, t, cut, blackHoleSpecs(killQuorumUp, killQuorumDown)...)
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
		k.Decision = judged(rec, &Decision{Missed: "no grant by the bare majority the cut left within the step's window"}, 0)
		return false, nil
	}
	h := grant.Hold
	k.Cut = cut
	d := &Decision{At: Duration(at), Trigger: holdTrigger(HoldGranted, h, runNow(base)), Targets: nth(h.Granted, k.Pick, 1)}
	if rec != nil && len(rec.Targets) > 0 {
		d.Targets = rec.Targets
	}
	k.Decision = judged(rec, d, sameHold)
	return true, nil
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
	return errors.Join(lift, k.restart.halt(), restartDown(ctx, t, k.Decision.Targets))
}

// Pause SIGSTOPs nodes until Heal SIGCONTs them. Commands sent to a
// paused node on connections opened before the pause are executed after
// it resumes: late writes land. Keys keep expiring by the wall clock
// while the node is stopped.
type Pause struct {
	Nodes []int `json:"nodes"`
}

var pauseKind = Kind{
	Name:    "pause",
	Family:  "pause",
	Summary: "SIGSTOP nodes, SIGCONT them when healed",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true}},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &Pause{Nodes: someMinority.pick(rng, s.Nodes)}
	},
	Decode: decode[Pause],
}

// Refuse says why the fault's nodes do not fit s, or "".
func (p *Pause) Refuse(s Setup) string {
	return refusal("pause", checkNodes(p.Nodes, s.Nodes))
}

func (p *Pause) String() string { return fmt.Sprintf("pause %s", nodeNames(p.Nodes)) }

// Start stops the nodes.
func (p *Pause) Start(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error { return n.Pause() })
}

// Heal resumes them.
func (p *Pause) Heal(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if !n.Paused() {
			return nil
		}
		return n.Resume()
	})
}

// PowerLoss cuts the power of nodes: each is SIGKILLed, what it had
// written to its append-only file but not fsynced is dropped (its data
// folder is on lazyfs, which keeps unsynced writes apart, as the page
// cache and a disk's volatile cache do), and it is restarted at once
// from what was synced. With appendfsync always a node fsyncs every
// write before it replies, so it comes back with every lock it granted;
// with everysec it fsyncs once a second, and a grant of its last second
// is lost, as the Redis documentation warns of a crash (a process kill
// alone keeps the page cache, and loses nothing). Heal restarts a node
// that is still down.
type PowerLoss struct {
	Nodes []int `json:"nodes"`
}

var powerLossKind = Kind{
	Name:    "power-loss",
	Family:  "power-loss",
	Summary: "cut nodes' power: SIGKILL, drop what they wrote but did not fsync, restart at once",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true, PowerLoss: true}, Persistent: true},
	Window:  Workload{Hold: 500 * time.Millisecond},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &PowerLoss{Nodes: targets(rng, s, someMinority)}
	},
	Decode: decode[PowerLoss],
}

// Refuse says why the fault's nodes do not fit s, or "".
func (p *PowerLoss) Refuse(s Setup) string {
	return refusal("power-loss", checkNodes(p.Nodes, s.Nodes))
}

func (p *PowerLoss) String() string {
	return fmt.Sprintf("power-loss %s: kill, drop unsynced writes, restart at once", nodeNames(p.Nodes))
}

// Start kills each node, drops its unsynced writes and restarts it.
func (p *PowerLoss) Start(ctx context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if err := n.Kill(); err != nil {
			return err
		}
		_, derr := n.DropUnsynced()
		return errors.Join(derr, n.Restart(ctx))
	})
}

// Heal restarts every node of the fault that is not running.
func (p *PowerLoss) Heal(ctx context.Context, t *Target) error { return restartDown(ctx, t, p.Nodes) }

// PowerLossHolder cuts the power of a node the moment it has granted a
// hold (on a multi-node lock, one node of a hold a bare majority
// granted), as PowerLoss does: SIGKILL, drop what it wrote but did not
// fsync, restart at once. Under appendfsync everysec the grant, a few
// milliseconds old, is almost never synced yet, so the node comes back
// without it while the holder has most of its validity left: the
// scenario the Redis documentation warns of, tested by every strike. A
// power loss at a time drawn in advance (power-loss) lands on a fresh
// grant only by chance, and with holds that divide its interval, at the
// end of the holds every time. Under appendfsync always the grant was on
// disk before its reply, and the strike must change nothing.
type PowerLossHolder struct {
	Pick    int      `json:"pick"`
	MinLeft Duration `json:"min_left"`
	Aim
}

var powerLossHolderKind = Kind{
	Name:    "power-loss-holder",
	Family:  "power-loss",
	Twin:    Twin{Kinds: []string{"power-loss"}},
	Summary: "cut the power of a node right after it granted a hold (of a bare majority's, on a multi-node lock): SIGKILL, drop what it did not fsync, restart at once",
	Needs:   Needs{Cluster: cluster.Abilities{Process: true, PowerLoss: true}, Persistent: true, TTL: true},
	Window:  Workload{Keys: 1, Hold: 800 * time.Millisecond, Interval: time.Second},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		return &PowerLossHolder{Pick: rng.IntN(max(1, s.Nodes)), MinLeft: Duration(s.TTL / 2), Aim: newAim(s)}
	},
	Decode: decode[PowerLossHolder],
}

// Refuse says why the fault does not fit s, or "".
func (p *PowerLossHolder) Refuse(s Setup) string {
	if p.Pick < 0 || p.MinLeft < 0 {
		return "power-loss-holder: negative pick or min_left"
	}
	return p.refuse("power-loss-holder", s.Nodes)
}

func (p *PowerLossHolder) String() string {
	s := "power-loss-holder: cut the power of a node that has just granted a hold, drop unsynced writes, restart at once"
	return s + p.says(func(d *Decision) string { return "power-loss " + nodeNames(d.Targets) })
}

// Arm waits for a grant with at least MinLeft of validity left: on one
// node, any; on several, one a bare majority granted (the loss of one of
// its nodes' copies leaves the holder without a majority), and picks the
// node.
func (p *PowerLossHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	return p.decide(ctx, t, base, func(c Change, left time.Duration) (aim, bool) {
		if c.Kind != HoldGranted || left < time.Duration(p.MinLeft) {
			return aim{}, false
		}
		if nodes == 1 {
			return aim{targets: []int{0}}, true
		}
		if !bare(c.Hold, nodes, nil) {
			return aim{}, false
		}
		return aim{targets: nth(c.Hold.Granted, p.Pick, 1)}, true
	})
}

// Start cuts the power of the chosen node: kill, drop its unsynced
// writes, restart.
func (p *PowerLossHolder) Start(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return (&PowerLoss{Nodes: p.Decision.Targets}).Start(ctx, t)
}

// Heal restarts the node if it is still down.
func (p *PowerLossHolder) Heal(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return restartDown(ctx, t, p.Decision.Targets)
}
