package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/report"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"1/1", Shard{1, 1}, true},
		{"2/4", Shard{2, 4}, true},
		{"4/4", Shard{4, 4}, true},
		{"0/4", Shard{}, false},
		{"5/4", Shard{}, false},
		{"1/0", Shard{}, false},
		{"-1/4", Shard{}, false},
		{"2", Shard{}, false},
		{"a/b", Shard{}, false},
		{"", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestPlan: the shards of a plan hold every run once, in the matrix's
// order, balanced by expected time; the plan is the same every time.
func TestPlan(t *testing.T) {
	specs := Cells(false)
	o := Options{Seeds: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Duration: 12 * time.Second}
	for _, n := range []int{1, 2, 3, 4, 8, 16} {
		plan := Shards(specs, o, n)
		if len(plan) != n {
			t.Fatalf("%d shards: plan has %d", n, len(plan))
		}
		if again := Shards(specs, o, n); !reflect.DeepEqual(plan, again) {
			t.Fatalf("%d shards: two plans differ", n)
		}
		var all []report.ShardRun
		var longest, shortest time.Duration
		var costliest time.Duration
		for i, runs := range plan {
			all = append(all, runs...)
			d := ExpectedTime(specs, o, runs)
			if i == 0 || d > longest {
				longest = d
			}
			if i == 0 || d < shortest {
				shortest = d
			}
			for _, r := range runs {
				costliest = max(costliest, ExpectedTime(specs, o, []report.ShardRun{r}))
			}
			if !slices.IsSortedFunc(runs, func(a, b report.ShardRun) int { return runPos(specs, o, a) - runPos(specs, o, b) }) {
				t.Errorf("%d shards: shard %d is not in the matrix's order: %v", n, i+1, runs)
			}
		}
		var want []report.ShardRun
		for _, sp := range specs {
			for _, s := range o.Seeds {
				want = append(want, report.ShardRun{Cell: sp.Name, Seed: s})
			}
		}
		slices.SortFunc(all, func(a, b report.ShardRun) int { return runPos(specs, o, a) - runPos(specs, o, b) })
		if !slices.Equal(all, want) {
			t.Fatalf("%d shards: the shards hold %d runs, not each of the %d once", n, len(all), len(want))
		}
		// Greedy dealing, longest first: no shard is longer than another
		// by more than its costliest run.
		if longest-shortest > costliest {
			t.Errorf("%d shards: expected times from %s to %s, more apart than the costliest run (%s)", n, shortest, longest, costliest)
		}
	}
	// More shards than runs: the runs go one to a shard, the rest are
	// empty.
	plan := Shards(specs[:2], Options{Seeds: []int64{1}}, 4)
	if len(plan[0]) != 1 || len(plan[1]) != 1 || len(plan[2]) != 0 || len(plan[3]) != 0 {
		t.Errorf("2 runs over 4 shards: %v", plan)
	}
}

func runPos(specs []Spec, o Options, r report.ShardRun) int {
	for i, sp := range specs {
		if sp.Name == r.Cell {
			return i*len(o.Seeds) + slices.Index(o.Seeds, r.Seed)
		}
	}
	return -1
}

// TestAggregateIdempotent: aggregate sets every figure anew, so a cell
// copied from a shard's summary, runs added, is judged as if fresh. A
// new aggregate that accumulates into a field without resetting it
// fails here.
func TestAggregateIdempotent(t *testing.T) {
	c := report.Cell{Expect: report.ExpectViolation, Runs: []report.CellRun{
		{Seed: 1, Lease: "invalid", Resource: "valid", FirstViolation: f(3), Violations: 2, AcqPerSec: 10, P99Acquire: 5, Availability: 0.4},
		{Seed: 2, Lease: "valid", Resource: "unknown", AcqPerSec: 30, P99Acquire: 7, Availability: -1},
		{Seed: 3, Lease: "valid", Resource: "valid", AcqPerSec: 20, P99Acquire: 9, Availability: 0.6},
	}, NotRun: []int64{4}}
	aggregate(&c)
	once := c
	once.Runs = slices.Clone(c.Runs)
	aggregate(&c)
	if !reflect.DeepEqual(c, once) {
		t.Fatalf("aggregate twice:\n%+v\nonce:\n%+v", c, once)
	}
	// A shard's partial judgement does not survive: with seed 1 alone
	// gone, the cell found no violation.
	c.Runs = c.Runs[1:]
	aggregate(&c)
	if c.RunsWithViolation != 0 || c.Violations != 0 || c.MedianFirstViolation != nil || c.Outcome != "unknown" {
		t.Fatalf("after dropping the violating run: %+v", c)
	}
}

// shardSpecs are cheap cells with a safe and a violation expectation.
func shardSpecs() []Spec {
	var specs []Spec
	for _, sp := range Cells(true) {
		switch sp.Name {
		case "setnx/none", "setnx-get-set/none", "setnx+fencing/none":
			sp.Config.Keys = 1
			specs = append(specs, sp)
		}
	}
	return specs
}

// comparable is a matrix's summary.json without what differs from one
// run of the same cells and seeds to another: times, measurements, the
// start and elapsed time, and the shard.
func comparable(tb testing.TB, dir string) map[string]any {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	measured := []string{"started", "elapsed_seconds", "machine", "violations", "first_violation_s", "median_first_violation_s",
		"acquisitions_per_second", "p99_acquire_ms", "availability_during_faults", "count",
		"trials", "slow_trials", "trials_to_first_violation", "slow_s", "again", "spurious_losses",
		// The mutant's races differ from one run to the next, and with
		// them which holds its nodes saw cut short: the causes too.
		"causes"}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range measured {
				delete(v, k)
			}

			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(m)
	return m
}

// TestShardsMergeAsWhole runs a small matrix whole and as four shards
// one after another, merges the shards, and finds the same cells, seeds
// and verdicts; the merged directory holds every run's report.
func TestShardsMergeAsWhole(t *testing.T) {
	specs := shardSpecs()
	base := Options{Seeds: []int64{1, 2}, Duration: 2 * time.Second, Command: "torture matrix --seeds 1,2", Commit: "0123abcd"}
	root := t.TempDir()
	whole := base
	whole.Dir = filepath.Join(root, "whole")
	wm, err := Run(t.Context(), specs, whole)
	if err != nil {
		t.Fatal(err)
	}
	if len(wm.Failed()) != 0 {
		t.Fatalf("the whole matrix: cells contradict their expectation: %+v", wm.Failed())
	}
	var dirs []string
	runs := 0
	for i := 1; i <= 4; i++ {
		o := base
		o.Shard = Shard{i, 4}
		o.Dir = filepath.Join(root, fmt.Sprintf("shard%d", i))
		sm, err := Run(t.Context(), specs, o)
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		if sm.Shard == nil || sm.Shard.Index != i || len(sm.Shard.Cells) != len(specs) {
			t.Fatalf("shard %d records %+v", i, sm.Shard)
		}
		for _, c := range sm.Cells {
			runs += len(c.Runs)
		}
		dirs = append(dirs, o.Dir)
	}
	if runs != len(specs)*2 {
		t.Fatalf("the shards ran %d runs, want %d", runs, len(specs)*2)
	}
	slices.Reverse(dirs) // any order
	out := filepath.Join(root, "merged")
	mm, err := Merge(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(mm.Failed()) != 0 || mm.Shard != nil {
		t.Fatalf("merged: %+v", mm)
	}
	if got, want := comparable(t, out), comparable(t, whole.Dir); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("merged summary.json differs from the whole matrix's:\n%s\nwant:\n%s", g, w)
	}
	for _, c := range mm.Cells {
		for _, r := range c.Runs {
			for _, name := range []string{"report.html", "results.json", "history.jsonl"} {
				if _, err := os.Stat(filepath.Join(out, r.Dir, name)); err != nil {
					t.Errorf("merged run %s: %v", r.RunID, err)
				}
			}
		}
	}
	for _, name := range []string{"summary.md", "junit.xml", "index.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dirs[0], "summary.md"))
	if !strings.Contains(string(md), "- shard 4/4: ") {
		t.Errorf("a shard's summary.md does not say it is one:\n%s", md)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "summary.md")); strings.Contains(string(md), "shard") {
		t.Errorf("the merged summary.md speaks of shards:\n%s", md)
	}
}

// fakeShards writes the outputs of the n shards of specs × seeds as Run
// would, without running anything: every run valid, but for violating,
// the runs whose verdict is a lease violation. Each run's folder holds a
// results.json.
func fakeShards(tb testing.TB, specs []Spec, seeds []int64, n int, violating map[report.ShardRun]bool) []string {
	tb.Helper()
	o := Options{Seeds: seeds, Duration: 8 * time.Second}
	var dirs []string
	for i := 1; i <= n; i++ {
		info := shardInfo(specs, o, Shard{i, n})
		m := report.Matrix{Started: time.Date(2026, 12, 1, 2, i, 0, 0, time.UTC), Command: "torture matrix", Seeds: seeds, Duration: "8s",
			Commit: "0123abcd", Shard: info, Servers: []string{"redis 7.0.15"}, Elapsed: 10}
		dir := filepath.Join(tb.TempDir(), fmt.Sprintf("shard%d", i))
		for _, sp := range specs {
			cell := sp.cell()
			for _, r := range info.Runs {
				if r.Cell != sp.Name {
					continue
				}
				id := fmt.Sprintf("%s-seed%d", dirName(sp.Name), r.Seed)
				cr := report.CellRun{Seed: r.Seed, RunID: id, Dir: filepath.Join("runs", id), Lease: "valid", Resource: "valid", Availability: -1}
				if violating[r] {
					cr.Lease, cr.Violations, cr.FirstViolation = "invalid", 1, f(float64(r.Seed))
				}
				cell.Runs = append(cell.Runs, cr)
				if err := os.MkdirAll(filepath.Join(dir, cr.Dir), 0o700); err != nil {
					tb.Fatal(err)
				}
				if err := report.WriteResults(filepath.Join(dir, cr.Dir), report.Results{RunID: id, Seed: r.Seed, Elapsed: 8}); err != nil {
					tb.Fatal(err)
				}
			}
			if len(cell.Runs) > 0 {
				aggregate(&cell)
				m.Cells = append(m.Cells, cell)
			}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := report.WriteMatrix(dir, m); err != nil {
			tb.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// TestMergeJudgesWhole: a cell whose violation only one shard found
// matches its expectation once merged, though the other shards' parts
// of it, alone, do not; a false alarm in one shard fails the merged
// cell.
func TestMergeJudgesWhole(t *testing.T) {
	specs := []Spec{
		// A violation random faults find rarely: 1 of 4 is inside the
		// band (a rate measured with few seeds is rough).
		testSpec("a/none", "setnx", report.ExpectViolation, &report.Band{Min: 0.2, Max: 1, Why: "rare"}),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	specs[0].Expect.Resource = report.ExpectPossible // the lease breaks; the resource may or may not
	seeds := []int64{1, 2, 3, 4}
	bad := map[report.ShardRun]bool{{Cell: "a/none", Seed: 3}: true, {Cell: "b/none", Seed: 2}: true}
	dirs := fakeShards(t, specs, seeds, 3, bad)
	// Shards may run different servers (the last only etcd members),
	// one version of each.
	for i, servers := range map[int][]string{1: {"redis 7.0.15", "etcd 3.4.23"}, 2: {"etcd 3.4.23"}} {
		sm, err := report.ReadMatrix(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		sm.Servers = servers
		if err := report.WriteMatrix(dirs[i], sm); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	m, err := Merge(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != 2 || m.Elapsed != 30 || !m.Started.Equal(time.Date(2026, 12, 1, 2, 1, 0, 0, time.UTC)) {
		t.Fatalf("merged: %d cells, elapsed %v, started %v", len(m.Cells), m.Elapsed, m.Started)
	}
	if !slices.Equal(m.Servers, []string{"redis 7.0.15", "etcd 3.4.23"}) {
		t.Errorf("merged servers %q, want redis and etcd, once each", m.Servers)
	}
	a, b := m.Cells[0], m.Cells[1]
	var aSeeds []int64
	for _, r := range a.Runs {
		aSeeds = append(aSeeds, r.Seed)
	}
	if !slices.Equal(aSeeds, seeds) || a.Outcome != "violation" || !a.Matches || a.RunsWithViolation != 1 || *a.MedianFirstViolation != 3 {
		t.Errorf("cell a: seeds %v, %+v", aSeeds, a)
	}
	if b.Outcome != "violation" || b.Matches || b.RunsWithViolation != 1 {
		t.Errorf("cell b: %+v", b)
	}
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if _, err := report.ReadResults(filepath.Join(out, r.Dir)); err != nil {
				t.Errorf("run %s not copied: %v", r.RunID, err)
			}
		}
	}
	// The merged junit.xml's times come from the copied runs.
	ju, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
	if !strings.Contains(string(ju), `name="a/none" time="32.000"`) {
		t.Errorf("junit.xml lacks the time of cell a from its four runs:\n%s", ju)
	}
}

// TestMergeRefuses: shards that do not make one matrix are refused,
// with a message that names what differs, and nothing is written.
func TestMergeRefuses(t *testing.T) {
	specs := []Spec{
		testSpec("a/none", "setnx", report.ExpectSafe, nil),
		testSpec("b/none", "setnx", report.ExpectSafe, nil),
	}
	seeds := []int64{1, 2}
	edit := func(tb testing.TB, dir string, f func(m *report.Matrix)) {
		tb.Helper()
		m, err := report.ReadMatrix(dir)
		if err != nil {
			tb.Fatal(err)
		}
		f(&m)
		if err := report.WriteMatrix(dir, m); err != nil {
			tb.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// change edits the shards (four of specs × seeds) or returns the
		// directories to merge.
		change func(t *testing.T, dirs []string) []string
		want   string
	}{
		{"commit", func(t *testing.T, d []string) []string {
			edit(t, d[2], func(m *report.Matrix) { m.Commit = "fedc9876" })
			return d
		}, "different commits: "},
		{"dirty", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Dirty = true })
			return d
		}, "0123abcd with uncommitted changes"},
		{"no commit", func(t *testing.T, d []string) []string {
			for _, x := range d {
				edit(t, x, func(m *report.Matrix) { m.Commit = "" })
			}
			return d
		}, "records no commit"},
		{"cells", func(t *testing.T, d []string) []string {
			edit(t, d[3], func(m *report.Matrix) { m.Shard.Cells[1].Expect = report.ExpectAll(report.ExpectViolation) })
			return d
		}, "different cell lists: %[1]s (shard 1/4) has cell 2 b/none (expect safe), %[4]s (shard 4/4) has cell 2 b/none (expect violation)"},
		{"seeds", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Seeds = []int64{1, 2, 3} })
			return d
		}, "different seeds: "},
		{"duration", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Duration = "12s" })
			return d
		}, "different durations: %[1]s (shard 1/4) has 8s, %[2]s (shard 2/4) has 12s"},
		{"count", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Shard.Count = 5 })
			return d
		}, "different shard counts"},
		{"server version", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Servers = []string{"redis 7.2.4"} })
			return d
		}, "different server versions: %[1]s (shard 1/4) has redis 7.0.15, %[2]s (shard 2/4) has redis 7.2.4"},
		{"server version beside another", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Servers = []string{"etcd 3.4.23"} })
			edit(t, d[3], func(m *report.Matrix) { m.Servers = []string{"redis 7.0.15", "etcd 3.5.0"} })
			return d
		}, "different server versions: %[2]s (shard 2/4) has etcd 3.4.23, %[4]s (shard 4/4) has etcd 3.5.0"},
		{"missing", func(t *testing.T, d []string) []string { return []string{d[0], d[2]} }, "shard 2, 4 of 4 missing"},
		{"twice", func(t *testing.T, d []string) []string { return append(d, d[1]) }, "overlapping shards: %[2]s and %[2]s are both shard 2/4"},
		{"overlap", func(t *testing.T, d []string) []string {
			edit(t, d[1], func(m *report.Matrix) { m.Shard.Index = 3 })
			return d
		}, "overlapping shards: "},
		{"run in two plans", func(t *testing.T, d []string) []string {
			// shard 1's first run also in shard 2's plan
			s1, _ := report.ReadMatrix(d[0])
			edit(t, d[1], func(m *report.Matrix) { m.Shard.Runs = append(m.Shard.Runs, s1.Shard.Runs[0]) })
			return d
		}, "overlapping shards: cell a/none, seed 1 is in"},
		{"lacks a run", func(t *testing.T, d []string) []string {
			edit(t, d[0], func(m *report.Matrix) { m.Cells = nil })
			return d
		}, "(shard 1/4) lacks its run of cell a/none, seed 1"},
		{"run in no plan", func(t *testing.T, d []string) []string {
			edit(t, d[0], func(m *report.Matrix) { m.Shard.Runs, m.Cells = nil, nil })
			return d
		}, "cell a/none, seed 1 is in no shard"},
		{"whole matrix", func(t *testing.T, d []string) []string {
			edit(t, d[0], func(m *report.Matrix) { m.Shard = nil })
			return d
		}, "is a whole matrix, not a shard's output"},
		{"not a matrix", func(t *testing.T, d []string) []string { return append(d, t.TempDir()) }, "has no summary.json"},
		{"nothing", func(t *testing.T, d []string) []string { return nil }, "no shard directory given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := tc.change(t, fakeShards(t, specs, seeds, 4, nil))
			out := filepath.Join(t.TempDir(), "merged")
			_, err := Merge(out, dirs)
			want := tc.want
			if strings.Contains(want, "%") {
				args := make([]any, len(dirs))
				for i, d := range dirs {
					args[i] = d
				}
				want = fmt.Sprintf(want, args...)
			}
			if !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Merge: %v\nwant one line with %q", err, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused merge wrote %s", out)
			}
		})
	}
	t.Run("output not empty", func(t *testing.T) {
		dirs := fakeShards(t, specs, seeds, 2, nil)
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, "x"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Merge(out, dirs); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "exists and is not empty") {
			t.Fatalf("Merge into a non-empty folder: %v", err)
		}
	})
}

// TestShardEmpty: a shard with no run (more shards than runs) writes
// summaries that say so, and merges with the others.
func TestShardEmpty(t *testing.T) {
	specs := shardSpecs()[:1]
	root := t.TempDir()
	var dirs []string
	for i := 1; i <= 2; i++ {
		o := Options{Seeds: []int64{1}, Duration: time.Second, Dir: filepath.Join(root, fmt.Sprint(i)), Shard: Shard{i, 2}, Commit: "0123abcd"}
		m, err := Run(context.Background(), specs, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 - i; len(m.Cells) != want {
			t.Fatalf("shard %d: %d cells, want %d", i, len(m.Cells), want)
		}
		dirs = append(dirs, o.Dir)
	}
	m, err := Merge(filepath.Join(root, "merged"), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != 1 || len(m.Cells[0].Runs) != 1 || !m.Cells[0].Matches {
		t.Fatalf("merged %+v", m.Cells)
	}
}

// TestSameMachine: shards of one kind of machine give the merged matrix
// that machine with the highest loads; shards of different machines, or
// one that does not say, give none.
func TestSameMachine(t *testing.T) {
	out := func(ms ...*report.Machine) []shardOutput {
		var s []shardOutput
		for _, m := range ms {
			s = append(s, shardOutput{m: report.Matrix{Machine: m}})
		}
		return s
	}
	a := &report.Machine{CPUs: 2, OS: "linux", Arch: "amd64", LoadStart: 1.5, LoadEnd: 3}
	b := &report.Machine{CPUs: 2, OS: "linux", Arch: "amd64", LoadStart: 2.5, LoadEnd: 2}
	got := sameMachine(out(a, b))
	if got == nil || got.CPUs != 2 || got.LoadStart != 2.5 || got.LoadEnd != 3 {
		t.Errorf("same machines: %+v", got)
	}
	if a.LoadStart != 1.5 {
		t.Error("sameMachine changed a shard's machine")
	}
	if got := sameMachine(out(a, &report.Machine{CPUs: 4, OS: "linux", Arch: "amd64"})); got != nil {
		t.Errorf("different machines: %+v, want none", got)
	}
	if got := sameMachine(out(a, nil)); got != nil {
		t.Errorf("a shard without a machine: %+v, want none", got)
	}
}

// testSpec is a cell of lock named name expecting e of both properties,
// at band (nil: the expectation's default).
func testSpec(name, lock string, e report.Expectation, band *report.Band) Spec {
	b := report.DefaultBand(e)
	if band != nil {
		b = *band
	}
	return Spec{Name: name, Row: "none", Config: harness.Config{Workload: harness.Workload{Lock: lock}}, Expect: report.ExpectAll(e), Band: b, Source: "s", Why: "w"}
}
