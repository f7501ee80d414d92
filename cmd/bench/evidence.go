package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
)

// evidenceResult is part 6: what recording the per-node evidence costs,
// each lock as it is and behind quietLock, rounds back to back.
type evidenceResult struct {
	Clients  int
	Duration time.Duration
	Rounds   int
	Rows     []evidenceRow
}

// evidenceRow is one lock, with and without evidence.
type evidenceRow struct {
	Lock  string
	Nodes int
	// Per round, cycles per second and CPU of this process per cycle.
	With, Without       []float64
	WithCPU, WithoutCPU []time.Duration
	// Events and history bytes per cycle, over every round.
	EventsWith, EventsWithout float64
	BytesWith, BytesWithout   float64
}

// quietLock is a lock behind the four methods of locks.Lock only: it does
// not implement locks.NodeReporter, so the harness collects no evidence.
type quietLock struct{ locks.Lock }

// quietSuffix names a lock behind quietLock; registerQuiet registers it.
const quietSuffix = "-no-evidence"

func registerQuiet(name string) error {
	spec, err := locks.Lookup(name)
	if err != nil {
		return err
	}
	quiet := spec
	quiet.Name, quiet.Summary = name+quietSuffix, spec.Summary+" (no per-node evidence)"
	quiet.New = func(cfg locks.Config) (locks.Lock, error) {
		l, err := spec.New(cfg)
		if err != nil {
			return nil, err
		}
		return quietLock{l}, nil
	}
	if _, err := locks.Lookup(quiet.Name); err == nil {
		return nil // registered by an earlier run in this process
	}
	return locks.Register(quiet)
}

// runEvidence measures part 6 against 5 redis-servers, straight to them
// (no proxy: the proxy's cost would hide the recording's).
func runEvidence(ctx context.Context, env *benchEnv, r *results) error {
	tmp, clients, d, logf := env.tmp, env.o.clients, env.o.workloadDur, env.logf
	e := &evidenceResult{Clients: clients, Duration: d, Rounds: env.o.rounds}
	r.Evidence = e
	cl, err := cluster.Start(ctx, 5, cluster.WithDir(filepath.Join(tmp, "evidence-nodes")))
	if err != nil {
		return err
	}
	defer cl.Close()
	var direct []string
	for _, n := range cl.Nodes() {
		direct = append(direct, n.DirectAddr())
	}
	for _, lk := range []struct {
		name  string
		nodes int
	}{{"setnx", 1}, {"redlock", 5}} {
		if err := registerQuiet(lk.name); err != nil {
			return err
		}
		row := evidenceRow{Lock: lk.name, Nodes: lk.nodes}
		var with, without harnessRound
		measure := func(r int, quiet bool) error {
			name, rate, cpu, tot := lk.name, &row.With, &row.WithCPU, &with
			if quiet {
				name, rate, cpu, tot = lk.name+quietSuffix, &row.Without, &row.WithoutCPU, &without
			}
			dir := filepath.Join(tmp, fmt.Sprintf("evidence-%s-%d", name, r))
			defer os.RemoveAll(dir)
			h, err := harnessCycles(ctx, name, dir, direct[:lk.nodes], cl.Password(), clients, d, "")
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*rate, *cpu = append(*rate, h.rate), append(*cpu, h.cpu)
			tot.add(h)
			logf("evidence round %d: %s %.0f cycles/s, %v CPU/cycle, %.0f B/cycle", r+1, name, h.rate, h.cpu, float64(h.bytes)/float64(h.cycles))
			return nil
		}
		for r := range e.Rounds { // the first alternates: passing load falls on both alike
			for _, quiet := range []bool{r%2 == 1, r%2 == 0} {
				if err := measure(r, quiet); err != nil {
					return err
				}
			}
		}
		row.EventsWith, row.BytesWith = with.perCycle()
		row.EventsWithout, row.BytesWithout = without.perCycle()
		e.Rows = append(e.Rows, row)
	}
	return nil
}

// evidenceSection writes part 6.
func (r *results) evidenceSection(p func(string, ...any)) {
	e := r.Evidence
	p("`harness.Run` as in part 1 (%d clients, each on its own key, hold 0, %d rounds of %v, straight to redis-server: no proxy, so that the proxy's cost does not hide the recording's), ", e.Clients, e.Rounds, e.Duration)
	p("each lock as it is — it reports per-node evidence, and every completion of an acquire and a release carries `nodes` — and behind a wrapper with the four methods of `locks.Lock` only, which the harness cannot ask for evidence; the two back to back in each round, the first alternating. Medians, rounds in brackets; the ratio is the median of each round's ratio.\n\n")
	p("| lock | nodes | cycles/s with evidence | without | ratio | CPU/cycle with | without | history bytes/cycle with | without | bytes per event more |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range e.Rows {
		perEvent := (row.BytesWith - row.BytesWithout) / row.EventsWith
		p("| %s | %d | %.0f [%s] | %.0f [%s] | %.3f | %.0f µs | %.0f µs | %.0f | %.0f | %.1f |\n",
			row.Lock, row.Nodes, median(row.With), join("%.0f", row.With), median(row.Without), join("%.0f", row.Without), ratio(row.With, row.Without),
			float64(median(row.WithCPU))/1e3, float64(median(row.WithoutCPU))/1e3, row.BytesWith, row.BytesWithout, perEvent)
	}
	p("\nA cycle is %s events (acquire, section, release: invoke and completion each); two of them, the completions of the acquire and the release, carry `nodes`. ", fmt.Sprintf("%.0f", e.Rows[0].EventsWith))
	p("Per call the evidence costs the harness one `context.WithValue` (the `locks.Evidence` is the client's, reset), an append under a mutex per node answer, the summary and its one allocation, and the longer line; the library adapters add a go-redis hook per command (not measured here). ")
	p("The throughput of this shared machine moves by more than that between rounds, so the ratio above is mostly load; the Go benchmarks below isolate it: `BenchmarkEvidence` in `harness` is one acquire and one release as a client records them with a lock that reports no node, 1 node or 5 (no Redis), and `BenchmarkNodes` in `history` the encoding and decoding of a cycle with and without it.\n\n")
}
