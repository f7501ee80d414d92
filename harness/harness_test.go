package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
)

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  harness.Config
		want string
	}{
		{harness.Config{Workload: harness.Workload{Lock: "nope"}, Output: harness.Output{Dir: "x"}}, "unknown lock"},
		{harness.Config{Workload: harness.Workload{Lock: "setnx"}, Cluster: harness.Cluster{Nodes: 3}, Output: harness.Output{Dir: "x"}}, "single-instance lock"},
		{harness.Config{Workload: harness.Workload{Lock: "redlock", Clients: -1}, Output: harness.Output{Dir: "x"}}, "clients must be at least 1"},
		{harness.Config{Workload: harness.Workload{Lock: "setnx-get-set", Fencing: true}, Output: harness.Output{Dir: "x"}}, "no fencing tokens"},
		{harness.Config{Workload: harness.Workload{Lock: "setnx"}}, "no run directory"},
		{harness.Config{Workload: harness.Workload{Lock: "setnx", Hold: -time.Second}, Output: harness.Output{Dir: "x"}}, "must not be negative"},
	} {
		_, err := tc.cfg.WithDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to contain %q", tc.cfg, err, tc.want)
		}
	}
	cfg, err := harness.Config{Workload: harness.Workload{Lock: "redlock"}, Output: harness.Output{Dir: "x"}}.WithDefaults()
	if err != nil || cfg.Nodes != 5 || cfg.Clients != 10 || cfg.Seed != 1 || cfg.AcquireTimeout != cfg.TTL {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
}

// run runs a short test and returns its summary and checked history.
func run(t *testing.T, ctx context.Context, cfg harness.Config) (harness.Summary, []history.Event, checker.Result, error) {
	t.Helper()
	cfg.Dir = filepath.Join(t.TempDir(), "run")
	sum, runErr := harness.Run(ctx, cfg)
	evs, res := checked(t, filepath.Join(cfg.Dir, "history.jsonl"))
	return sum, evs, res, runErr
}

// checked reads the history at path and checks it, failing the test if
// either fails.
func checked(tb testing.TB, path string) ([]history.Event, checker.Result) {
	tb.Helper()
	evs, err := history.ReadFile(path)
	if err != nil {
		tb.Fatalf("read history: %v", err)
	}
	res, err := checker.Check(evs, checker.Options{})
	if err != nil {
		tb.Fatalf("check: %v", err)
	}
	return evs, res
}

func TestRunValid(t *testing.T) {
	for _, tc := range []harness.Config{
		{Workload: harness.Workload{Lock: "setnx", Clients: 6, Keys: 2, Duration: time.Second, TTL: time.Second, Seed: 7}},
		{Workload: harness.Workload{Lock: "setnx", Clients: 6, Keys: 2, Duration: time.Second, TTL: time.Second, Seed: 7, Fencing: true}},
		{Workload: harness.Workload{Lock: "redlock", Clients: 6, Keys: 2, Duration: time.Second, TTL: time.Second, Seed: 7}, Cluster: harness.Cluster{Nodes: 3}},
	} {
		t.Run(tc.Lock, func(t *testing.T) {
			sum, evs, res, err := run(t, context.Background(), tc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Lease != checker.Valid || res.Resource != checker.Valid {
				t.Fatalf("verdicts %s/%s on a fault-free run of %s: %+v", res.Lease, res.Resource, tc.Lock, res.LeaseViolations)
			}
			if res.Stats.AcquireOK == 0 || res.Stats.Sections == 0 {
				t.Fatalf("no work done: %+v", res.Stats)
			}
			if sum.Events != len(evs) || !strings.HasPrefix(sum.Server, "redis ") || len(sum.Server) <= len("redis ") {
				t.Fatalf("summary %+v, history has %d events", sum, len(evs))
			}
			fenced := 0
			for _, e := range evs {
				if e.F == history.Acquire && e.Type == history.Ok && e.Fence > 0 {
					fenced++
				}
			}
			if tc.Fencing != (fenced > 0) {
				t.Fatalf("fencing %v but %d acquires carried a fence", tc.Fencing, fenced)
			}
		})
	}
}

// TestRunFindsRace: the check-then-act mutant is caught on a fault-free
// run; the harness has the power to see a broken lock.
func TestRunFindsRace(t *testing.T) {
	_, _, res, err := run(t, context.Background(), harness.Config{Workload: harness.Workload{Lock: "setnx-get-set", Clients: 8, Keys: 1, Duration: 3 * time.Second, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lease != checker.Invalid {
		t.Fatalf("lease verdict %s for setnx-get-set, want invalid", res.Lease)
	}
}

// TestRunInterrupted: cancelling a run stops it early, leaves a history
// that checks, and leaves no redis-server behind.
func TestRunInterrupted(t *testing.T) {
	cfg := harness.Config{Workload: harness.Workload{Lock: "redlock", Duration: time.Minute, Seed: 3}, Cluster: harness.Cluster{Nodes: 3}}
	cfg.Dir = filepath.Join(t.TempDir(), "run")
	// Interrupt once the run has recorded something.
	sum, err := interruptWhen(t, cfg, func(evs []history.Event) bool { return len(evs) > 20 })
	hist := filepath.Join(cfg.Dir, "history.jsonl")
	if !errors.Is(err, context.Canceled) || !sum.Interrupted {
		t.Fatalf("err = %v, interrupted = %v; want context.Canceled and true", err, sum.Interrupted)
	}
	if sum.Elapsed > 30*time.Second {
		t.Fatalf("run went on for %v after the interrupt", sum.Elapsed)
	}
	evs, rerr := history.ReadFile(hist)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if _, cerr := checker.Check(evs, checker.Options{}); cerr != nil {
		t.Fatalf("interrupted history does not check: %v", cerr)
	}
	if left := redisProcessesUnder(t, cfg.Dir); len(left) > 0 {
		t.Fatalf("redis-server processes left behind: %v", left)
	}
}

// redisProcessesUnder lists the pids of live processes whose command line
// mentions dir.
func redisProcessesUnder(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), dir) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie is already dead
			}
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// interruptWhen runs cfg and cancels it as soon as the history it has
// streamed so far satisfies cond (polled, 30 s deadline); it returns what
// Run returned.
func interruptWhen(t *testing.T, cfg harness.Config, cond func([]history.Event) bool) (harness.Summary, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var (
		sum harness.Summary
		err error
	)
	go func() {
		defer close(done)
		sum, err = harness.Run(ctx, cfg)
	}()
	hist := filepath.Join(cfg.Dir, "history.jsonl")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if evs, rerr := history.ReadFile(hist); rerr == nil && cond(evs) {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("condition not met within 30s (run error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	return sum, err
}

// TestRunEndsWithinGrace: a hold longer than the run (here an hour) is cut
// short RunGrace after the run's Duration, and its release bounded too:
// the run ended only once every hold had, however long (a --hold or a TTL
// of hours ran on past --duration). What it recorded checks.
func TestRunEndsWithinGrace(t *testing.T) {
	cfg := harness.Config{Workload: harness.Workload{Lock: "setnx", Clients: 2, Keys: 1, Duration: time.Second, TTL: 2 * time.Hour, Hold: time.Hour, Seed: 7}}
	sum, _, res, err := run(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Elapsed >= time.Hour || res.Stats.AcquireOK == 0 {
		t.Fatalf("elapsed %s, %d acquires ok: want the run to end before its hour-long hold did", sum.Elapsed, res.Stats.AcquireOK)
	}
}
