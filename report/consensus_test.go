package report

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// TestConsensus: a row that breaks the consensus lock and a Redis lock
// breaks every lease lock; one that breaks only the Redis lock is read
// so; a +fencing row whose resource held where the plain row lost
// updates is fencing's; mutants are left out; a row the harness refuses
// on the consensus lock is named with the refusal, rows sharing one
// together, and a row it would run is not.
func TestConsensus(t *testing.T) {
	run := func(lease, resource checker.Verdict) CellRun {
		return CellRun{Lease: lease, Resource: resource}
	}
	v, x := checker.Valid, checker.Invalid
	cell := func(lock, row string, runs ...CellRun) Cell {
		return Cell{Name: lock + "/" + row, Lock: lock, Row: row, Runs: runs}
	}
	m := Matrix{Started: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), Seeds: []int64{1, 2}, Duration: "8s", Cells: []Cell{
		cell("setnx", "kill-immediate", run(x, v), run(x, x)),
		cell("etcd-mutex", "kill-immediate", run(v, v), run(v, v)),
		cell("setnx-watchdog", "client-stop", run(x, x), run(x, v)),
		cell("etcd-mutex", "client-stop", run(x, x), run(x, v)),
		cell("setnx-watchdog", "+fencing/client-stop", run(x, v), run(x, v)),
		cell("etcd-mutex", "+fencing/client-stop", run(x, v), run(x, v)),
		cell("setnx", "none", run(v, v)),
		cell("etcd-mutex", "none", run(v, v)),
		cell("setnx", "clock", run(x, v)),
		cell("setnx", "clock-holder", run(x, x)),
		cell("setnx", "kill-delayed", run(x, v)),
		cell("setnx", "client-pause", run(v, x)),
		cell("setnx-watchdog", "client-pause", run(v, v)),
		cell("etcd-mutex", "client-pause", run(v, v)),
		cell("etcd-mutex", "pause", CellRun{}),
		cell("setnx-plain-del", "client-pause", run(x, x)),
	}}
	got := string(Consensus(m, ConsensusOptions{
		Bundle:    "../results/b",
		Consensus: func(l string) bool { return l == "etcd-mutex" },
		Skip:      func(l string) bool { return l == "setnx-plain-del" },
		Refused: func(l, row string) string {
			if l == "etcd-mutex" && strings.HasPrefix(row, "clock") {
				return "no clock shim on etcd members"
			}
			return ""
		},
	}))
	for _, want := range []string{
		"| row | `setnx` | `setnx-watchdog` | `etcd-mutex` | reading |",
		"| kill-immediate | L 2/2 · R 1/2 | — | L 0/2 · R 0/2 | " + ReadRedisOnly + " |",
		"| client-stop | — | L 2/2 · R 1/2 | L 2/2 · R 1/2 | " + ReadEvery + " |",
		"| +fencing/client-stop | — | L 2/2 · R 0/2 | L 2/2 · R 0/2 | " + ReadFencing + " |",
		"| none | L 0/1 · R 0/1 | — | L 0/1 · R 0/1 | " + ReadSafe + " |",
		"| clock | L 1/1 · R 0/1 | — | — | " + ReadUnmeasured + " |",
		"- " + ReadEvery + ": 1 row",
		"| client-pause | L 0/1 · R 1/1 | L 0/1 · R 0/1 | L 0/1 · R 0/1 | " + ReadSomeRedis + " |",
		"| pause | — | — | undecided (1 runs) | " + ReadUnmeasured + " |",
		"No `etcd-mutex` cell of `clock`, `clock-holder`, which the harness refuses to run on it: no clock shim on etcd members.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "plain-del") {
		t.Errorf("a mutant in\n%s", got)
	}
	if strings.Count(got, "harness refuses") != 1 {
		t.Errorf("want one line of refused rows (not kill-delayed, which runs) in\n%s", got)
	}
}
