package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/internal/wait"
)

// Duration is a time.Duration written as "1.5s" in schedule.json.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"1.5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Step is one fault of a schedule: started At the offset from the start
// of the run, healed For later. A composed step holds faults of other
// kinds too (With): they start after the step's own, in order, and heal
// before it, in reverse order.
type Step struct {
	Kind   string          `json:"kind"`
	At     Duration        `json:"at"`
	For    Duration        `json:"for"`
	Desc   string          `json:"desc"`
	Params json.RawMessage `json:"params"`
	With   []Part          `json:"with,omitempty"`
	fault  Fault
}

// Part is one more fault of a composed step.
type Part struct {
	Kind   string          `json:"kind"`
	Desc   string          `json:"desc"`
	Params json.RawMessage `json:"params"`
	fault  Fault
}

// Fault returns the step's own decoded fault.
func (s *Step) Fault() Fault { return s.fault }

func (s *Step) faults() []Fault {
	fs := []Fault{s.fault}
	for _, p := range s.With {
		fs = append(fs, p.fault)
	}
	return fs
}

// Schedule is a run's faults, expanded from the seed, as schedule.json.
type Schedule struct {
	Seed     int64    `json:"seed"`
	Kinds    []string `json:"kinds"`
	Interval Duration `json:"interval"`
	Steps    []Step   `json:"steps"`
}

// Plan expands kinds into a schedule over duration: quiet for interval,
// a fault drawn from rng active for interval (or its MinActive), healed,
// quiet again, and so on, the last healed before the run ends.
func Plan(rng *rand.Rand, seed int64, kinds []Kind, s Setup, duration, interval time.Duration) (Schedule, error) {
	sc := Schedule{Seed: seed, Interval: Duration(interval)}
	for _, k := range kinds {
		sc.Kinds = append(sc.Kinds, k.Name)
	}
	if len(kinds) == 0 {
		return sc, nil
	}
	if interval <= 0 {
		return sc, errors.New("nemesis: interval must be positive")
	}
	for at := interval; at+interval <= duration; at += 2 * interval {
		k := kinds[rng.IntN(len(kinds))]
		f := k.Plan(rng, s)
		st := Step{Kind: k.Name, fault: f}
		if s.Compose > 1 {
			st.With = compose(rng, kinds, k, f, s)
		}
		active := interval
		for _, g := range st.faults() {
			if l, ok := g.(LastingFault); ok {
				active = max(active, l.MinActive())
			}
		}
		if at+active > duration {
			break
		}
		st.At, st.For = Duration(at), Duration(active)
		if err := st.encode(); err != nil {
			return sc, err
		}
		sc.Steps = append(sc.Steps, st)
		at += active - interval
	}
	return sc, nil
}

// compose draws up to s.Compose−1 faults to go with f, of kind k: each of
// another kind, none targeted (a targeted fault strikes alone), at most
// one on the nodes' processes (a kill and a pause of one node would undo
// each other).
func compose(rng *rand.Rand, kinds []Kind, k Kind, f Fault, s Setup) []Part {
	if _, armed := f.(ArmedFault); armed {
		return nil
	}
	extra := rng.IntN(min(s.Compose, len(kinds)))
	used := []string{k.Name}
	process := k.Needs.Cluster.Process
	var parts []Part
	for range extra {
		var free []Kind
		for _, o := range kinds {
			if !slices.Contains(used, o.Name) && !(process && o.Needs.Cluster.Process) {
				free = append(free, o)
			}
		}
		if len(free) == 0 {
			break
		}
		o := free[rng.IntN(len(free))]
		g := o.Plan(rng, s)
		used = append(used, o.Name)
		if _, armed := g.(ArmedFault); armed {
			continue
		}
		process = process || o.Needs.Cluster.Process
		parts = append(parts, Part{Kind: o.Name, fault: g})
	}
	return parts
}

func (st *Step) encode() error {
	params, err := json.Marshal(st.fault)
	if err != nil {
		return fmt.Errorf("nemesis: %s: %w", st.Kind, err)
	}
	st.Params, st.Desc = params, st.fault.String()
	for i := range st.With {
		p := &st.With[i]
		if p.fault == nil {
			continue
		}
		if p.Params, err = json.Marshal(p.fault); err != nil {
			return fmt.Errorf("nemesis: %s: %w", p.Kind, err)
		}
		p.Desc = p.fault.String()
	}
	return nil
}

// Save writes the schedule (Encode) to path (safefs.WriteFile).
func (sc Schedule) Save(path string) error {
	b, err := sc.Encode()
	if err != nil {
		return err
	}
	if err := safefs.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("nemesis: %w", err)
	}
	return nil
}

// Encode returns the schedule as indented JSON, its steps' parameters
// and descriptions taken from their faults as they are now (after a run,
// with the targeted faults' decisions).
func (sc Schedule) Encode() ([]byte, error) {
	sc.Steps = slices.Clone(sc.Steps)
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.fault == nil {
			continue
		}
		st.With = slices.Clone(st.With)
		if err := st.encode(); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("nemesis: %w", err)
	}
	return append(b, '\n'), nil
}

// ReadSchedule reads a schedule file without decoding its steps' faults
// (Load decodes and checks them against a run).
func ReadSchedule(path string) (Schedule, error) { return read(path) }

// read reads a schedule file, which may come from someone else: a link or
// a special file is refused (safefs.ReadFile).
func read(path string) (Schedule, error) {
	var sc Schedule
	b, err := safefs.ReadFile(path)
	if err != nil {
		return sc, fmt.Errorf("nemesis: %w", err)
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return sc, fmt.Errorf("nemesis: %s: %w", path, err)
	}
	return sc, nil
}

// ScheduleKinds returns the fault kinds of the schedule at path: those it
// lists under "kinds", then those of its steps the list lacks, so that a
// replay is set up for them before Load checks its steps.
func ScheduleKinds(path string) ([]string, error) {
	sc, err := read(path)
	if err != nil {
		return nil, err
	}
	kinds := slices.Clone(sc.Kinds)
	for _, st := range sc.Steps {
		for _, p := range append([]Part{{Kind: st.Kind}}, st.With...) {
			if !slices.Contains(kinds, p.Kind) {
				kinds = append(kinds, p.Kind)
			}
		}
	}
	return kinds, nil
}

// Load reads a schedule and decodes each step's fault, refusing one the
// run s cannot play (Check, RefusingFault) before anything starts.
func Load(path string, s Setup) (Schedule, error) {
	sc, err := read(path)
	if err != nil {
		return sc, err
	}
	if _, err := Check(sc.Kinds, s); err != nil {
		return sc, err
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		at := fmt.Sprintf("%s: step %d", path, i)
		if st.fault, err = loadFault(st.Kind, st.Params, s, at); err != nil {
			return sc, err
		}
		for j := range st.With {
			p := &st.With[j]
			if p.fault, err = loadFault(p.Kind, p.Params, s, fmt.Sprintf("%s, with %d", at, j)); err != nil {
				return sc, err
			}
			if _, armed := p.fault.(ArmedFault); armed {
				return sc, fmt.Errorf("nemesis: %s, with %d (%s): a targeted fault strikes alone, at its moment, and is never composed", at, j, p.Kind)
			}
			p.Desc = p.fault.String()
		}
		if _, armed := st.fault.(ArmedFault); armed && len(st.With) > 0 {
			return sc, fmt.Errorf("nemesis: %s (%s): a targeted fault strikes alone, at its moment, and is never composed", at, st.Kind)
		}
		if st.At < 0 || st.For < 0 || (i > 0 && st.At < sc.Steps[i-1].At+sc.Steps[i-1].For) {
			return sc, fmt.Errorf("nemesis: %s: step %d: steps must not overlap or go back in time", path, i)
		}
		st.Desc = st.fault.String()
	}
	return sc, nil
}

// loadFault is Load's for one fault; at names it in the error.
func loadFault(kind string, params json.RawMessage, s Setup, at string) (Fault, error) {
	ks, err := Check([]string{kind}, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	name := fmt.Sprintf("%s (%s)", at, kind)
	f, err := ks[0].Decode(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r, ok := f.(RefusingFault); ok {
		if why := r.Refuse(s); why != "" {
			return nil, fmt.Errorf("nemesis: %s refused: %s", name, why)
		}
	}
	return f, nil
}

// Recorder writes a nemesis event to the history, on the run's clock.
type Recorder interface {
	Append(e history.Event) error
}

// Run executes the schedule against t from base (the run's start). When
// ctx ends, the active fault is healed before Run returns ctx's error:
// no fault outlives Run. A fault that fails to start is healed, recorded
// and reported, and the schedule goes on.
func Run(ctx context.Context, sc Schedule, t *Target, base time.Time, rec Recorder) error {
	var errs []error
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if err := wait.Sleep(ctx, time.Until(base.Add(time.Duration(st.At)))); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := runStep(ctx, st, t, base, rec); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
	return errors.Join(errs...)
}

const healTimeout = 30 * time.Second

// runStep runs one step. A targeted fault first waits for its moment,
// for the step's time less what it needs active, and records nothing
// without one. Each fault is recorded as it starts and as it heals.
func runStep(ctx context.Context, st *Step, t *Target, base time.Time, rec Recorder) (err error) {
	f := st.fault
	if f == nil {
		return fmt.Errorf("nemesis: step %q has no decoded fault", st.Desc)
	}
	desc, active := st.Desc, time.Duration(st.For)
	if a, ok := f.(ArmedFault); ok {
		end := base.Add(time.Duration(st.At + st.For))
		need := a.Lasts()
		actx, cancel := context.WithDeadline(ctx, end.Add(-need))
		struck, err := a.Arm(actx, t, base)
		cancel()
		if err != nil {
			return fmt.Errorf("nemesis: arm %s: %w", st.Desc, err)
		}
		if !struck {
			return nil
		}
		desc, active = f.String(), max(time.Until(end), need)
	}
	type part struct {
		f            Fault
		desc, family string
	}
	parts := []part{{f, desc, familyOf(st.Kind)}}
	for _, p := range st.With {
		if p.fault == nil {
			return fmt.Errorf("nemesis: step %q: part %q has no decoded fault", st.Desc, p.Desc)
		}
		parts = append(parts, part{p.fault, p.fault.String(), familyOf(p.Kind)})
	}
	started := 0
	heal := func() error {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
		defer cancel()
		var err error
		for i := started - 1; i >= 0; i-- {
			p := parts[i]
			herr := p.f.Heal(hctx, t)
			ev := history.Event{Type: history.Info, F: history.FaultStop, Process: history.NemesisProcess, Value: p.desc}
			if herr != nil {
				ev.Error = herr.Error()
				herr = fmt.Errorf("nemesis: heal %s: %w", p.desc, herr)
			}
			err = errors.Join(err, herr, rec.Append(ev))
		}
		started = 0
		return err
	}
	defer func() { err = errors.Join(err, heal()) }()
	for _, p := range parts {
		if err := rec.Append(history.Event{Type: history.Info, F: history.FaultStart, Process: history.NemesisProcess, Value: p.desc, Family: p.family}); err != nil {
			return err
		}
		started++
		if err := p.f.Start(ctx, t); err != nil {
			return fmt.Errorf("nemesis: start %s: %w", p.desc, err)
		}
	}
	end := time.Now().Add(active)
	if e, ok := f.(EndingFault); ok && len(parts) == 1 {
		timer := time.NewTimer(active)
		defer timer.Stop()
		select {
		case <-e.Ended():
			if err := heal(); err != nil {
				return err
			}
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return wait.Sleep(ctx, time.Until(end))
}
