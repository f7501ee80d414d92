package envelope

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// TestLookup: a fault and its parameter, or a one-line refusal.
func TestLookup(t *testing.T) {
	if f, err := Lookup("pause", ""); err != nil || f.Param != "stall" {
		t.Errorf("pause: %+v, %v", f.Param, err)
	}
	for _, tc := range [][2]string{{"clock", "stall"}, {"earthquake", ""}} {
		if _, err := Lookup(tc[0], tc[1]); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Lookup(%q, %q): %v, want a one-line error", tc[0], tc[1], err)
		}
	}
}

// TestSchedules: each fault's schedule loads as the harness will load
// it, every step of the sized fault, and a run too short for one strike
// is refused.
func TestSchedules(t *testing.T) {
	for _, f := range Faults {
		for _, multi := range []bool{false, true} {
			if f.MultiOnly && !multi {
				continue
			}
			o := Options{Fault: f, TTL: 500 * time.Millisecond, Hold: 100 * time.Millisecond, Duration: 6 * time.Second}
			path := filepath.Join(t.TempDir(), "schedule.json")
			if err := writeSchedule(path, o, 0.8, multi, 1); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			nodes, lock := 1, "setnx"
			if multi {
				nodes, lock = 3, "redlock"
			}
			sc, err := nemesis.Load(path, nemesis.Setup{Lock: lock, MultiNode: multi, Nodes: nodes, Groups: 2, TTL: o.TTL, Topology: cluster.TopologyMasters, Abilities: cluster.Abilities{Process: true, Clock: true, Network: true}})
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if len(sc.Steps) == 0 || !strings.Contains(sc.Steps[0].Desc, sc.Steps[0].Kind) {
				t.Errorf("%s: steps %+v", f.Name, sc.Steps)
			}
			o.Duration = time.Second
			if err := writeSchedule(path, o, 0.8, multi, 1); err == nil {
				t.Errorf("%s: a 1 s run accepted", f.Name)
			}
		}
	}
}

// TestOutputs: the table states the boundary against theory, the SVG has
// one line per lock and theory's mark, on a result made by hand.
func TestOutputs(t *testing.T) {
	f, _ := Lookup("clock", "")
	res := Result{
		Options:  Options{Locks: []string{"setnx", "redlock"}, Fault: f, From: 0.5, To: 1.5, Points: 3, Seeds: []int64{1, 2, 3}, TTL: time.Second, Dir: t.TempDir()},
		Boundary: map[string]float64{"setnx": 1.05, "redlock": math.NaN()},
		Theory:   1,
		Why:      "because",
	}
	for _, lk := range res.Options.Locks {
		for _, v := range []float64{0.5, 1, 1.5} {
			k := 0
			if lk == "setnx" && v > 1 {
				k = 3
			}
			lo, hi := report.Wilson(k, 3)
			res.Points = append(res.Points, Point{Lock: lk, Value: v, Runs: 3, Violations: k, Lo: lo, Hi: hi})
		}
	}
	tab := Table(res)
	for _, want := range []string{"| setnx | 1.050 | 1.000 | +5.0% | 9 | 3 |", "| redlock | none in range |"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	svg := string(SVG(res))
	if strings.Count(svg, `fill="none" stroke-width="2"`) != 2 || !strings.Contains(svg, "theory 1.00") {
		t.Errorf("svg:\n%s", svg)
	}
	if err := write(res); err != nil {
		t.Fatal(err)
	}
}

// TestFalling: a falling fault's boundary is the largest value with a
// violation (with no bisection steps, no run is made), NaN with none.
func TestFalling(t *testing.T) {
	pts := func(viol ...int) []Point {
		var out []Point
		for i, v := range viol {
			out = append(out, Point{Lock: "setnx", Value: 0.3 * float64(i), Runs: 3, Violations: v})
		}
		return out
	}
	o := Options{Bisect: 0}
	for _, tc := range []struct {
		viol []int
		want float64
	}{{[]int{3, 2, 0, 0}, 0.3}, {[]int{3, 3, 3}, 0.6}, {[]int{0, 0}, math.NaN()}, {[]int{0, 1, 0}, 0.3}} {
		got, ran, err := falling(t.Context(), o, "setnx", pts(tc.viol...))
		if err != nil || len(ran) != 0 || !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("falling %v: %v (ran %d, %v), want %v", tc.viol, got, len(ran), err, tc.want)
		}
	}
}

// refusing is a lock that never grants: every targeted strike of a run
// with it finds no hold and misses.
type refusing struct{}

func (refusing) Acquire(context.Context, string) (locks.Lease, error) {
	return locks.Lease{}, fmt.Errorf("busy: %w", locks.ErrNotAcquired)
}
func (refusing) Release(context.Context, locks.Lease) error { return nil }
func (refusing) Extend(_ context.Context, l locks.Lease) (locks.Lease, error) {
	return l, locks.ErrNotHeld
}
func (refusing) Close() error { return nil }

// TestPointMissedIsUnknown: a point whose strikes all missed is
// undecided, never counted as a safe run, and its misses are read from
// the strikes as data.
func TestPointMissedIsUnknown(t *testing.T) {
	if err := locks.Register(locks.Spec{Name: "envelope-test-refusing", Promises: &locks.Promises{ElapsedFromRequest: true},
		New: func(locks.Config) (locks.Lock, error) { return refusing{}, nil }}); err != nil {
		t.Fatal(err)
	}
	f, err := Lookup("pause", "")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Locks: []string{"envelope-test-refusing"}, Fault: f, Seeds: []int64{1}, Duration: 3 * time.Second, TTL: 300 * time.Millisecond, Hold: 50 * time.Millisecond, Clients: 2, Dir: t.TempDir()}
	p, err := point(t.Context(), o, "envelope-test-refusing", 1.5)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 1 || p.Unknown != 1 || p.Violations != 0 || p.Strikes != 0 || p.Misses == 0 {
		t.Fatalf("point %+v: want one undecided run, its strikes all missed", p)
	}
	if lo, hi := p.Lo, p.Hi; lo != 0 || hi != 1 {
		t.Fatalf("interval [%g, %g]: an undecided run measures nothing, want [0, 1]", lo, hi)
	}
}
