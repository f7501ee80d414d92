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

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "250ms".
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
// of the run, healed For later.
type Step struct {
	Kind   string          `json:"kind"`
	At     Duration        `json:"at"`
	For    Duration        `json:"for"`
	Desc   string          `json:"desc"`
	Params json.RawMessage `json:"params"`
	fault  Fault
}

// Fault returns the step's decoded fault.
func (s *Step) Fault() Fault { return s.fault }

// Schedule is the explicit plan of a run's faults, expanded from the seed
// and saved as schedule.json so the run can be replayed.
type Schedule struct {
	Seed     int64    `json:"seed"`
	Kinds    []string `json:"kinds"`
	Interval Duration `json:"interval"`
	Steps    []Step   `json:"steps"`
}

// Plan expands kinds into a schedule over duration: quiet for interval,
// a fault drawn from rng active for interval, healed, quiet again, and
// so on; one fault at a time, the last healed before the run ends.
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
		active := interval
		if l, ok := f.(LastingFault); ok {
			active = max(active, l.MinActive())
		}
		if at+active > duration {
			break
		}
		params, err := json.Marshal(f)
		if err != nil {
			return sc, fmt.Errorf("nemesis: %s: %w", k.Name, err)
		}
		sc.Steps = append(sc.Steps, Step{Kind: k.Name, At: Duration(at), For: Duration(active), Desc: f.String(), Params: params, fault: f})
		at += active - interval
	}
	return sc, nil
}

// Save writes the schedule as indented JSON. Each step's parameters and
// description are taken from its fault as it is now: after a run, the
// decisions of the targeted faults (ArmedFault) are part of them.
func (sc Schedule) Save(path string) error {
	sc.Steps = slices.Clone(sc.Steps)
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.fault == nil {
			continue
		}
		params, err := json.Marshal(st.fault)
		if err != nil {
			return fmt.Errorf("nemesis: %s: %w", st.Kind, err)
		}
		st.Params, st.Desc = params, st.fault.String()
	}
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return fmt.Errorf("nemesis: %w", err)
	}
	if err := safefs.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("nemesis: %w", err)
	}
	return nil
}

// ReadSchedule reads a schedule file without decoding its steps' faults
// (Load decodes and checks them against a run).
func ReadSchedule(path string) (Schedule, error) { return read(path) }

// read reads a schedule file without decoding its steps' faults. A
// schedule may come from someone else (a published bundle holds each
// run's, to replay it): one that is a symbolic link or not a regular
// file is refused (safefs.ReadFile).
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
// lists under "kinds", then those of its steps that the list lacks. A
// replay takes them from here, so the run is set up for them (client
// groups, the clock shim) before Load checks every step against that
// setup.
func ScheduleKinds(path string) ([]string, error) {
	sc, err := read(path)
	if err != nil {
		return nil, err
	}
	kinds := slices.Clone(sc.Kinds)
	for _, st := range sc.Steps {
		if !slices.Contains(kinds, st.Kind) {
			kinds = append(kinds, st.Kind)
		}
	}
	return kinds, nil
}

// Load reads a schedule written by Save (or by hand) and decodes each
// step's fault; every kind must be known and able to act on s, and every
// fault must fit s (RefusingFault: its nodes, client groups and
// parameters), so that a schedule the run cannot play is refused before
// anything starts.
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
		ks, err := Check([]string{st.Kind}, s)
		if err != nil {
			return sc, fmt.Errorf("%s: step %d: %w", path, i, err)
		}
		if st.fault, err = ks[0].Decode(st.Params); err != nil {
			return sc, fmt.Errorf("%s: step %d (%s): %w", path, i, st.Kind, err)
		}
		if r, ok := st.fault.(RefusingFault); ok {
			if why := r.Refuse(s); why != "" {
				return sc, fmt.Errorf("nemesis: %s: step %d (%s) refused: %s", path, i, st.Kind, why)
			}
		}
		if st.At < 0 || st.For < 0 || (i > 0 && st.At < sc.Steps[i-1].At+sc.Steps[i-1].For) {
			return sc, fmt.Errorf("nemesis: %s: step %d: steps must not overlap or go back in time", path, i)
		}
		st.Desc = st.fault.String()
	}
	return sc, nil
}

// Recorder writes a nemesis event to the history, stamped on the run's
// shared clock.
type Recorder interface {
	Append(e history.Event) error
}

// Run executes the schedule against t, starting at base (the run's
// start): each step is started at its offset, recorded, healed after its
// active time and recorded again. When ctx ends, the active fault is
// healed (with a context of its own) before Run returns ctx's error; no
// fault outlives Run. A fault that fails to start is healed, recorded and
// reported; the schedule goes on.
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

// healTimeout bounds one heal.
const healTimeout = 30 * time.Second

// runStep runs one step. A targeted fault (ArmedFault) first waits for
// its moment, for the step's time less what the fault needs active; it
// is recorded when it strikes, described with its concrete targets, and
// healed at the step's end; one that finds no moment records nothing.
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
	if err := rec.Append(history.Event{Type: history.Info, F: history.FaultStart, Process: history.NemesisProcess, Value: desc}); err != nil {
		return err
	}
	defer func() {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
		defer cancel()
		herr := f.Heal(hctx, t)
		ev := history.Event{Type: history.Info, F: history.FaultStop, Process: history.NemesisProcess, Value: desc}
		if herr != nil {
			ev.Error = herr.Error()
			herr = fmt.Errorf("nemesis: heal %s: %w", desc, herr)
		}
		err = errors.Join(err, herr, rec.Append(ev))
	}()
	if err := f.Start(ctx, t); err != nil {
		return fmt.Errorf("nemesis: start %s: %w", desc, err)
	}
	return wait.Sleep(ctx, active)
}
