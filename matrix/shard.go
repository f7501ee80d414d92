package matrix

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/report"
)

// Shard names one of Count parts into which a matrix's runs are split,
// so that several machines (CI runners) run a matrix together: Index
// from 1 to Count. The zero Shard is the whole matrix.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" (1 ≤ i ≤ n).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("matrix: shard %q: want i/n, e.g. 2/4", s)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.check(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// String is "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Whole reports whether s is the whole matrix (the zero Shard).
func (s Shard) Whole() bool { return s == Shard{} }

func (s Shard) check() error {
	if s.Whole() {
		return nil
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("matrix: shard %d/%d: want 1 ≤ i ≤ n", s.Index, s.Count)
	}
	return nil
}

// RunOverhead is what a run is expected to cost beyond its duration:
// starting the nodes (and a lock's client processes), checking the
// history, writing the reports. Measured on a loaded 2-core machine: 0.8
// s a run for the published matrix (results/README.md: 93 runs of 12 s,
// failover 20 s, in 1216 s), 0.5 s for the quick matrix (21 runs of 8 s,
// failover 20 s, in 190 s), 1.4 s for the matrix of locks in other
// languages (results/2026-12-01-languages: 69 runs of 12 s in 930 s,
// Python client processes included); this rounds the largest up.
const RunOverhead = 1500 * time.Millisecond

// StopShare is the share of its duration a run that ends at its expected
// violations (Spec.stops) is expected to take: such runs of the matrix
// ended after 1.3 to 4.8 s of 8 (median 1.6 s), and the failover's after
// 9 of 20.
const StopShare = 0.5

// ExpectedRun is the time one run of sp is expected to take in a matrix
// whose runs last d: d raised to the cell's MinDuration (StopShare of it
// for a cell that ends at its expected violations), plus RunOverhead.
// Shards and the release gate's budget are balanced by it.
func ExpectedRun(sp Spec, d time.Duration) time.Duration {
	run := max(d, sp.MinDuration)
	if _, all := sp.stops(); len(all) > 0 {
		run = time.Duration(float64(run) * StopShare)
	}
	return run + RunOverhead
}

// Shards splits the runs of specs × o.Seeds (o.Duration, and their
// defaults, as Run takes them) into count shards balanced by ExpectedRun,
// and returns the runs of each, in the matrix's order (cells in the
// order of specs, then seeds in the order of o.Seeds). It depends on
// nothing but the cells (their names and MinDuration), the seeds, the
// duration and count, so every machine computes the same plan: it
// deals the runs out longest first, ties in the matrix's order, each to
// the shard with the least expected time so far, ties to the lowest
// numbered one (the LPT rule, within 4/3 of the best balance). A shard
// may get no run when count exceeds the runs.
func Shards(specs []Spec, o Options, count int) [][]report.ShardRun {
	o = o.withDefaults()
	type job struct {
		pos  int // in the matrix's order
		run  report.ShardRun
		cost time.Duration
	}
	var jobs []job
	for _, sp := range specs {
		for _, seed := range o.Seeds {
			jobs = append(jobs, job{len(jobs), report.ShardRun{Cell: sp.Name, Seed: seed}, ExpectedRun(sp, o.Duration)})
		}
	}
	if count < 1 {
		count = 1
	}
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b job) int { return cmp.Compare(b.cost, a.cost) })
	load := make([]time.Duration, count)
	shard := make([]int, len(jobs)) // by pos
	for _, j := range order {
		best := 0
		for i := 1; i < count; i++ {
			if load[i] < load[best] {
				best = i
			}
		}
		load[best] += j.cost
		shard[j.pos] = best
	}
	out := make([][]report.ShardRun, count)
	for _, j := range jobs {
		out[shard[j.pos]] = append(out[shard[j.pos]], j.run)
	}
	return out
}

// shardInfo is what the output of shard s of specs × o records about the
// whole matrix and its own part of it; nil for the whole matrix.
func shardInfo(specs []Spec, o Options, s Shard) *report.ShardInfo {
	if s.Whole() {
		return nil
	}
	info := &report.ShardInfo{Index: s.Index, Count: s.Count, Runs: Shards(specs, o, s.Count)[s.Index-1]}
	for _, sp := range specs {
		info.Cells = append(info.Cells, report.ShardCell{Name: sp.Name, Expect: sp.Expect})
	}
	info.Expected = ExpectedTime(specs, o, info.Runs).Seconds()
	return info
}

// ExpectedTime is the time runs of specs are expected to take, by
// ExpectedRun with o.Duration (its default when unset).
func ExpectedTime(specs []Spec, o Options, runs []report.ShardRun) time.Duration {
	o = o.withDefaults()
	byName := make(map[string]Spec, len(specs))
	for _, sp := range specs {
		byName[sp.Name] = sp
	}
	var t time.Duration
	for _, r := range runs {
		t += ExpectedRun(byName[r.Cell], o.Duration)
	}
	return t
}
