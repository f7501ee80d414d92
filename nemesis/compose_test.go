package nemesis_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/nemesis"
)

// composed plans a schedule of kinds with steps of up to compose faults.
func composed(tb testing.TB, s nemesis.Setup, compose int, seed uint64, kinds ...string) nemesis.Schedule {
	tb.Helper()
	s.Compose = compose
	ks, err := nemesis.Check(kinds, s)
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := nemesis.Plan(rand.New(rand.NewPCG(seed, 0)), int64(seed), ks, s, 10*time.Minute, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// TestPlanCompose: with Compose 1 (or 0) a schedule is the one of a fault
// a step, to the byte; above it, some steps hold faults of other kinds,
// never two of one kind, never a targeted one, never two that act on the
// nodes' processes; and one seed composes the same way twice.
func TestPlanCompose(t *testing.T) {
	shim := with(redlock5, func(s *nemesis.Setup) { s.Abilities.Clock = true })
	kinds := []string{"partition", "latency", "kill", "pause", "clock", "clock-majority"}
	js := func(sc nemesis.Schedule) string {
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	one := js(composed(t, shim, 0, 5, kinds...))
	if js(composed(t, shim, 1, 5, kinds...)) != one {
		t.Error("compose 1 planned another schedule than compose 0")
	}
	a, b := composed(t, shim, 3, 5, kinds...), composed(t, shim, 3, 5, kinds...)
	if js(a) != js(b) {
		t.Fatal("compose 3: one seed planned two schedules")
	}
	n := 0
	for i, st := range a.Steps {
		if len(st.With) == 0 {
			continue
		}
		n++
		if len(st.With) > 2 {
			t.Errorf("step %d holds %d faults, compose 3 allows 3", i, 1+len(st.With))
		}
		names := []string{st.Kind}
		process := 0
		for _, k := range append([]string{st.Kind}, partKinds(st)...) {
			if k == "kill" || k == "pause" {
				process++
			}
			if k == "clock-majority" {
				t.Errorf("step %d composes the targeted kind %s", i, k)
			}
		}
		for _, k := range partKinds(st) {
			if slices.Contains(names, k) {
				t.Errorf("step %d holds kind %s twice", i, k)
			}
			names = append(names, k)
		}
		if process > 1 {
			t.Errorf("step %d holds %v: two faults on the nodes' processes", i, names)
		}
	}
	if n == 0 {
		t.Fatalf("compose 3 composed no step in %d", len(a.Steps))
	}
}

func partKinds(st nemesis.Step) []string {
	var out []string
	for _, p := range st.With {
		out = append(out, p.Kind)
	}
	return out
}

// TestComposeSaveLoad: a composed step survives Save and Load, its parts
// decoded and described, and its kinds are the schedule's (so a replay
// is set up for them); a targeted fault in a composed step is refused.
func TestComposeSaveLoad(t *testing.T) {
	shim := with(redlock5, func(s *nemesis.Setup) { s.Abilities.Clock = true })
	sc := composed(t, shim, 2, 7, "partition", "clock")
	path := filepath.Join(t.TempDir(), "schedule.json")
	if err := sc.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := nemesis.Load(path, shim)
	if err != nil {
		t.Fatal(err)
	}
	composedSteps := 0
	for i, want := range sc.Steps {
		st := got.Steps[i]
		if st.Kind != want.Kind || st.Desc != want.Desc || len(st.With) != len(want.With) {
			t.Fatalf("step %d: loaded %s %q with %d, saved %s %q with %d", i, st.Kind, st.Desc, len(st.With), want.Kind, want.Desc, len(want.With))
		}
		for j := range st.With {
			if st.With[j].Kind != want.With[j].Kind || st.With[j].Desc != want.With[j].Desc || st.With[j].Desc == "" {
				t.Errorf("step %d part %d: loaded %+v, saved %+v", i, j, st.With[j], want.With[j])
			}
		}
		if len(st.With) > 0 {
			composedSteps++
		}
	}
	if composedSteps == 0 {
		t.Fatal("seed 7 composed no step; pick another seed")
	}
	kinds, err := nemesis.ScheduleKinds(path)
	if err != nil || !reflect.DeepEqual(kinds, []string{"partition", "clock"}) {
		t.Errorf("ScheduleKinds = %v, %v", kinds, err)
	}

	bad := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["partition", "clock-majority"], "interval": "1s", "steps": [
		{"kind": "partition", "at": "1s", "for": "3s", "params": {"shape": "one", "isolated": [0]},
		 "with": [{"kind": "clock-majority", "params": {"scope": "majority", "pick": 0, "margin": "10ms", "window": "1s", "active": "1s"}}]}]}`
	if err := os.WriteFile(bad, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nemesis.Load(bad, shim); err == nil || !strings.Contains(err.Error(), "never composed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Load of a composed targeted fault: %v; want one line refusing it", err)
	}
}

// TestRunComposed runs one composed step on a real cluster: each fault
// starts, in order, as an event of its own, and heals in reverse order;
// nothing is left behind.
func TestRunComposed(t *testing.T) {
	c := startCluster(t, 3, 2)
	sc := loadSchedule(t, `
		{"kind": "partition", "at": "0s", "for": "200ms", "params": {"shape": "one", "isolated": [1]},
		 "with": [{"kind": "latency", "params": {"nodes": [0, 2], "latency": "5ms", "jitter": "0s"}},
		          {"kind": "pause", "params": {"nodes": [2]}}]}`)
	rec := newRecorder()
	if err := nemesis.Run(t.Context(), sc, &nemesis.Target{Cluster: c}, time.Now(), rec); err != nil {
		t.Fatal(err)
	}
	st := sc.Steps[0]
	descs := []string{st.Desc, st.With[0].Desc, st.With[1].Desc}
	want := []struct {
		f    history.Func
		desc string
	}{
		{history.FaultStart, descs[0]}, {history.FaultStart, descs[1]}, {history.FaultStart, descs[2]},
		{history.FaultStop, descs[2]}, {history.FaultStop, descs[1]}, {history.FaultStop, descs[0]},
	}
	evs := rec.Events()
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		if e.F != want[i].f || e.Value != want[i].desc || e.Error != "" {
			t.Errorf("event %d: %s %q (error %q), want %s %q", i, e.F, e.Value, e.Error, want[i].f, want[i].desc)
		}
	}
	assertHealthy(t, c)
}
