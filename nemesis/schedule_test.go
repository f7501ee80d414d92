package nemesis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// redlock3 is the setup of the clusters these tests start: 3 nodes, 2
// client groups.
var redlock3 = nemesis.Setup{Lock: "redlock", MultiNode: true, Nodes: 3, Groups: 2, TTL: 200 * time.Millisecond, Topology: "masters", Abilities: noShim}

// TestScheduleSaveLoad checks that a planned schedule of every proxy and
// process kind survives Save and Load: same steps, same faults.
func TestScheduleSaveLoad(t *testing.T) {
	names := []string{"partition", "latency", "kill", "pause"}
	kinds, err := nemesis.Check(names, redlock5)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := nemesis.Plan(rand.New(rand.NewPCG(9, 0)), 9, kinds, redlock5, 10*time.Minute, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, st := range sc.Steps {
		seen[st.Kind] = true
	}
	if len(seen) != len(names) {
		t.Fatalf("planned kinds %v, want all of %v", seen, names)
	}
	path := filepath.Join(t.TempDir(), "schedule.json")
	if err := sc.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := nemesis.Load(path, redlock5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seed != sc.Seed || got.Interval != sc.Interval || !reflect.DeepEqual(got.Kinds, sc.Kinds) || len(got.Steps) != len(sc.Steps) {
		t.Fatalf("loaded seed %d, interval %v, kinds %v, %d steps; saved %d, %v, %v, %d",
			got.Seed, got.Interval, got.Kinds, len(got.Steps), sc.Seed, sc.Interval, sc.Kinds, len(sc.Steps))
	}
	for i, want := range sc.Steps {
		st := got.Steps[i]
		var a, b bytes.Buffer
		if err := errors.Join(json.Compact(&a, st.Params), json.Compact(&b, want.Params)); err != nil {
			t.Fatal(err)
		}
		if st.Kind != want.Kind || st.At != want.At || st.For != want.For || st.Desc != want.Desc ||
			a.String() != b.String() || !reflect.DeepEqual(st.Fault(), want.Fault()) {
			t.Errorf("step %d: loaded %s %v+%v %q %s, saved %s %v+%v %q %s",
				i, st.Kind, st.At, st.For, st.Desc, a.String(), want.Kind, want.At, want.For, want.Desc, b.String())
		}
	}
}

// loadSchedule writes a schedule by hand, as a user would, and loads it.
func loadSchedule(tb testing.TB, steps string) nemesis.Schedule {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "schedule.json")
	js := fmt.Sprintf(`{"seed": 0, "kinds": ["partition", "latency", "kill", "pause"], "interval": "100ms", "steps": [%s]}`, steps)
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		tb.Fatal(err)
	}
	sc, err := nemesis.Load(path, redlock3)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// checkEvents fails the test unless events are a fault-start and a
// fault-stop for each step, in order, with no heal error.
func checkEvents(tb testing.TB, events []history.Event, sc nemesis.Schedule) {
	tb.Helper()
	if len(events) != 2*len(sc.Steps) {
		tb.Fatalf("%d events for %d steps: %+v", len(events), len(sc.Steps), events)
	}
	for i, e := range events {
		st := sc.Steps[i/2]
		want := []history.Func{history.FaultStart, history.FaultStop}[i%2]
		if e.F != want || e.Type != history.Info || e.Process != history.NemesisProcess || e.Value != st.Desc || e.Error != "" {
			tb.Errorf("event %d: %+v, want %s of %q", i, e, want, st.Desc)
		}
		if err := e.Validate(); err != nil {
			tb.Errorf("event %d: %v", i, err)
		}
	}
}

// TestRun runs one step of each kind back to back and checks that the
// events come in start/stop pairs and that nothing is left behind.
func TestRun(t *testing.T) {
	c := startCluster(t, 3, 2)
	sc := loadSchedule(t, `
		{"kind": "partition", "at": "0s", "for": "100ms", "params": {"shape": "split", "sides": [[0, 1], [1, 2]]}},
		{"kind": "latency", "at": "150ms", "for": "100ms", "params": {"nodes": [0, 2], "latency": "50ms", "jitter": "5ms", "upstream": true}},
		{"kind": "kill", "at": "300ms", "for": "100ms", "params": {"nodes": [1], "restart_delay": "100ms"}},
		{"kind": "pause", "at": "450ms", "for": "100ms", "params": {"nodes": [2]}}`)
	rec := newRecorder()
	start := time.Now()
	if err := nemesis.Run(t.Context(), sc, &nemesis.Target{Cluster: c}, start, rec); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 550*time.Millisecond {
		t.Errorf("Run took %v, less than its last step's end", took)
	}
	checkEvents(t, rec.Events(), sc)
	assertHealthy(t, c)
}

// TestRunCancelled cancels Run while a fault of each kind is in effect and
// checks that Run heals it, records the heal and returns ctx's error.
func TestRunCancelled(t *testing.T) {
	c := startCluster(t, 3, 2)
	hasToxic := func(name string) func() bool {
		return func() bool { return c.Node(0).GroupProxy(1).Toxics.GetToxic(name) != nil }
	}
	for _, tc := range []struct {
		kind, params string
		active       func() bool
	}{
		{"partition", `{"shape": "one", "isolated": [0]}`, hasToxic("partition_upstream")},
		{"latency", `{"nodes": [0], "latency": "100ms", "jitter": "0s"}`, hasToxic("latency_downstream")},
		{"kill", `{"nodes": [1], "restart_delay": "1m"}`, func() bool { return !c.Node(1).Running() }},
		{"pause", `{"nodes": [2]}`, func() bool { return c.Node(2).Paused() }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			sc := loadSchedule(t, fmt.Sprintf(`{"kind": %q, "at": "0s", "for": "1m", "params": %s}`, tc.kind, tc.params))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := newRecorder()
			done := make(chan error, 1)
			go func() { done <- nemesis.Run(ctx, sc, &nemesis.Target{Cluster: c}, time.Now(), rec) }()
			testutil.Eventually(t, 5*time.Second, "the fault to be in effect", func() error {
				if !tc.active() {
					return errors.New("not yet")
				}
				return nil
			})
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run after cancel: %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return within 30 s of the cancel")
			}
			checkEvents(t, rec.Events(), sc)
			assertHealthy(t, c)
		})
	}
}

// TestScheduleRefusesLink: a schedule to replay may come from someone
// else: one that is a symbolic link (to a schedule, or dangling) or a
// folder is refused, before anything is decoded.
func TestScheduleRefusesLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "schedule.json")
	if err := (nemesis.Schedule{Seed: 1}).Save(real); err != nil {
		t.Fatal(err)
	}
	if _, err := nemesis.Load(real, redlock5); err != nil {
		t.Fatalf("a regular schedule: %v", err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, dangling, dir} {
		if _, err := nemesis.Load(path, redlock5); err == nil || !strings.Contains(err.Error(), path+" is") {
			t.Errorf("Load(%s): %v, want a refusal naming it", path, err)
		}
		if _, err := nemesis.ScheduleKinds(path); err == nil {
			t.Errorf("ScheduleKinds(%s) read it", path)
		}
	}
}
