package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// TestMain makes the test binary serve a Go lock when a run starts it as
// a client process (locks.ClientCommand runs this executable as
// `client --lock NAME`, as it runs torture), and run the tests otherwise.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "client" && os.Args[2] == "--lock" {
		if err := locks.Serve(context.Background(), os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var stoppedClient = regexp.MustCompile(`^client-stop: stop client ([0-9]+)'s process for (\S+), at client`)

// TestClientStop: setnx-watchdog served in client processes of its own
// (ClientProcess), its holder's whole process stopped right after a
// grant for longer than the TTL: the key expires while the watchdog is
// stopped, another client is granted it, and the stopped holder goes on
// as the holder when it runs again (lease and resource invalid, the
// overlap explained as a holder told too late); with fencing no update
// is lost. The stopped client takes no step while its process is
// stopped, and schedule.json keeps the decision. Without ClientProcess,
// the Go lock is served in client processes all the same.
func TestClientStop(t *testing.T) {
	t.Parallel()
	cfg := func(fencing bool) harness.Config {
		return harness.Config{
			Workload: harness.Workload{Lock: "setnx-watchdog", ClientProcess: true, Clients: 4, Keys: 1, Duration: 5 * time.Second, TTL: 500 * time.Millisecond, Seed: 3, Fencing: fencing},
			Faults:   harness.Faults{Nemesis: []string{"client-stop"}, NemesisInterval: time.Second},
		}
	}
	t.Run("served in client processes without the flag", func(t *testing.T) {
		c := cfg(false)
		c.ClientProcess, c.Dir = false, t.TempDir()
		p, err := harness.NewPlan(c)
		if err != nil || !p.Config().ClientProcess {
			t.Errorf("NewPlan without ClientProcess: %v; want the Go lock served in client processes, as the run records", err)
		}
		c.Nemesis = []string{"partition"}
		if p, err := harness.NewPlan(c); err != nil || p.Config().ClientProcess {
			t.Errorf("NewPlan under partition: %v; want the lock in this process", err)
		}
	})
	t.Run("without fencing", func(t *testing.T) {
		t.Parallel()
		c := cfg(false)
		sum, evs, res, err := run(t, context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Lease != checker.Invalid {
			t.Fatalf("lease %s, want invalid: the stopped holder overlaps the next", res.Lease)
		}
		client, pause, _ := stopOf(t, evs)
		// From the decision's time (taken once the process was stopped
		// and the client frozen) until the pause ran out, the client
		// records nothing.
		at := decidedAt(t, filepath.Join(filepath.Dir(sum.HistoryPath), "schedule.json"))
		for _, e := range evs {
			if e.Process == client && e.Time > at && e.Time < at+pause.Nanoseconds() {
				t.Errorf("client %d, stopped at %d for %s, recorded %s %s at %d", client, at, pause, e.F, e.Type, e.Time)
			}
		}
		aimed, err := nemesis.Aimed(filepath.Join(filepath.Dir(sum.HistoryPath), "schedule.json"))
		if err != nil || len(aimed) == 0 || !strings.Contains(aimed[0], fmt.Sprintf("stop client %d's process", client)) {
			t.Errorf("schedule.json's decisions %q, %v", aimed, err)
		}
		a, err := checker.Analyze(evs, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := explain.Explain(&a, 0)
		if len(ex) == 0 || ex[0].Cause != explain.LateNotice || ex[0].Fault != 1 {
			t.Fatalf("first explanation %+v, want a holder told too late, fault #1", ex)
		}
	})
	t.Run("with fencing", func(t *testing.T) {
		t.Parallel()
		_, evs, res, err := run(t, context.Background(), cfg(true))
		if err != nil {
			t.Fatal(err)
		}
		stopOf(t, evs)
		if res.Lease != checker.Invalid || res.Resource != checker.Valid {
			t.Errorf("lease %s, resource %s; want invalid and valid: the fence refuses the stopped holder's write", res.Lease, res.Resource)
		}
	})
}

// stopOf returns the client, the pause and the start of the run's first
// client-stop, failing the test without one.
func stopOf(tb testing.TB, evs []history.Event) (client int, pause time.Duration, start int64) {
	tb.Helper()
	for _, e := range evs {
		if e.F != history.FaultStart {
			continue
		}
		m := stoppedClient.FindStringSubmatch(e.Value)
		if m == nil {
			tb.Fatalf("fault %q does not say which client it stopped", e.Value)
		}
		client, _ = strconv.Atoi(m[1])
		pause, err := time.ParseDuration(m[2])
		if err != nil {
			tb.Fatal(err)
		}
		return client, pause, e.Time
	}
	tb.Fatal("no client-stop struck")
	return 0, 0, 0
}

// decidedAt returns the time of the first decision of the schedule at
// path, in nanoseconds from the run's start.
func decidedAt(tb testing.TB, path string) int64 {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var sc struct {
		Steps []struct {
			Params struct {
				Decision *struct {
					At nemesis.Duration `json:"at"`
				} `json:"decision"`
			} `json:"params"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		tb.Fatal(err)
	}
	for _, st := range sc.Steps {
		if d := st.Params.Decision; d != nil {
			return int64(d.At)
		}
	}
	tb.Fatalf("%s has no decision", path)
	return 0
}

// TestLossNotice: a holder cut off its node right after its grant
// (partition-holder) cannot renew. The watchdog tells it before its key
// can expire: a lost event in the history, its hold ended there, its
// write refused, and no overlap with the client of the other group
// granted the key. The mutant that ignores failed renewals tells
// nothing: its holder overlaps that client and writes over it.
func TestLossNotice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock            string
		lease, resource checker.Verdict
		lost            bool
	}{
		{"setnx-watchdog", checker.Valid, checker.Valid, true},
		{"setnx-watchdog-no-notice", checker.Invalid, checker.Invalid, false},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			_, evs, res, err := run(t, context.Background(), harness.Config{
				// Holds of 3 TTLs: the cut holder still holds when the
				// other group's client is granted the expired key.
				Workload: harness.Workload{Lock: tc.lock, Clients: 4, Keys: 1, Duration: 5 * time.Second, TTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond, Seed: 1},
				Faults:   harness.Faults{Nemesis: []string{"partition-holder"}, NemesisInterval: time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if starts, _ := faultEvents(evs); starts == 0 {
				t.Fatal("no holder was cut off")
			}
			lost := 0
			for _, e := range evs {
				if e.F == history.Lost {
					lost++
					if e.Token == "" || e.Error == "" {
						t.Errorf("lost event %+v without its token or reason", e)
					}
				}
			}
			if res.Lease != tc.lease || res.Resource != tc.resource || (lost > 0) != tc.lost || res.Stats.LossNotices != lost {
				t.Fatalf("lease %s, resource %s, %d loss notices (stats %d); want %s, %s and notices %v", res.Lease, res.Resource, lost, res.Stats.LossNotices, tc.lease, tc.resource, tc.lost)
			}
		})
	}
}
