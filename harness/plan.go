package harness

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// Plan is a Config validated once and ready to run: defaults set, lock looked
// up, programs found, fault kinds and limits checked, fault schedule drawn
// (or loaded from Faults.Replay) and refused when it injects nothing, one
// seed drawn per client. A caller that checks a whole matrix makes its Plans
// first and runs each once (its faults keep state while active).
type Plan struct {
	cfg      Config
	lock     locks.Spec
	setup    nemesis.Setup
	needs    nemesis.Needs
	schedule nemesis.Schedule
	seeds    []uint64 // one per client
}

// NewPlan validates c (all but its Output, which Plan.Run takes) and draws
// what the run draws from its seed; each refusal is one line.
func NewPlan(c Config) (*Plan, error) { return newPlan(c, true) }

// FitsSchedule reports whether c draws a fault schedule that fits its
// duration, with NewPlan's error when not: NewPlan's checks but the programs,
// the lock's own check and the machine's limits, cheap enough for every seed
// of many durations (the release gate's shortest runs).
func FitsSchedule(c Config) error {
	_, err := newPlan(c, false)
	return err
}

func newPlan(c Config, full bool) (*Plan, error) {
	lock, err := locks.Lookup(c.Lock)
	if err != nil {
		return nil, err
	}
	if !c.ClientProcess && !lock.Process && stopsProcesses(c.Nemesis) {
		// client-stop needs the clients to be processes: a Go lock is served
		// in client processes of its own, as --client-process would, and the
		// recorded configuration says so, so that its command reproduces it.
		c.ClientProcess = true
	}
	if c.ClientProcess {
		if lock, err = locks.AsProcess(lock); err != nil {
			return nil, fmt.Errorf("harness: client process: %w", err)
		}
	}
	p := &Plan{lock: lock}
	if p.cfg, err = c.withDefaults(lock); err != nil {
		return nil, err
	}
	if err := p.cfg.checkBounds(); err != nil {
		return nil, err
	}
	kinds, err := p.setUp()
	if err != nil {
		return nil, err
	}
	if full {
		if err := p.cfg.checkLimits(p.setup.Groups, p.lock.Process); err != nil {
			return nil, err
		}
		if err := cluster.Spec(p.cfg.Cluster).CheckPrograms(p.needs.Cluster.Clock); err != nil {
			return nil, err
		}
		if lock.Check != nil {
			// What the lock itself needs (the Python locks: an interpreter
			// that imports redis).
			if err := lock.Check(); err != nil {
				return nil, err
			}
		}
	}
	// The run's one random source: the fault schedule, then one seed per
	// client.
	rng := rand.New(rand.NewPCG(uint64(p.cfg.Seed), 0x6c6f636b))
	if p.cfg.Replay != "" {
		p.schedule, err = nemesis.Load(p.cfg.Replay, p.setup)
	} else {
		p.schedule, err = nemesis.Plan(rng, p.cfg.Seed, kinds, p.setup, p.cfg.Duration, p.cfg.NemesisInterval)
	}
	if err != nil {
		return nil, err
	}
	if err := p.cfg.checkSchedule(p.schedule); err != nil {
		return nil, err
	}
	p.seeds = make([]uint64, p.cfg.Clients)
	for i := range p.seeds {
		p.seeds[i] = rng.Uint64()
	}
	return p, nil
}

// stopsProcesses reports whether a named kind stops whole client processes
// (nemesis.Needs.ClientProcesses); setUp refuses an unknown name.
func stopsProcesses(names []string) bool {
	for _, name := range names {
		if k, err := nemesis.Lookup(name); err == nil && k.Needs.ClientProcesses {
			return true
		}
	}
	return false
}

// Config returns the configuration the plan runs, its defaults set.
func (p *Plan) Config() Config { return p.cfg }

// setUp describes the run to its fault kinds (nemesis.Setup: the cluster's
// abilities, the client groups they draw faults for) and checks each.
func (p *Plan) setUp() ([]nemesis.Kind, error) {
	c := p.cfg
	var kinds []nemesis.Kind
	for _, name := range c.Nemesis {
		k, err := nemesis.Lookup(name)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	p.needs = nemesis.NeedsOf(kinds)
	p.setup = nemesis.Setup{
		Lock: c.Lock, MultiNode: p.lock.MultiNode, Nodes: c.Nodes, Groups: max(1, p.needs.Groups), TTL: c.TTL,
		Topology: c.Topology, Abilities: cluster.Spec(c.Cluster).Abilities(), Persistent: c.Persistence,
		RestartDelay: c.RestartDelay, Restart: c.Restart, ClientProcesses: p.lock.Process, GoClients: p.lock.Lang() == "Go", Compose: c.NemesisCompose,
	}
	return nemesis.Check(c.Nemesis, p.setup)
}

// clusterOptions open the run's cluster in dir: the proxy groups the kinds
// need, and the clock shim when one needs it.
func (p *Plan) clusterOptions(dir string, o runOptions) []cluster.Option {
	opts := []cluster.Option{cluster.WithDir(filepath.Join(dir, "nodes")), cluster.WithProxyGroups(p.setup.Groups), cluster.WithLog(o.log)}
	if p.needs.Cluster.Clock {
		opts = append(opts, cluster.WithClockShim())
	}
	if p.needs.Cluster.PowerLoss {
		opts = append(opts, cluster.WithLazyFS())
	}
	return opts
}

// checkSchedule refuses a run with faults whose schedule injects none, or has
// a step after the run's end: a fault that does nothing is no fault test.
func (c Config) checkSchedule(sc nemesis.Schedule) error {
	if len(c.Nemesis) == 0 {
		return nil
	}
	if len(sc.Steps) == 0 {
		if c.Replay != "" {
			return fmt.Errorf("harness: replay %s: the schedule has no step; a run without a fault is not a fault test (leave out the replay for a fault-free run)", c.Replay)
		}
		return fmt.Errorf("harness: nemesis %s: no fault fits in the %s run (each comes after %s of quiet and stays at least as long, some kinds longer); a run without a fault is not a fault test: lengthen the duration or shorten the nemesis interval",
			strings.Join(c.Nemesis, ","), c.Duration, c.NemesisInterval)
	}
	for i, st := range sc.Steps {
		if end := time.Duration(st.At + st.For); end > c.Duration {
			return fmt.Errorf("harness: replay %s: step %d (%s) ends at %s, after the %s run: lengthen the duration", c.Replay, i, st.Kind, end, c.Duration)
		}
	}
	return nil
}
