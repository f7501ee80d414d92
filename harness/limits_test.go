package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
)

// TestRefusedAtStart: what the machine cannot run, and a run with faults
// that would inject none, are refused by WithDefaults, before anything
// starts, each with a one-line reason; what it can run is not.
func TestRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	schedule := func(name, steps string) string {
		path := filepath.Join(dir, name+".json")
		js := fmt.Sprintf(`{"seed": 1, "kinds": ["kill"], "interval": "1s", "steps": [%s]}`, steps)
		if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	node99 := schedule("node99", `{"kind": "kill", "at": "1s", "for": "1s", "params": {"nodes": [99], "restart_delay": "0s"}}`)
	empty := schedule("empty", ``)
	late := schedule("late", `{"kind": "kill", "at": "9s", "for": "2s", "params": {"nodes": [0], "restart_delay": "0s"}}`)
	fits := schedule("fits", `{"kind": "kill", "at": "1s", "for": "1s", "params": {"nodes": [0], "restart_delay": "0s"}}`)
	restore := harness.SetOpenFileLimit(10000)
	defer restore()
	for _, tc := range []struct {
		name string
		cfg  harness.Config
		want string // "" for accepted
	}{
		{"100 nodes", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Nodes: 100}}, ""},
		{"1000 nodes", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Nodes: 1000}},
			"harness: 1000 nodes: a run starts at most 100 (on a 2-core machine, of 1000 redis-server processes some did not answer within the 10 s start-up time; 100 start in about 2 s)"},
		{"100000 clients", harness.Config{Workload: harness.Workload{Lock: "setnx", Clients: 100_000}}, ""},
		{"100001 clients", harness.Config{Workload: harness.Workload{Lock: "setnx", Clients: 100_001}},
			"harness: 100001 clients: a run drives at most 100000 (100,000 took 460 MB and twice the run's time to drive on a 2-core machine)"},
		{"more files than the process may open", harness.Config{Workload: harness.Workload{Lock: "redlock", Clients: 64}, Cluster: harness.Cluster{Nodes: 100}},
			"harness: 100 nodes with 64 clients need about 19864 open files, more than this process may open (10000, ulimit -n): use fewer nodes or clients, or raise the limit"},
		{"no fault fits", harness.Config{Workload: harness.Workload{Lock: "setnx", Duration: 3 * time.Second}, Faults: harness.Faults{Nemesis: []string{"kill"}}},
			"harness: nemesis kill: no fault fits in the 3s run (each comes after 2s of quiet and stays at least as long, some kinds longer); a run without a fault is not a fault test: lengthen the duration or shorten the nemesis interval"},
		{"a fault fits", harness.Config{Workload: harness.Workload{Lock: "setnx", Duration: 4 * time.Second}, Faults: harness.Faults{Nemesis: []string{"kill"}}}, ""},
		{"replay of node 99", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: node99}},
			"step 0 (kill) refused: kill: no node n100: the run has 5"},
		{"replay of no step", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: empty}},
			"the schedule has no step; a run without a fault is not a fault test (leave out the replay for a fault-free run)"},
		{"replay of a step after the end", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: late}},
			"step 0 (kill) ends at 11s, after the 10s run: lengthen the duration"},
		{"replay with other kinds", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: fits, Nemesis: []string{"pause"}}},
			"harness: nemesis pause differs from the kinds of the replayed schedule (kill); the schedule says which kinds it holds"},
		{"replay with the same kinds", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: fits, Nemesis: []string{"kill"}}}, ""},
		{"replay", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Faults: harness.Faults{Replay: fits}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dir = "x"
			_, err := tc.cfg.WithDefaults()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
				t.Fatalf("err = %v; want one line containing %q", err, tc.want)
			}
		})
	}
}

// TestProcessClientsRefused: a lock served by client processes starts one
// per client, so its clients are bounded by the machine: cores, memory
// and open files, each per process; the refusal is one line that gives
// every bound, and comes before any client process starts.
func TestProcessClientsRefused(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	lock := locks.ExecPrefix + "sh -c 'touch " + started + "; exec sleep 60'"
	defer harness.SetOpenFileLimit(10000)()
	for _, tc := range []struct {
		name      string
		cores     int
		available int64
		lock      string
		clients   int
		want      string // "" for accepted
	}{
		{"64 per core", 2, 24 << 30, lock, 128, ""},
		{"more than 64 per core", 2, 24 << 30, lock, 129,
			"harness: 129 clients of " + lock + ", one client process each: this machine runs at most 128 (cores: 2 × 64, as each start costs about 0.16 s of CPU and every client must start within 20 s; memory: 384, at 32 MiB each in half of the 24.0 GiB available; open files: 993, at 10 each of ulimit -n 10000): use fewer clients"},
		{"100000", 2, 24 << 30, lock, 100_000,
			"harness: 100000 clients of " + lock + ", one client process each: this machine runs at most 128 ("},
		{"memory", 64, 4 << 30, lock, 65,
			"this machine runs at most 64 (cores: 64 × 64, as each start costs about 0.16 s of CPU and every client must start within 20 s; memory: 64, at 32 MiB each in half of the 4.0 GiB available; open files: 993, at 10 each of ulimit -n 10000)"},
		{"open files", 1024, 1 << 40, lock, 994, "this machine runs at most 993 ("},
		{"memory unknown", 2, 0, lock, 129,
			"this machine runs at most 128 (cores: 2 × 64, as each start costs about 0.16 s of CPU and every client must start within 20 s; open files: 993, at 10 each of ulimit -n 10000)"},
		{"a Go lock is not bounded so", 2, 24 << 30, "setnx", 100_000, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer harness.SetMachine(tc.cores, tc.available)()
			cfg := harness.Config{Workload: harness.Workload{Lock: tc.lock, Clients: tc.clients}, Output: harness.Output{Dir: "x"}}
			_, err := cfg.WithDefaults()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
				t.Fatalf("err = %v\nwant one line containing %q", err, tc.want)
			}
		})
	}

	// Run refuses it the same way, before it starts a client.
	defer harness.SetMachine(2, 24<<30)()
	cfg := harness.Config{Workload: harness.Workload{Lock: lock, Clients: 100_000}, Output: harness.Output{Dir: filepath.Join(dir, "run")}}
	if _, err := harness.Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "this machine runs at most 128") {
		t.Fatalf("Run: %v, want the refusal", err)
	}
	if _, err := os.Stat(started); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a client process started before the refusal (%s: %v)", started, err)
	}
}

// TestReplaySetsUp: a replay takes its kinds from the schedule, and the
// run is set up for them: a partition between client groups needs two
// groups, which a run without the partition kind does not have.
func TestReplaySetsUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["partition"], "interval": "500ms", "steps": [
		{"kind": "partition", "at": "500ms", "for": "500ms", "params": {"shape": "halves", "sides": [[0], [1, 2]]}}]}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Nodes: 3}, Faults: harness.Faults{Replay: path}, Output: harness.Output{Dir: "x"}}.WithDefaults()
	if err != nil || !slices.Equal(cfg.Nemesis, []string{"partition"}) {
		t.Fatalf("WithDefaults: nemesis %v, %v; want [partition] from the schedule", cfg.Nemesis, err)
	}
	cfg.Duration, cfg.Clients, cfg.Dir = 1500*time.Millisecond, 4, filepath.Join(t.TempDir(), "run")
	sum, err := harness.Run(t.Context(), cfg)
	if err != nil || sum.Faults != 1 {
		t.Fatalf("replay: %d faults, %v; want 1 and no error", sum.Faults, err)
	}
}

func TestCheckLease(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		lease locks.Lease
		want  string // "" for none
	}{
		{"good", locks.Lease{Key: "k0", Token: "t", Validity: now}, ""},
		{"empty token", locks.Lease{Key: "k0", Validity: now},
			`harness: bad lease: lock mylock, client 3: acquire "k0" returned ok with an empty token; a lease must carry a non-empty token unique to it (see locks.Lock)`},
		{"another key", locks.Lease{Key: "k1", Token: "t", Validity: now},
			`harness: bad lease: lock mylock, client 3: acquire "k0" returned ok with a lease of key "k1"; a lease must carry the key it locks (see locks.Lock)`},
		{"no validity", locks.Lease{Key: "k0", Token: "t"},
			`harness: bad lease: lock mylock, client 3: acquire "k0" returned ok with no validity; a lease must carry the end of its validity (see locks.Lock)`},
		{"no monotonic reading", locks.Lease{Key: "k0", Token: "t", Validity: time.Unix(0, now.UnixNano())},
			`harness: bad lease: lock mylock, client 3: acquire "k0" returned ok with a validity without a monotonic clock reading; a lease's validity must come from time.Now (see locks.Lock)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := harness.CheckLease("mylock", 3, tc.lease, "k0")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !errors.Is(err, harness.ErrBadLease) {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// emptyTokenLock acquires every key at once, with a lease without a token.
type emptyTokenLock struct{}

func (emptyTokenLock) Acquire(_ context.Context, key string) (locks.Lease, error) {
	return locks.Lease{Key: key, Validity: time.Now().Add(time.Second)}, nil
}
func (emptyTokenLock) Release(context.Context, locks.Lease) error { return nil }
func (emptyTokenLock) Extend(_ context.Context, l locks.Lease) (locks.Lease, error) {
	return l, nil
}
func (emptyTokenLock) Close() error { return nil }

// TestBadLeaseStopsRun: a registered lock that returns an empty token
// stops the run at its first acquire with an error, not at the end: each
// client invokes one acquire, recorded with an unknown outcome.
func TestBadLeaseStopsRun(t *testing.T) {
	err := locks.Register(locks.Spec{Name: "test-harness-empty-token", Summary: "returns leases without a token",
		New: func(locks.Config) (locks.Lock, error) { return emptyTokenLock{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.Config{Workload: harness.Workload{Lock: "test-harness-empty-token", Clients: 3, Duration: 10 * time.Minute}, Output: harness.Output{Dir: filepath.Join(t.TempDir(), "run")}}
	_, err = harness.Run(t.Context(), cfg)
	if !errors.Is(err, harness.ErrBadLease) || !strings.Contains(err.Error(), "returned ok with an empty token") {
		t.Fatalf("Run: %v, want ErrBadLease naming the empty token", err)
	}
	evs, err := history.ReadFile(filepath.Join(cfg.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	invokes := map[int]int{}
	for _, e := range evs {
		switch {
		case e.Type == history.Invoke:
			invokes[e.Process]++
		case e.F == history.Acquire && (e.Type != history.Info || !strings.Contains(e.Error, "harness: bad lease")):
			t.Errorf("acquire completion %+v, want info with the bad lease error", e)
		}
	}
	for p, n := range invokes {
		if n != 1 {
			t.Errorf("client %d invoked %d operations after a bad lease, want 1 acquire", p, n)
		}
	}
}
