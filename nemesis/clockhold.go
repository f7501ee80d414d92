package nemesis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The scopes of a targeted clock jump: which of a live hold's granting
// nodes jump. Each is a kind of its own (clock-holder, clock-minority,
// clock-majority), so that the contested cases are cells of their own.
const (
	// ScopeHolder: one granting node. On a multi-node lock only a hold
	// that a bare majority granted is aimed at: then that one node is
	// enough to leave the holder without a majority (the contested case).
	ScopeHolder = "holder"
	// ScopeMinority: as many granting nodes as leave the rest of the
	// granting ones a majority, at most a minority of the nodes (two of
	// five where all five granted, one where four did): the lock's
	// assumption (a minority misbehaves) holds, and RedLock should stay
	// safe. Taking only holds that all nodes granted missed every hold
	// of a run on a loaded machine, where a quarter of the grants or more
	// come from four nodes or three.
	ScopeMinority = "minority"
	// ScopeMajority: a bare majority of the nodes, all granting ones.
	ScopeMajority = "majority"
)

// ClockHold waits for a live hold and jumps the wall clock of some of the
// nodes that granted it forward by the validity the hold has left plus
// Margin, so that their copies of the lease expire while the holder
// still counts on it. Margin covers the part of a node's TTL the lock's
// validity does not count (the drift allowance and the acquire's round
// trip). With Jump set, the jump is Jump whatever the validity left (the
// safety envelope sweeps it). The clocks are set right by Heal. It needs
// the nodes started with the clock shim.
type ClockHold struct {
	Scope  string   `json:"scope"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Jump   Duration `json:"jump,omitempty"`
	Aim
}

var _ aimedFault = (*ClockHold)(nil)

// clockHoldKind is the kind of one scope.
func clockHoldKind(scope, summary string, multi bool) Kind {
	return Kind{
		Name:    "clock-" + scope,
		Family:  "clock",
		Twin:    Twin{Kinds: []string{"clock"}},
		Summary: summary,
		Needs:   Needs{MultiNode: multi, Cluster: cluster.Abilities{Clock: true}, TTL: true},
		Window:  Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
		Plan: func(rng *rand.Rand, s Setup) Fault {
			return &ClockHold{Scope: scope, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Aim: newAim(s)}
		},
		Decode: func(params json.RawMessage) (Fault, error) {
			f, err := decode[ClockHold](params)
			if err != nil {
				return nil, err
			}
			if c := f.(*ClockHold); c.Scope != scope {
				return nil, fmt.Errorf("nemesis: clock-%s: scope %q, want %q", scope, c.Scope, scope)
			}
			return f, nil
		},
	}
}

var (
	clockHolderKind   = clockHoldKind(ScopeHolder, "jump the clock of one node of a live hold (of a bare majority's, on a multi-node lock) just past its validity", false)
	clockMinorityKind = clockHoldKind(ScopeMinority, "jump the clock of a minority of a live hold's nodes just past its validity, leaving it a majority", true)
	clockMajorityKind = clockHoldKind(ScopeMajority, "jump the clock of a majority of a live hold's nodes just past its validity", true)
)

// Refuse says why the fault does not fit s, or "".
func (c *ClockHold) Refuse(s Setup) string {
	kind := "clock-" + c.Scope
	switch {
	case c.Pick < 0 || c.Margin < 0 || c.Jump < 0:
		return kind + ": negative pick, margin or jump"
	case c.Scope == ScopeMinority && (s.Nodes-1)/2 < 1:
		return fmt.Sprintf("%s: %d nodes have no minority to jump", kind, s.Nodes)
	}
	return c.refuse(kind, s.Nodes)
}

func (c *ClockHold) String() string {
	s := fmt.Sprintf("clock-%s: jump the clock of %s of a live hold's nodes just past its validity", c.Scope, map[string]string{ScopeHolder: "one", ScopeMinority: "a minority", ScopeMajority: "a majority"}[c.Scope])
	return s + c.says(func(d *Decision) string {
		return fmt.Sprintf("jump +%s on %s", time.Duration(d.Amount).Round(time.Millisecond), nodeNames(d.Targets))
	})
}

// Arm waits for a grant (or extend) its scope fits, and picks the nodes.
func (c *ClockHold) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	q := quorum(nodes)
	return c.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		granted, ok := grantedBy(ch, nodes)
		if !ok {
			return aim{}, false
		}
		var k int
		switch {
		case c.Scope == ScopeHolder && (nodes == 1 || len(granted) == q):
			k = 1
		case c.Scope == ScopeMinority && len(granted) > q:
			k = min((nodes-1)/2, len(granted)-q)
		case c.Scope == ScopeMajority && len(granted) >= q:
			k = q
		}
		if k == 0 || len(granted) < k {
			return aim{}, false
		}
		amount := left + time.Duration(c.Margin)
		if c.Jump > 0 {
			amount = time.Duration(c.Jump)
		}
		return aim{targets: nth(granted, c.Pick, k), amount: amount}, true
	})
}

// Start jumps the chosen nodes' clocks.
func (c *ClockHold) Start(_ context.Context, t *Target) error { return c.setClocks(t, true) }

// Heal sets their clocks right.
func (c *ClockHold) Heal(_ context.Context, t *Target) error { return c.setClocks(t, false) }
