package matrix

import (
	"flag"
	"fmt"
	"regexp"
	"time"
)

// Flags are the flags `torture matrix` and `torture gate` share: which
// cells and seeds, how long a run, where the output goes, how many runs
// side by side, porcupine's limit. They are declared once, here, as
// harness.BindFlags declares a run's.
type Flags struct {
	Seeds        string
	Duration     time.Duration
	Out          string
	Cells        string
	List         bool
	CheckTimeout time.Duration
	Jobs         int
}

// BindFlags registers the shared flags on fs, writing into f; f's values
// on entry are the flags' defaults. notes, by flag name, add what a
// command says more of a flag (the gate's budget may shorten --duration).
func BindFlags(fs *flag.FlagSet, f *Flags, notes map[string]string) {
	note := func(name, usage string) string {
		if n := notes[name]; n != "" {
			return usage + "; " + n
		}
		return usage
	}
	fs.StringVar(&f.Seeds, "seeds", f.Seeds, note("seeds", "seeds, comma-separated, each a number or a range a..b (e.g. 1..10); every cell runs once per seed"))
	fs.DurationVar(&f.Duration, "duration", f.Duration, note("duration", "duration of every run (raised where a cell needs more)"))
	fs.StringVar(&f.Out, "out", f.Out, note("out", "directory under which the output's directory is created"))
	fs.StringVar(&f.Cells, "cells", f.Cells, note("cells", "run only the cells whose name matches this regular expression"))
	fs.BoolVar(&f.List, "list", f.List, note("list", "list the cells with their expectations and exit"))
	fs.DurationVar(&f.CheckTimeout, "check-timeout", f.CheckTimeout, note("check-timeout", "porcupine time limit per model (exceeded: verdict unknown)"))
	fs.IntVar(&f.Jobs, "jobs", f.Jobs, note("jobs", "runs side by side (each starts its own nodes on free ports); 0: as many as the machine holds, measured while they run"))
}

// Check refuses a value out of range, naming the flag, and returns the
// seeds --seeds lists.
func (f Flags) Check() ([]int64, error) {
	seeds, err := ParseSeeds(f.Seeds)
	if err != nil {
		return nil, err
	}
	if _, err := regexp.Compile(f.Cells); err != nil {
		return nil, fmt.Errorf("--cells: %v", err)
	}
	switch {
	case f.Duration <= 0:
		return nil, fmt.Errorf("--duration must be positive, got %s", f.Duration)
	case f.CheckTimeout <= 0:
		return nil, fmt.Errorf("--check-timeout must be positive, got %s", f.CheckTimeout)
	case f.Jobs < 0 || f.Jobs > 1024:
		return nil, fmt.Errorf("--jobs must be 0 (as many as the machine holds) to 1024, got %d", f.Jobs)
	}
	return seeds, nil
}

// Select returns the specs whose name the regular expression re matches
// (all of them when re is empty), and an error when it matches none.
func Select(specs []Spec, re string) ([]Spec, error) {
	if re == "" {
		return specs, nil
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return nil, fmt.Errorf("--cells: %v", err)
	}
	var keep []Spec
	for _, s := range specs {
		if r.MatchString(s.Name) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("--cells %q matches no cell", re)
	}
	return keep, nil
}
