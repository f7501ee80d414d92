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

// ArmedFault is a targeted kind's fault, which strikes at a moment of a
// hold seen in Target.View. Run calls Arm at the step's offset; on a
// strike it records the start (String names the concrete targets) and
// calls Start; without one the step leaves no event in the history. The
// Decision is part of the fault's JSON parameters; a fault loaded with
// one replays it at the recorded offset on the recorded targets
// (Decision.Replay says where the live state differed).
type ArmedFault interface {
	Fault
	// Arm waits until the moment to strike, or until ctx is done (false,
	// nil). base is the run's start, the clock of the history and View.
	Arm(ctx context.Context, t *Target, base time.Time) (bool, error)
	// Lasts is how long it stays active once struck: Run arms it for the
	// step's time less this.
	Lasts() time.Duration
}

type aimedFault interface {
	ArmedFault
	RefusingFault
	LastingFault
}

var errNoView = errors.New("no view of the run's holds to aim at")

// Aim is what every targeted fault has: how long it looks for its moment,
// how long it stays active once struck, and what it decided.
type Aim struct {
	Window   Duration  `json:"window"`
	Active   Duration  `json:"active"`
	Decision *Decision `json:"decision,omitempty"`
}

// newAim looks for two TTLs (a few grants under contention) and stays
// active for a TTL, for a second client to acquire what the strike took.
func newAim(s Setup) Aim {
	ttl := max(s.TTL, time.Millisecond)
	return Aim{Window: Duration(2 * ttl), Active: Duration(ttl)}
}

func (a *Aim) MinActive() time.Duration { return time.Duration(a.Window + a.Active) }

func (a *Aim) Lasts() time.Duration { return time.Duration(a.Active) }

func (a *Aim) aimed() *Aim { return a }

func (a *Aim) struck() bool {
	return a.Decision != nil && a.Decision.Missed == "" && a.Decision.Trigger != nil
}

func (a *Aim) decide(ctx context.Context, t *Target, base time.Time, pick func(c Change, left time.Duration) (aim, bool)) (bool, error) {
	d, err := watch(ctx, t, base, a.Decision, pick)
	if err != nil {
		return false, err
	}
	a.Decision = d
	return a.struck(), nil
}

// refuse says why the aim's durations, or its recorded node targets
// (unless nodes is -1: the targets are not nodes), do not fit, or "".
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
	// At is when it struck, from the run's start.
	At Duration `json:"at"`
	// Trigger is the hold whose change it struck at.
	Trigger *Trigger `json:"trigger,omitempty"`
	// Targets are the nodes (or, for a stall, the client) it struck.
	Targets []int `json:"targets"`
	// Amount is the jump, stall or delay, when the kind has one.
	Amount Duration `json:"amount,omitempty"`
	// Missed says why it did not strike.
	Missed string `json:"missed,omitempty"`
	// Replay is a replay's verdict: "same", or where it differed.
	Replay string `json:"replay,omitempty"`
}

// Trigger is the hold a targeted fault struck at.
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

// holdText describes a hold. A lock that claims no validity is given a
// century (locks.UntilRelease): more than a year left reads "held until
// its release", as explain reads it.
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

type aim struct {
	targets []int
	amount  time.Duration
}

func runNow(base time.Time) int64 { return time.Since(base).Nanoseconds() }

// watch follows t.View from now until a change of an open, valid hold
// for which pick returns ok; ctx's end is no error, but a miss. A
// recorded decision is replayed instead.
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
// Replay saying whether the live state then held the recorded trigger.
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

// judged is d with, in a replay (rec not nil), the verdict on aspects.
func judged(rec, d *Decision, aspects int) *Decision {
	if rec != nil {
		d.Replay = verdict(rec, d, aspects)
	}
	return d
}

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

// verdict is the one replay verdict: "missed: …", "same" on every aspect
// asked for, else the first on which live differs from rec.
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

func differs(rec *Trigger, live string) string {
	return fmt.Sprintf("differs: recorded %s; live: %s", rec, live)
}

// keyAboutFree waits until a key is about to be free (delay-grant,
// kill-quorum's cut): while holds are open, until one ends; a replay,
// until the recorded offset. It returns the cursor to follow t.View
// from, or the decision that says why the step missed.
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

// says is decided, with what drawn from the decision once it struck.
func (a *Aim) says(what func(d *Decision) string) string {
	if !a.struck() {
		return decided(a.Decision, "")
	}
	return decided(a.Decision, what(a.Decision))
}

func (d *Decision) at() string { return time.Duration(d.At).Round(time.Millisecond).String() }

// decided describes a fault's decision for String ("" before one).
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

// Strike is what one targeted step of a run did, read from its
// schedule.json (Strikes): the step's index, kind, description, whether
// it struck, and its Decision.
type Strike struct {
	Step   int    `json:"step"`
	Kind   string `json:"kind"`
	Struck bool   `json:"struck"`
	Desc   string `json:"desc"`
	Decision
}

func (s Strike) String() string {
	line := fmt.Sprintf("step %d: %s", s.Step, s.Desc)
	if s.Replay != "" {
		line += "; replay: " + s.Replay
	}
	return line
}

// Strikes returns the targeted steps' decisions of the schedule at path.
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
		out = append(out, Strike{Step: i, Kind: st.Kind, Struck: a.aimed().struck(), Desc: f.String(), Decision: *d})
	}
	return out, nil
}

// Aimed describes the targeted steps of the schedule saved at path.
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

// View is the run's live holds, implemented by the harness. It is a log
// of changes with a cursor, as etcd's watch follows a revision: a fault
// that must not miss a grant reads the snapshot (Holds), then follows
// Next from its cursor, without polling.
type View interface {
	// Holds returns the holds open now, oldest grant first, and the
	// sequence number of the last change they include.
	Holds() (holds []Hold, seq uint64)
	// Next returns the changes with a sequence number above after, in
	// order, waiting until there is one or ctx is done. The view keeps
	// the most recent changes only (harness: 4096): a caller that fell
	// further behind sees a gap in their sequence numbers.
	Next(ctx context.Context, after uint64) ([]Change, error)
}

// Hold is one client's hold of one key, from the acquire that returned
// ok until the client gave the lease up. Times are nanoseconds from the
// run's base, the clock of the history.
type Hold struct {
	// Client is the client that holds (the history's process).
	Client int
	// Group is the holder's client group (cluster.Node.GroupLink).
	Group int
	Key   string
	Token string
	Fence int64
	// Granted are the nodes whose grant made the hold (or its last
	// extend), as the history's "nodes"; meaningless unless Reported.
	Granted  []int
	Reported bool
	Acquired int64
	// ValidUntil is the end of the lease's validity; Deadline the same
	// instant with a monotonic reading, to wait for.
	ValidUntil int64
	Deadline   time.Time
	// InSection: between its first validity check and its write or
	// giving up.
	InSection bool
	// Checked is when the holder last checked its validity (0: not yet),
	// Checks how often this hold; a section's second check is its last
	// before the write.
	Checked int64
	Checks  int
	// Ended is when the client invoked its release (or gave the lease up);
	// 0 while open.
	Ended int64
}

type ChangeKind string

// The changes of a hold, in order: HoldGranted, any number of
// HoldExtended and of sections (HoldEntered, HoldChecked, HoldLeft), then
// HoldEnded.
const (
	HoldGranted  ChangeKind = "granted"
	HoldExtended ChangeKind = "extended" // a new validity and Granted
	// HoldEntered: the holder checked its validity and entered its
	// critical section.
	HoldEntered ChangeKind = "entered"
	// HoldChecked: its last check before its write (a stalled holder
	// stalls right after it).
	HoldChecked ChangeKind = "checked"
	// HoldLeft: it wrote, or gave up (a failed check, an interruption).
	HoldLeft  ChangeKind = "left"
	HoldEnded ChangeKind = "ended"
)

type Change struct {
	// Seq numbers the changes of the run from 1, consecutively.
	Seq  uint64
	Kind ChangeKind
	Time int64
	// Hold is the hold right after the change.
	Hold Hold
}

// WaitFor follows v from the cursor after until a change that matches,
// or ctx's error.
func WaitFor(ctx context.Context, v View, after uint64, match func(Change) bool) (Change, error) {
	for {
		changes, err := v.Next(ctx, after)
		if err != nil {
			return Change{}, err
		}
		for _, c := range changes {
			if match(c) {
				return c, nil
			}
			after = c.Seq
		}
	}
}
