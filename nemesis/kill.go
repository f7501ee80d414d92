package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// Kill SIGKILLs nodes and restarts them at once (empty, without
// persistence), or, with RestartDelay, at Heal: the Redis page's delayed
// restart, after every lock the node granted has expired.
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

// restartDelay is s.RestartDelay when set, else 1.5 TTLs.
func restartDelay(s Setup) Duration {
	if s.RestartDelay > 0 {
		return Duration(s.RestartDelay)
	}
	return Duration(s.TTL + s.TTL/2)
}

func (k *Kill) Refuse(s Setup) string {
	if err := checkNodes(k.Nodes, s.Nodes); err != nil {
		return "kill: " + err.Error()
	}
	if k.RestartDelay < 0 {
		return fmt.Sprintf("kill: negative restart delay %v", time.Duration(k.RestartDelay))
	}
	return ""
}

func (k *Kill) MinActive() time.Duration { return time.Duration(k.RestartDelay) }

func (k *Kill) String() string {
	if k.RestartDelay == 0 {
		return fmt.Sprintf("kill %s, restart at once", nodeNames(k.Nodes))
	}
	return fmt.Sprintf("kill %s, restart after %s", nodeNames(k.Nodes), time.Duration(k.RestartDelay))
}

func (k *Kill) Start(ctx context.Context, t *Target) error {
	err := eachNode(t, k.Nodes, func(n *cluster.Node) error { return n.Kill() })
	if k.RestartDelay == 0 {
		err = errors.Join(err, k.Heal(ctx, t))
	}
	return err
}

func (k *Kill) Heal(ctx context.Context, t *Target) error { return restartDown(ctx, t, k.Nodes) }

// restartDown restarts every node of t at idx that is not running.
func restartDown(ctx context.Context, t *Target, idx []int) error {
	return eachNode(t, idx, func(n *cluster.Node) error {
		if n.Running() {
			return nil
		}
		return n.Restart(ctx)
	})
}

// KillQuorum is the Redis page's restart case, aimed: one node of a hold
// a bare majority granted is SIGKILLed while the hold is valid and
// restarted at once, so that, empty, it and the nodes that never granted
// make a majority for a second client. A bare majority is rare on a
// healthy cluster, so with Isolate (older schedules lack it) the fault
// makes one, as the page's example does: once the key is about to be
// free it black-holes the nodes outside a bare majority (Cut) until the
// others grant. MinLeft covers a restart's ~100 ms. With RestartDelay
// (the control) the node is restarted that long after the kill.
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
	Decode: decodeAimed[KillQuorum],
}

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

// Arm waits for a grant (or extend) by a bare majority with MinLeft
// left, and picks one of its nodes.
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

// armCut is Arm with Isolate. A replay cuts the recorded nodes at the
// recorded offset.
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

// Start kills the chosen node; a delayed restart is in the background, so
// the node is down for the delay exactly.
func (k *KillQuorum) Start(ctx context.Context, t *Target) error {
	if !k.struck() {
		return nil
	}
	kill := &Kill{Nodes: k.Decision.Targets, RestartDelay: k.RestartDelay}
	if err := kill.Start(ctx, t); err != nil || k.RestartDelay == 0 {
		return err
	}
	k.restart.start(func(stop <-chan struct{}) error {
		if await(context.Background(), stop, time.After(time.Duration(k.RestartDelay))) != nil {
			return nil // Heal restarts it
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
		defer cancel()
		return kill.Heal(rctx, t)
	})
	return nil
}

func (k *KillQuorum) Heal(ctx context.Context, t *Target) error {
	lift := clearToxics(ctx, t, killQuorumUp, killQuorumDown)
	if !k.struck() {
		return lift
	}
	return errors.Join(lift, k.restart.halt(), restartDown(ctx, t, k.Decision.Targets))
}

// Pause SIGSTOPs nodes until Heal: commands sent meanwhile run late, and
// keys expire by the wall clock meanwhile.
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

func (p *Pause) Refuse(s Setup) string {
	return refusal("pause", checkNodes(p.Nodes, s.Nodes))
}

func (p *Pause) String() string { return fmt.Sprintf("pause %s", nodeNames(p.Nodes)) }

func (p *Pause) Start(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error { return n.Pause() })
}

func (p *Pause) Heal(_ context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if !n.Paused() {
			return nil
		}
		return n.Resume()
	})
}

// PowerLoss SIGKILLs nodes, drops what they did not fsync (lazyfs) and
// restarts them; a process kill alone keeps the page cache.
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

func (p *PowerLoss) Refuse(s Setup) string {
	return refusal("power-loss", checkNodes(p.Nodes, s.Nodes))
}

func (p *PowerLoss) String() string {
	return fmt.Sprintf("power-loss %s: kill, drop unsynced writes, restart at once", nodeNames(p.Nodes))
}

func (p *PowerLoss) Start(ctx context.Context, t *Target) error {
	return eachNode(t, p.Nodes, func(n *cluster.Node) error {
		if err := n.Kill(); err != nil {
			return err
		}
		_, derr := n.DropUnsynced()
		return errors.Join(derr, n.Restart(ctx))
	})
}

func (p *PowerLoss) Heal(ctx context.Context, t *Target) error { return restartDown(ctx, t, p.Nodes) }

// PowerLossHolder is PowerLoss the moment a node has granted a hold:
// under appendfsync everysec the grant is almost never synced yet.
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
	Decode: decodeAimed[PowerLossHolder],
}

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

func (p *PowerLossHolder) Start(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return (&PowerLoss{Nodes: p.Decision.Targets}).Start(ctx, t)
}

func (p *PowerLossHolder) Heal(ctx context.Context, t *Target) error {
	if !p.struck() {
		return nil
	}
	return restartDown(ctx, t, p.Decision.Targets)
}
