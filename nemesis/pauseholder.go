package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// HoldStaller is a ClientStaller that sizes a stall when it begins:
// right after the holder's last validity check, from the validity its
// lease has left then.
type HoldStaller interface {
	ClientStaller
	// StallHold makes the next client that passes its last validity
	// check before a resource access call size with its id and the
	// validity left, and wait for what size returns. The returned
	// function withdraws a stall that has not begun yet.
	StallHold(size func(client int, left time.Duration) time.Duration) (withdraw func())
}

// PauseHolder stalls the next holder right after its last validity check
// for the validity it has left plus Margin: the GC pause that outlives
// the lease by just enough for another client to take the lock and
// write, the shortest stall that breaks a lock without fencing. With
// Stall set, the stall is Stall whatever the validity left (the safety
// envelope sweeps it). The decision's target is the stalled client.
type PauseHolder struct {
	Margin Duration `json:"margin"`
	Stall  Duration `json:"stall,omitempty"`
	Aim

	withdraw func()
}

var _ aimedFault = (*PauseHolder)(nil)

var pauseHolderKind = Kind{
	Name:    "pause-holder",
	Family:  "client-pause",
	Twin:    Twin{Kinds: []string{"client-pause"}},
	Window:  Workload{Keys: 1, TTL: 500 * time.Millisecond, Hold: 100 * time.Millisecond, Interval: time.Second},
	Summary: "stall a holder right after its last validity check for just over the validity it has left",
	Needs:   Needs{TTL: true},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Stalled for up to a TTL, then a TTL for the late write to land.
		a := newAim(s)
		a.Active = Duration(2 * s.TTL)
		return &PauseHolder{Margin: Duration(s.TTL / 5), Aim: a}
	},
	Decode: decode[PauseHolder],
}

// Refuse says why the fault does not fit s, or "".
func (p *PauseHolder) Refuse(Setup) string {
	if p.Margin <= 0 && p.Stall <= 0 {
		return fmt.Sprintf("pause-holder: margin %v, stall %v: want a positive margin or stall", time.Duration(p.Margin), time.Duration(p.Stall))
	}
	return p.refuse("pause-holder", -1)
}

func (p *PauseHolder) String() string {
	s := "pause-holder: stall a holder after its last check just past its validity"
	return s + p.says(func(d *Decision) string {
		return fmt.Sprintf("stall client %d for %s", d.Targets[0], time.Duration(d.Amount).Round(time.Millisecond))
	})
}

// Arm arms a stall sized at the holder's last check and waits until a
// holder takes it. A replay arms a stall of the recorded length at the
// recorded offset.
func (p *PauseHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	if t.Clients == nil {
		return false, errors.New("no client hook to stall holders")
	}
	if p.Decision != nil {
		d, err := replay(ctx, t, base, p.Decision)
		if err != nil || d.Missed != "" {
			p.Decision = d
			return false, err
		}
		p.Decision = d
		p.withdraw = t.Clients.Stall(time.Duration(d.Amount))
		return true, nil
	}
	hs, ok := t.Clients.(HoldStaller)
	if !ok {
		return false, errors.New("the client hook cannot size a stall at the holder's check")
	}
	type taken struct {
		client      int
		left, stall time.Duration
		at          int64
	}
	ch := make(chan taken, 1)
	margin, fixed := time.Duration(p.Margin), time.Duration(p.Stall)
	ttl := time.Duration(p.Active) / 2 // Plan: stalled up to a TTL, then a TTL for the late write
	withdraw := hs.StallHold(func(client int, left time.Duration) time.Duration {
		// Just past the validity left, but never longer than a TTL and
		// the margin: a lease that claims no validity (a lock that renews
		// itself holds until it is told) would be stalled for ever.
		st := min(max(left, 0), ttl) + margin
		if fixed > 0 {
			st = fixed
		}
		ch <- taken{client, left, st, runNow(base)}
		return st
	})
	select {
	case <-ctx.Done():
		withdraw()
		select { // taken as the window closed
		case tk := <-ch:
			p.Decision = p.decision(t, tk.client, tk.left, tk.stall, tk.at)
			return true, nil
		default:
		}
		p.Decision = &Decision{Missed: "no holder passed its last check within the step's window"}
		return false, nil
	case tk := <-ch:
		p.Decision = p.decision(t, tk.client, tk.left, tk.stall, tk.at)
		return true, nil
	}
}

// decision records a stall of client, with what the view knows of its
// hold.
func (p *PauseHolder) decision(t *Target, client int, left, stall time.Duration, at int64) *Decision {
	tr := &Trigger{Change: HoldChecked, Client: client, Left: Duration(left)}
	if t.View != nil {
		holds, _ := t.View.Holds()
		if i := slices.IndexFunc(holds, func(h Hold) bool { return h.Client == client }); i >= 0 {
			tr.Key, tr.Granted = holds[i].Key, holds[i].Granted
		}
	}
	return &Decision{At: Duration(at), Trigger: tr, Targets: []int{client}, Amount: Duration(stall)}
}

// Start does nothing more: the stall began when the holder took it (a
// replay's stall is armed, and taken by the next holder to check).
func (p *PauseHolder) Start(context.Context, *Target) error { return nil }

// Heal withdraws a replay's stall that no holder took; a stall under way
// runs its course.
func (p *PauseHolder) Heal(context.Context, *Target) error {
	if p.withdraw != nil {
		p.withdraw()
		p.withdraw = nil
	}
	return nil
}
