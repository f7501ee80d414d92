package envelope

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// Fault is one swept fault, its targeted kind and theory's boundary.
type Fault struct {
	// Name selects it (--fault), Param the swept parameter (--param); Doc
	// says what a value means.
	Name, Param, Doc string
	// Unit is the parameter's unit: "TTL" (a multiple) when empty; "rate"
	// for a fraction of real time.
	Unit string
	// MultiOnly: the fault needs a multi-node lock (none yet).
	MultiOnly bool
	// Falling: violations lie below the boundary (a restart delay: the
	// longer the node stays down, the safer); the boundary is then the
	// largest value with a violation.
	Falling bool
	// step returns the kind and parameters of one strike of size v×TTL,
	// and how long it stays active once struck.
	step func(v float64, o Options, multi bool, seed int64) (kind string, f any, active time.Duration)
	// theory is the boundary, in TTLs, and why.
	theory func(o Options) (float64, string)
}

// Faults are the faults an envelope sweeps.
var Faults = []Fault{
	{
		Name: "pause", Param: "stall", Doc: "the holder's stall right after its last validity check, in TTLs (pause-holder with a fixed stall)",
		step: func(v float64, o Options, _ bool, _ int64) (string, any, time.Duration) {
			st := ttlTimes(v, o.TTL)
			return "pause-holder", &nemesis.PauseHolder{Stall: nemesis.Duration(st), Aim: aim(o, st+o.TTL)}, st + o.TTL
		},
		theory: func(o Options) (float64, string) {
			// The check comes a hold after the grant, with TTL − hold −
			// drift − the acquire's time left; the key outlives it by the
			// drift allowance.
			return 1 - float64(o.Hold)/float64(o.TTL), "stall > validity left at the last check (≈ TTL − hold)"
		},
	},
	{
		Name: "clock", Param: "jump", Doc: "a forward jump of the holder's node (setnx) or of a majority of its nodes (RedLock) right after the grant, in TTLs (clock-holder / clock-majority with a fixed jump)",
		step: func(v float64, o Options, multi bool, seed int64) (string, any, time.Duration) {
			scope := nemesis.ScopeHolder
			if multi {
				scope = nemesis.ScopeMajority
			}
			return "clock-" + scope, &nemesis.ClockHold{Scope: scope, Pick: int(seed % 3), Jump: nemesis.Duration(ttlTimes(v, o.TTL)), Aim: aim(o, o.TTL)}, o.TTL
		},
		theory: func(o Options) (float64, string) {
			// Struck right after the grant, the jumped copies expire
			// earlier than the holder's validity by the jump; a second
			// client overlaps the holder when they expire before it
			// releases, a hold after the grant.
			return 1 - float64(o.Hold)/float64(o.TTL), "jump > the key's time left on the node beyond the holder's release (≈ TTL − hold)"
		},
	},
	{
		// A node clock running fast by v (nemesis.ClockDrift), on the
		// single node or two of RedLock's three, three TTLs at a time.
		Name: "drift", Param: "rate", Unit: "rate", Doc: "how fast the node's clock runs (setnx) or a majority's (RedLock), as a fraction of real time: 0.02 is 2% fast (clock-drift)",
		step: func(v float64, o Options, multi bool, _ int64) (string, any, time.Duration) {
			nodes := []int{0}
			if multi {
				nodes = []int{0, 1}
			}
			return "clock-drift", &nemesis.ClockDrift{Nodes: nodes, Rate: v}, 3 * o.TTL
		},
		theory: func(o Options) (float64, string) {
			// A key on a node running v fast lives TTL/(1+v) of real
			// time; the drift allowance (TTL×1% + 2 ms) covers v up to
			// about 0.01 + 2 ms/TTL, and an overlap needs the key's life
			// below the hold: v > TTL/hold − 1.
			allow := 0.01 + float64(2*time.Millisecond)/float64(o.TTL)
			if o.Hold <= 0 {
				return math.Inf(1), fmt.Sprintf("no hold: the holder never uses its validity (the drift allowance covers up to %.3f)", allow)
			}
			return max(allow, float64(o.TTL)/float64(o.Hold)-1), fmt.Sprintf("key life TTL/(1+rate) < the hold: rate > TTL/hold − 1 (the drift allowance TTL×1%% + 2 ms covers up to %.3f)", allow)
		},
	},
	{
		Name: "latency", Param: "latency", Doc: "the latency of every node's replies to one of two client groups, in TTLs, the other group's replies prompt (latency-group with a fixed latency); below a tenth of the TTL, the locks' per-call timeout",
		step: func(v float64, o Options, _ bool, seed int64) (string, any, time.Duration) {
			l := max(ttlTimes(v, o.TTL), time.Millisecond)
			return "latency-group", &nemesis.LatencyGroup{Group: int(seed % 2), Latency: nemesis.Duration(l)}, 2 * o.TTL
		},
		theory: func(o Options) (float64, string) {
			// A slow-group holder granted at a learns it at a + latency
			// and releases a hold later; the key expires at a + TTL, when
			// a prompt client takes it. A lock counting its validity from
			// before the request ends the lease by a + TTL − drift; one
			// counting from the reply (redlock-no-elapsed) or not at all
			// (setnx-seed) overlaps once latency + hold exceed the TTL.
			return 1 - float64(o.Hold)/float64(o.TTL), "latency > TTL − hold for a lock without the elapsed term (setnx-seed, redlock-no-elapsed); none for one that counts from before the request (setnx, redlock)"
		},
	},
	{
		Name: "restart", Param: "delay", Falling: true, Doc: "how long a node of a fresh hold's bare majority (setnx: its one node) stays down after a SIGKILL before it restarts empty, in TTLs (kill-quorum with a fixed restart delay)",
		step: func(v float64, o Options, _ bool, seed int64) (string, any, time.Duration) {
			d := ttlTimes(v, o.TTL)
			a := aim(o, d+o.TTL)
			return "kill-quorum", &nemesis.KillQuorum{Pick: int(seed % 3), MinLeft: nemesis.Duration(o.TTL / 2), RestartDelay: nemesis.Duration(d), Isolate: true, Aim: a}, d + o.TTL
		},
		theory: func(o Options) (float64, string) {
			// Struck just after the grant, the node is back empty after
			// the delay (plus start and reconnect), and a second client
			// takes it (with the node that never granted, for RedLock)
			// if that is before the holder releases, a hold after the
			// grant: below hold ÷ TTL, never above the validity (≈ TTL).
			return float64(o.Hold) / float64(o.TTL), "delay + restart < hold (the holder releases a hold after the grant, within its validity ≈ TTL)"
		},
	},
}

func (f Fault) unit() string { return cmp.Or(f.Unit, "TTL") }

func ttlTimes(v float64, ttl time.Duration) time.Duration {
	return time.Duration(v * float64(ttl)).Round(time.Millisecond)
}

// aim looks for a hold for two TTLs and stays active for active.
func aim(o Options, active time.Duration) nemesis.Aim {
	return nemesis.Aim{Window: nemesis.Duration(2 * o.TTL), Active: nemesis.Duration(active)}
}

// Lookup returns the fault called name with parameter param ("": its own).
func Lookup(name, param string) (Fault, error) {
	var names []string
	for _, f := range Faults {
		if f.Name == name {
			if param != "" && param != f.Param {
				return Fault{}, fmt.Errorf("envelope: fault %s sweeps --param %s, not %q", name, f.Param, param)
			}
			return f, nil
		}
		names = append(names, f.Name+" (--param "+f.Param+")")
	}
	return Fault{}, fmt.Errorf("envelope: unknown fault %q (known: %s)", name, strings.Join(names, ", "))
}

// Options is one envelope.
type Options struct {
	Locks    []string
	Fault    Fault
	From, To float64
	// Points is the sweep's number of points (≥ 2), Bisect the bisection
	// steps after it; every point runs each of Seeds once.
	Points, Bisect int
	Seeds          []int64
	// The workload of every run: clients on one key.
	Duration, TTL, Hold time.Duration
	Clients             int
	// Dir receives runs/, envelope.csv, envelope.svg and table.md.
	Dir string
	// Progress, when set, is told of each run.
	Progress func(string)
}

// Point is the outcome of the runs at one value of the parameter.
type Point struct {
	Lock                      string
	Value                     float64
	Runs, Violations, Unknown int
	// Lo and Hi are the 95% Wilson interval of the violation rate.
	Lo, Hi float64
	// The strikes by report.Strike outcome: missed, with a window, none.
	Misses, Strikes, NoWindow int
}

// Rate is the violation rate of the point's runs with a verdict.
func (p Point) Rate() float64 { return report.NewRate(p.Violations, p.Runs-p.Unknown).Rate }

// Result is an envelope: every point, each lock's boundary (NaN: none).
type Result struct {
	Options  Options
	Points   []Point
	Boundary map[string]float64
	Theory   float64
	Why      string
}

// Check validates the options but Dir, so that a command refuses an
// envelope before it makes the output folder.
func (o Options) Check() error {
	if o.Dir == "" {
		o.Dir = "."
	}
	return o.check()
}

func (o *Options) check() error {
	switch {
	case len(o.Locks) == 0:
		return errors.New("envelope: no --lock")
	case !(o.From < o.To) || o.From < 0:
		return fmt.Errorf("envelope: --from %g --to %g: want 0 ≤ from < to", o.From, o.To)
	case o.Points < 2 || len(o.Seeds) < 1 || o.Bisect < 0:
		return fmt.Errorf("envelope: --points %d, %d seeds, --bisect %d: want ≥ 2, ≥ 1, ≥ 0", o.Points, len(o.Seeds), o.Bisect)
	case o.TTL <= 0 || o.Duration <= 0 || o.Hold < 0 || o.Clients < 2:
		return errors.New("envelope: want a positive TTL and duration, a hold ≥ 0 and at least 2 clients")
	case o.Dir == "":
		return errors.New("envelope: no output directory")
	}
	for _, l := range o.Locks {
		spec, err := locks.Lookup(l)
		if err != nil {
			return err
		}
		if o.Fault.MultiOnly && !spec.MultiNode {
			return fmt.Errorf("envelope: fault %s needs a multi-node lock; %s uses one node", o.Fault.Name, l)
		}
	}
	return nil
}

// Run sweeps and bisects every lock's envelope and writes it into o.Dir.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	res := Result{Options: o, Boundary: map[string]float64{}}
	res.Theory, res.Why = o.Fault.theory(o)
	for _, lk := range o.Locks {
		var sweep []Point
		for i := range o.Points {
			v := o.From + (o.To-o.From)*float64(i)/float64(o.Points-1)
			p, err := point(ctx, o, lk, v)
			if err != nil {
				return res, err
			}
			sweep = append(sweep, p)
		}
		res.Points = append(res.Points, sweep...)
		edge := rising
		if o.Fault.Falling {
			edge = falling
		}
		b, pts, err := edge(ctx, o, lk, sweep)
		res.Points = append(res.Points, pts...)
		if err != nil {
			return res, err
		}
		res.Boundary[lk] = b
	}
	slices.SortStableFunc(res.Points, func(a, b Point) int {
		return cmp.Or(strings.Compare(a.Lock, b.Lock), cmp.Compare(a.Value, b.Value))
	})
	return res, write(res)
}

// rising bisects the sweep before its first violation: it returns the
// least value with one (NaN: none) and the points the bisection ran.
func rising(ctx context.Context, o Options, lk string, sweep []Point) (float64, []Point, error) {
	first := slices.IndexFunc(sweep, func(p Point) bool { return p.Violations > 0 })
	switch first {
	case -1:
		return math.NaN(), nil, nil
	case 0:
		return sweep[0].Value, nil, nil
	}
	return bisect(ctx, o, lk, sweep[first-1].Value, sweep[first].Value)
}

// falling is rising walking down a falling fault's sweep: the boundary is
// the largest value with a violation.
func falling(ctx context.Context, o Options, lk string, sweep []Point) (float64, []Point, error) {
	down := slices.Clone(sweep)
	slices.Reverse(down)
	return rising(ctx, o, lk, down)
}

// bisect halves the interval from safe to bad o.Bisect times; it returns
// the value with a violation nearest safe and the points it ran.
func bisect(ctx context.Context, o Options, lk string, safe, bad float64) (float64, []Point, error) {
	var pts []Point
	for range o.Bisect {
		mid := (safe + bad) / 2
		p, err := point(ctx, o, lk, mid)
		if err != nil {
			return bad, pts, err
		}
		pts = append(pts, p)
		if p.Violations > 0 {
			bad = mid
		} else {
			safe = mid
		}
	}
	return bad, pts, nil
}

// point runs every seed of o of lock at value v.
func point(ctx context.Context, o Options, lk string, v float64) (Point, error) {
	spec, err := locks.Lookup(lk)
	if err != nil {
		return Point{}, err
	}
	p := Point{Lock: lk, Value: v}
	for _, seed := range o.Seeds {
		dir := filepath.Join(o.Dir, "runs", fmt.Sprintf("%s-%.4f-seed%d", strings.ReplaceAll(lk, "/", "_"), v, seed))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return p, fmt.Errorf("envelope: %w", err)
		}
		sched := filepath.Join(dir, "planned.json")
		if err := writeSchedule(sched, o, v, spec.MultiNode, seed); err != nil {
			return p, err
		}
		nodes := 1
		if spec.MultiNode {
			nodes = 3
		}
		cfg := harness.Config{
			Workload: harness.Workload{Lock: lk, Clients: o.Clients, Keys: 1, Duration: o.Duration, TTL: o.TTL, Hold: o.Hold, NoHold: o.Hold == 0, Seed: seed},
			Cluster:  harness.Cluster{Nodes: nodes},
			Faults:   harness.Faults{Replay: sched},
		}
		plan, err := harness.NewPlan(cfg)
		if err != nil {
			return p, fmt.Errorf("envelope: %s at %g seed %d: %w", lk, v, seed, err)
		}
		// Judged as every run: one whose strikes all missed, or left no
		// window, is unknown, never safe.
		r, err := trial.Run(ctx, plan, filepath.Join(dir, "run"), trial.Options{NoHTML: true})
		if err != nil {
			return p, fmt.Errorf("envelope: %s at %g seed %d: %w", lk, v, seed, err)
		}
		p.Runs++
		switch r.Check.Outcome() {
		case checker.OutcomeViolation:
			p.Violations++
		case checker.OutcomeSafe:
		default:
			p.Unknown++
		}
		for _, s := range r.Strikes {
			switch s.Outcome {
			case report.StrikeWindow:
				p.Strikes++
			case report.StrikeMissed:
				p.Misses++
			default:
				p.NoWindow++
			}
		}
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("%s %s=%.3f seed %d: %s (%d strikes with a window, %d missed, %d without one)", lk, o.Fault.Param, v, seed, r.Check.Outcome(), p.Strikes, p.Misses, p.NoWindow))
		}
	}
	p.Lo, p.Hi = report.Wilson(p.Violations, p.Runs-p.Unknown)
	return p, nil
}

// writeSchedule writes the run's schedule: strikes of size v×TTL, one
// after the other with a quiet TTL between, until the run's end.
func writeSchedule(path string, o Options, v float64, multi bool, seed int64) error {
	kind, f, active := o.Fault.step(v, o, multi, seed)
	params, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	sc := nemesis.Schedule{Seed: seed, Kinds: []string{kind}, Interval: nemesis.Duration(o.TTL)}
	step := 2*o.TTL + active
	for at := o.TTL; at+step <= o.Duration; at += step + o.TTL {
		sc.Steps = append(sc.Steps, nemesis.Step{Kind: kind, At: nemesis.Duration(at), For: nemesis.Duration(step), Params: params})
	}
	if len(sc.Steps) == 0 {
		return fmt.Errorf("envelope: a %s run leaves no room for a %s strike of %g TTLs (each takes %s): lengthen --duration", o.Duration, o.Fault.Name, v, step+o.TTL)
	}
	return sc.Save(path)
}
