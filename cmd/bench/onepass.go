package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// targetOnePass: what `torture run` does after its run costs at most this
// many times `torture check` alone, in time and in peak memory.
const targetOnePass = 1.5

// onePassResult is part 9: a generated history checked by `bench
// check-one` in the two modes, alternating.
type onePassResult struct {
	Ops    int            `json:"ops"`
	Events int            `json:"events"`
	Bytes  int64          `json:"file_bytes"`
	Rounds []onePassRound `json:"rounds"`
}

type onePassRound struct {
	Stream checkRow `json:"stream"` // `torture check`: trial.Check
	Run    checkRow `json:"run"`    // `torture run` after its run: the same, then the results and report.html
}

// ratios are each round's run ÷ stream in total time and in peak RSS.
func (op *onePassResult) ratios() (t, m []float64) {
	for _, r := range op.Rounds {
		if r.Stream.Total > 0 && r.Stream.PeakRSS > 0 {
			t = append(t, r.Run.Total.Seconds()/r.Stream.Total.Seconds())
			m = append(m, float64(r.Run.PeakRSS)/float64(r.Stream.PeakRSS))
		}
	}
	return t, m
}

func runOnePass(ctx context.Context, e *benchEnv, r *results) error {
	path := filepath.Join(e.tmp, "onepass.jsonl")
	events, _, err := genHistory(path, e.o.onepassOps, 10, 5, true)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	op := &onePassResult{Ops: e.o.onepassOps, Events: events}
	if st, err := os.Stat(path); err == nil {
		op.Bytes = st.Size()
	}
	for i := range e.o.onepassRounds {
		var round onePassRound
		into := map[string]*checkRow{"stream": &round.Stream, "run": &round.Run}
		modes := []string{"stream", "run"}
		if i%2 == 1 {
			modes = []string{"run", "stream"}
		}
		for _, mode := range modes {
			row, err := checkOne(ctx, path, mode)
			if err != nil {
				return err
			}
			if row.Lease != checker.Invalid || row.Resource != checker.Invalid {
				row.Err = fmt.Sprintf("verdicts %s/%s, want invalid/invalid", row.Lease, row.Resource)
			}
			e.logf("one pass, round %d, %s: %v, peak RSS %d MiB", i+1, mode, row.Total.Round(time.Millisecond), row.PeakRSS>>20)
			*into[mode] = row
		}
		op.Rounds = append(op.Rounds, round)
	}
	r.OnePass = op
	return nil
}

func (r *results) onePassSection(p func(string, ...any)) {
	op := r.OnePass
	p("`torture run` reads its history once, streamed: `trial.Check` checks it and derives, in the same pass, the analysis (per key the leases with their granting nodes, extends and release; the nodes' observations; the pairs of sections that lost an update) ")
	p("from which `report.html` (timeline, throughput, latency, porcupine's visualization of the failing keys, the explanations, the overlaps table) and `results.json` are written; nothing reads the events again. ")
	p("Measured on part 2's generator with a late violation (%d operations, %d events, %.0f MB, one overlap and one lost update at 90%%), each mode in a child process (`bench check-one --hist H --mode M`), the two modes alternating, %d rounds: ", op.Ops, op.Events, float64(op.Bytes)/1e6, len(op.Rounds))
	p("**stream** is `torture check`, **run** what `torture run` does after its run (the check, `report.WriteResults`, `report.WriteHTML` with the explanations). Target: run ≤ %.1f× stream in time and in peak RSS.\n\n", targetOnePass)
	row := func(name string, which func(onePassRound) checkRow) {
		var total, rss, heap []float64
		for _, rd := range op.Rounds {
			c := which(rd)
			total, rss, heap = append(total, c.Total.Seconds()), append(rss, mib(c.PeakRSS)), append(heap, float64(c.PeakHeap)/(1<<20))
		}
		c := which(op.Rounds[0])
		verdict := string(c.Lease) + "/" + string(c.Resource) + map[bool]string{true: " **" + c.Err + "**"}[c.Err != ""]
		p("| %s | %s | %s | %s | %s |\n", name, join("%.2f", total), join("%.0f", rss), join("%.0f", heap), verdict)
	}
	p("| mode | total s, by round | peak RSS MiB, by round | peak heap MiB, by round | verdicts |\n|---|---|---|---|---|\n")
	row("stream (`torture check`)", func(rd onePassRound) checkRow { return rd.Stream })
	row("run (check + analysis + report)", func(rd onePassRound) checkRow { return rd.Run })
	t, m := op.ratios()
	p("| ratio run ÷ stream, by round | %s | %s | | |\n\n", join("%.2f", t), join("%.2f", m))
	p("Medians of the rounds' ratios: time %.2f×, peak RSS %.2f×. On a loaded machine the time of one round moves by more than the report adds; the memory is steady.\n", median(t), median(m))
}
