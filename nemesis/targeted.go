package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/internal/wait"
)

// ArmedFault is a Fault that waits for its moment: the targeted kinds
// (kill-quorum, clock-holder, clock-minority, clock-majority,
// clock-partition, pause-holder, delay-grant, failover-unreplicated,
// power-loss-holder, …)
// strike at a moment of a
// hold seen in Target.View, not at a time drawn in advance. Run calls Arm
// at the step's offset; when Arm reports a strike, Run records the start
// (at the strike, described by String with the concrete targets) and
// calls Start; when it reports none, the step injects nothing and leaves
// no event in the history.
//
// After the run the decision is part of the fault's JSON parameters (a
// Decision), so schedule.json says what was aimed at and why; a fault
// loaded with a decision replays it: it strikes at the recorded offset on
// the recorded targets and notes where the live state then differs from
// the recorded trigger (Decision.Replay).
type ArmedFault interface {
	Fault
	// Arm waits until the moment to strike, or until ctx is done (then it
	// returns false and nil: nothing to strike). base is the run's start,
	// the clock of the history and of View.
	Arm(ctx context.Context, t *Target, base time.Time) (bool, error)
	// Lasts is how long it stays active once struck: Run arms it for the
	// step's time less this.
	Lasts() time.Duration
}

// aimedFault is what every targeted kind asserts it is: armed, refusing
// what does not fit a run, and lasting its Aim's window and active time.
type aimedFault interface {
	ArmedFault
	RefusingFault
	LastingFault
}

// errNoView is a targeted fault's error on a run that offers no view of
// its holds (Target.View).
var errNoView = errors.New("no view of the run's holds to aim at")

// Aim is what every targeted fault has: how long it looks for its moment
// (Window: two TTLs, a few grants under contention), how long it stays active once struck (Active), and what it
// decided. Its fields are part of the fault's JSON parameters.
type Aim struct {
	Window   Duration  `json:"window"`
	Active   Duration  `json:"active"`
	Decision *Decision `json:"decision,omitempty"`
}

// newAim looks for two TTLs and stays active for a TTL: long enough for
// a second client to acquire what the strike took from the holder.
func newAim(s Setup) Aim {
	ttl := max(s.TTL, time.Millisecond)
	return Aim{Window: Duration(2 * ttl), Active: Duration(ttl)}
}

// MinActive is the window and the active time: Plan gives the step both.
func (a *Aim) MinActive() time.Duration { return time.Duration(a.Window + a.Active) }

// Lasts implements ArmedFault.
func (a *Aim) Lasts() time.Duration { return time.Duration(a.Active) }

func (a *Aim) aimed() *Aim { return a }

// struck reports whether the fault has a decision with a strike.
func (a *Aim) struck() bool {
	return a.Decision != nil && a.Decision.Missed == "" && a.Decision.Trigger != nil
}

// decide runs watch and keeps its decision.
func (a *Aim) decide(ctx context.Context, t *Target, base time.Time, pick func(c Change, left time.Duration) (aim, bool)) (bool, error) {
	d, err := watch(ctx, t, base, a.Decision, pick)
	if err != nil {
		return false, err
	}
	a.Decision = d
	return a.struck(), nil
}

// refuse says why the aim's durations, or its recorded node targets
// (nodes ≥ 0; -1 when the targets are not nodes), do not fit, or "".
func (a *Aim) refuse(kind string, nodes int) string {
	if a.Window <= 0 || a.Active <= 0 {
		return fmt.Sprintf("%s: window %v and active %v must be positive", kind, time.Duration(a.Window), time.Duration(a.Active))
	}
	if a.struck() && nodes >= 0 {
		if err := checkNodes(a.Decision.Targets, nodes); err != nil {
			return fmt.Sprintf("%s: decision: %v", kind, err)
		}
	}
	return ""
}

// Decision is what a targeted fault decided, in schedule.json.
type Decision struct {
	// At is when it struck, from the run's start (the offset a replay
	// strikes at).
	At Duration `json:"at"`
	// Trigger is the hold whose change it struck at.
	Trigger *Trigger `json:"trigger,omitempty"`
	// Targets are the nodes (or, for a stall, the client) it struck.
	Targets []int `json:"targets"`
	// Amount is the jump, stall or delay, when the kind has one.
	Amount Duration `json:"amount,omitempty"`
	// Missed says why it did not strike: no hold fit within its window.
	Missed string `json:"missed,omitempty"`
	// Replay is written by a replay: "same" when the live state at the
	// strike had the recorded trigger, else where it differed.
	Replay string `json:"replay,omitempty"`
}

// Trigger is the hold a targeted fault struck at, as the View showed it.
type Trigger struct {
	Change  ChangeKind `json:"change"`
	Client  int        `json:"client"`
	Key     string     `json:"key"`
	Granted []int      `json:"granted"`
	// Left is the validity the hold had left at the strike.
	Left Duration `json:"left"`
}

func (tr *Trigger) String() string {
	return holdText(tr.Client, tr.Key, tr.Granted, time.Duration(tr.Left))
}

// holdText describes a hold: whose, of which key, granted by which nodes
// (when the lock said) and the validity it has left; a lock that claims
// none is given a validity of a century (locks.UntilRelease), and more
// than a year left reads "held until its release", as explain reads it.
func holdText(client int, key string, granted []int, left time.Duration) string {
	s := fmt.Sprintf("client %d's hold of %s", client, key)
	if len(granted) > 0 {
		s += " granted by " + nodeNames(granted)
	}
	if left > 365*24*time.Hour {
		return s + ", held until its release"
	}
	return s + fmt.Sprintf(" with %s left", left.Round(time.Millisecond))
}

// aim is what a targeted kind decides at a change of a hold: its targets
// and amount, or ok false when the hold does not fit.
type aim struct {
	targets []int
	amount  time.Duration
}

// runNow is the run-clock time (nanoseconds since base).
func runNow(base time.Time) int64 { return time.Since(base).Nanoseconds() }

// watch follows t.View from now until a change of an open, valid hold
// for which pick returns ok, and returns the decision; ctx's end is no
// error: the decision then says it missed. A fault with a recorded
// decision replays it instead (see replay).
func watch(ctx context.Context, t *Target, base time.Time, rec *Decision, pick func(c Change, left time.Duration) (aim, bool)) (*Decision, error) {
	if rec != nil {
		return replay(ctx, t, base, rec), nil
	}
	if t.View == nil {
		return nil, errNoView
	}
	_, after := t.View.Holds()
	for {
		changes, err := t.View.Next(ctx, after)
		if err != nil {
			return &Decision{Missed: "no hold fit within the step's window"}, nil
		}
		for _, c := range changes {
			after = c.Seq
			if c.Hold.Ended != 0 {
				continue
			}
			now := runNow(base)
			left := time.Duration(c.Hold.ValidUntil - now)
			if left <= 0 {
				continue
			}
			a, ok := pick(c, left)
			if !ok {
				continue
			}
			return &Decision{At: Duration(now), Trigger: holdTrigger(c.Kind, c.Hold, now), Targets: a.targets, Amount: Duration(a.amount)}, nil
		}
	}
}

// replay waits until the recorded decision's offset and returns it, with
// Replay saying whether the live state then held the recorded trigger: an
// open hold of the same key, granted by the same nodes, still valid.
// A decision that missed is replayed as a miss.
func replay(ctx context.Context, t *Target, base time.Time, rec *Decision) *Decision {
	d := *rec
	if d.Missed != "" || d.Trigger == nil {
		return &d
	}
	if err := wait.Sleep(ctx, time.Until(base.Add(time.Duration(d.At)))); err != nil {
		d.Missed = "the run ended before the recorded offset"
		return judged(rec, &d, 0)
	}
	d.Replay = replayDiff(t, base, d.Trigger)
	return &d
}

// judged is d, a decision come to live; in a replay (rec, the recorded
// one, not nil) with Replay the verdict on the aspects asked for.
func judged(rec, d *Decision, aspects int) *Decision {
	if rec != nil {
		d.Replay = verdict(rec, d, aspects)
	}
	return d
}

// holdTrigger is the trigger of a strike at a change of h at the
// run-clock time now.
func holdTrigger(change ChangeKind, h Hold, now int64) *Trigger {
	return &Trigger{Change: change, Client: h.Client, Key: h.Key, Granted: slices.Clone(h.Granted), Left: Duration(h.ValidUntil - now)}
}

// The aspects of a strike a replay compares with the recording (verdict).
const (
	sameTargets = 1 << iota // the nodes struck
	sameHolder              // the client that held, and its key
	sameHold                // the key, granted by the same nodes
	sameChange              // the change of the hold it struck at
)

// verdict is a replay's Decision.Replay, live the decision it came to
// where rec was recorded: "missed: …" when it struck nothing, "same" when
// it agrees with rec on every aspect asked for, else the first on which
// it differs.
func verdict(rec, live *Decision, aspects int) string {
	rt, lt := rec.Trigger, live.Trigger
	switch {
	case live.Missed != "":
		return "missed: " + live.Missed
	case aspects&sameTargets != 0 && !slices.Equal(rec.Targets, live.Targets):
		return fmt.Sprintf("differs: recorded nodes %s, live %s", nodeNames(rec.Targets), nodeNames(live.Targets))
	case rt == nil || lt == nil:
		return "same"
	case aspects&sameHolder != 0 && (rt.Client != lt.Client || rt.Key != lt.Key),
		aspects&sameHold != 0 && (rt.Key != lt.Key || !slices.Equal(rt.Granted, lt.Granted)):
		return differs(rt, lt.String())
	case aspects&sameChange != 0 && rt.Change != lt.Change:
		return fmt.Sprintf("differs: recorded %s at %s; live: %s", rt.Change, rt, lt.Change)
	}
	return "same"
}

// differs says what a replay met instead of the recorded trigger.
func differs(rec *Trigger, live string) string {
	return fmt.Sprintf("differs: recorded %s; live: %s", rec, live)
}

// keyAboutFree waits for the moment at which the kinds that strike at a
// key about to be free begin (delay-grant, kill-quorum's cut): a replay
// waits for the recorded offset; otherwise, while holds are open, one of
// them ends. It returns the cursor to follow t.View from, or the decision
// that says why the step struck nothing (the window closed first, or the
// recording missed); an error without a view to follow.
func keyAboutFree(ctx context.Context, t *Target, base time.Time, rec *Decision) (after uint64, missed *Decision, err error) {
	if t.View == nil {
		return 0, nil, errNoView
	}
	holds, after := t.View.Holds()
	if rec != nil {
		if r := replay(ctx, t, base, rec); r.Missed != "" {
			return 0, r, nil
		}
		_, after = t.View.Holds()
		return after, nil, nil
	}
	if len(holds) > 0 {
		c, err := WaitFor(ctx, t.View, after, func(c Change) bool { return c.Kind == HoldEnded })
		if err != nil {
			return 0, &Decision{Missed: "no hold ended within the step's window"}, nil
		}
		after = c.Seq
	}
	return after, nil, nil
}

// replayDiff compares the live holds with the recorded trigger.
func replayDiff(t *Target, base time.Time, tr *Trigger) string {
	if t.View == nil {
		return "no view of the live holds"
	}
	holds, _ := t.View.Holds()
	now := runNow(base)
	var live []string
	for _, h := range holds {
		left := time.Duration(h.ValidUntil - now)
		if h.Key == tr.Key && slices.Equal(h.Granted, tr.Granted) && left > 0 {
			return "same"
		}
		if left > 0 {
			live = append(live, holdText(h.Client, h.Key, h.Granted, left))
		}
	}
	if len(live) == 0 {
		return differs(tr, "no valid hold")
	}
	return differs(tr, strings.Join(live, "; "))
}

// says is decided for an aimed fault, with what drawn from its decision
// only once it struck.
func (a *Aim) says(what func(d *Decision) string) string {
	if !a.struck() {
		return decided(a.Decision, "")
	}
	return decided(a.Decision, what(a.Decision))
}

// at is when the decision struck, to the millisecond.
func (d *Decision) at() string { return time.Duration(d.At).Round(time.Millisecond).String() }

// decided describes a fault's decision for String: its targets once it
// has struck, "" before.
func decided(d *Decision, what string) string {
	switch {
	case d == nil:
		return ""
	case d.Missed != "":
		return " (missed: " + d.Missed + ")"
	case d.Trigger == nil:
		return ""
	}
	return fmt.Sprintf(": %s, at %s", what, d.Trigger)
}

// Strike is what one targeted step of a run did, as data: read from the
// run's schedule.json (Strikes), where each step's decision is kept.
type Strike struct {
	// Step is the step's index in the schedule; Kind its kind.
	Step int    `json:"step"`
	Kind string `json:"kind"`
	// Struck is set when the step struck; Missed says why it did not.
	Struck bool   `json:"struck"`
	Missed string `json:"missed,omitempty"`
	// At is when it struck, from the run's start (the history's clock).
	At Duration `json:"at,omitempty"`
	// Trigger is the hold it struck at; Targets the nodes (or, for a
	// stall, the client) it struck.
	Trigger *Trigger `json:"trigger,omitempty"`
	Targets []int    `json:"targets,omitempty"`
	// Replay is set in a replay: "same" when the live state at the strike
	// had the recorded trigger, else where it differed.
	Replay string `json:"replay,omitempty"`
	// Desc is the step as the schedule describes it.
	Desc string `json:"desc"`
}

// String is the strike in one line: what it struck, or why it missed,
// and in a replay where the live state differed from the recording.
func (s Strike) String() string {
	line := fmt.Sprintf("step %d: %s", s.Step, s.Desc)
	if s.Replay != "" {
		line += "; replay: " + s.Replay
	}
	return line
}

// Strikes returns the decisions of the targeted steps of the schedule
// saved at path, in step order; a step of a kind that aims at nothing,
// or that never reached its moment, has none.
func Strikes(path string) ([]Strike, error) {
	sc, err := read(path)
	if err != nil {
		return nil, err
	}
	var out []Strike
	for i, st := range sc.Steps {
		k, err := Lookup(st.Kind)
		if err != nil {
			return nil, fmt.Errorf("%s: step %d: %w", path, i, err)
		}
		f, err := k.Decode(st.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: step %d (%s): %w", path, i, st.Kind, err)
		}
		a, ok := f.(interface{ aimed() *Aim })
		if !ok || a.aimed().Decision == nil {
			continue
		}
		d := a.aimed().Decision
		out = append(out, Strike{Step: i, Kind: st.Kind, Struck: a.aimed().struck(), Missed: d.Missed, At: d.At, Trigger: d.Trigger,
			Targets: slices.Clone(d.Targets), Replay: d.Replay, Desc: f.String()})
	}
	return out, nil
}

// Aimed describes the targeted steps of the schedule saved at path, one
// line each (Strike.String).
func Aimed(path string) ([]string, error) {
	strikes, err := Strikes(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(strikes))
	for i, s := range strikes {
		out[i] = s.String()
	}
	return out, nil
}
