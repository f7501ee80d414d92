package nemesis_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// fakeStopper is a client hook that stops nothing real: it says which
// holds it can stop (live), and counts the stops and continuations.
type fakeStopper struct {
	live map[int]bool // clients whose lease a live process serves

	mu      sync.Mutex
	stopped []int // the clients stopped, in order; -1 for a pick
	picks   []int
	conts   int
}

func (s *fakeStopper) StopHolder(client int, token string) (func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live[client] {
		return nil, errors.New("no live process serves this lease")
	}
	s.stopped = append(s.stopped, client)
	return s.cont, nil
}

func (s *fakeStopper) StopProcess(pick int) (string, func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.picks = append(s.picks, pick)
	return fmt.Sprintf("client %d's process (pid 4242)", pick%3), s.cont, nil
}

func (s *fakeStopper) Stall(time.Duration) func() { return func() {} }

func (s *fakeStopper) cont() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conts++
	return nil
}

func (s *fakeStopper) continued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conts
}

// TestClientStop: the targeted form strikes at the next grant whose
// process can still be stopped (a hold released first is passed over),
// records the client, its hold and the pause, continues the process once
// the pause has run out, and once only, the heal after it included; a
// hook that cannot stop processes is an error.
func TestClientStop(t *testing.T) {
	base := time.Now()
	v := grants(base, time.Second, []int{0}, []int{0}) // client 0's, then client 1's
	st := &fakeStopper{live: map[int]bool{1: true}}
	f := decodeKind(t, "client-stop", `{"pause": "50ms", "window": "1s", "active": "1s"}`)
	struck, err := f.Arm(t.Context(), &nemesis.Target{Clients: st, View: v}, base)
	if err != nil || !struck {
		t.Fatalf("Arm: %v, %v; want a strike", struck, err)
	}
	if len(st.stopped) != 1 || st.stopped[0] != 1 {
		t.Fatalf("stopped %v, want client 1 (client 0's hold was released)", st.stopped)
	}
	if s := f.String(); s != "client-stop: stop client 1's process for 50ms, at client 1's hold of k0" {
		t.Errorf("String: %q", s)
	}
	b, _ := json.Marshal(f)
	if !strings.Contains(string(b), `"targets":[1]`) || !strings.Contains(string(b), `"amount":"50ms"`) || !strings.Contains(string(b), `"change":"granted"`) {
		t.Errorf("decision %s", b)
	}
	testutil.Until(t, 10*time.Second, "the continuation after the pause", func() bool { return st.continued() == 1 })
	if err := f.Heal(t.Context(), &nemesis.Target{Clients: st}); err != nil || st.continued() != 1 {
		t.Errorf("heal after the pause: %v, %d continuations; want one", err, st.continued())
	}

	// Healed before the pause runs out: continued at the heal.
	long := decodeKind(t, "client-stop", `{"pause": "1h", "window": "1s", "active": "1s"}`)
	st2 := &fakeStopper{live: map[int]bool{0: true}}
	if struck, err := long.Arm(t.Context(), &nemesis.Target{Clients: st2, View: grants(base, time.Second, []int{0})}, base); err != nil || !struck {
		t.Fatalf("Arm: %v, %v", struck, err)
	}
	if err := long.Heal(t.Context(), &nemesis.Target{Clients: st2}); err != nil || st2.continued() != 1 {
		t.Errorf("heal: %v, %d continuations; want one", err, st2.continued())
	}

	if _, err := f.Arm(t.Context(), &nemesis.Target{View: v}, base); err == nil {
		t.Error("Arm without a hook that stops processes succeeded")
	}
}

// TestClientStopReplay: a strike survives Save and Load as a decision; a
// replay strikes at the next grant after the recorded offset and says
// whether it struck the recorded client's hold.
func TestClientStopReplay(t *testing.T) {
	base := time.Now()
	f := decodeKind(t, "client-stop", `{"pause": "10ms", "window": "1s", "active": "1s"}`)
	if struck, err := f.Arm(t.Context(), &nemesis.Target{Clients: &fakeStopper{live: map[int]bool{0: true}}, View: grants(base, time.Second, []int{0})}, base); err != nil || !struck {
		t.Fatalf("Arm: %v, %v", struck, err)
	}
	params, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["client-stop"], "interval": "1s", "steps": [{"kind": "client-stop", "at": "0s", "for": "2s", "params": ` + string(params) + `}]}`
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	s := nemesis.Setup{Lock: "setnx-watchdog", Nodes: 1, Groups: 1, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: cluster.Spec{}.Abilities(), ClientProcesses: true, GoClients: true}
	if _, err := nemesis.Load(path, nemesis.Setup{Lock: "setnx-watchdog", Nodes: 1, Groups: 1, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: cluster.Spec{}.Abilities()}); err == nil || !strings.Contains(err.Error(), "runs in this process") {
		t.Errorf("Load for a lock in this process: %v, want refused", err)
	}
	for _, tc := range []struct {
		name   string
		client int
		want   string
	}{
		{"same", 0, "same"},
		{"differs", 1, "differs: recorded client 0's hold of k0 granted by n1 with 1s left; live: client 1's hold of k0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := nemesis.Load(path, s)
			if err != nil {
				t.Fatal(err)
			}
			rf := sc.Steps[0].Fault().(nemesis.ArmedFault)
			v := &scriptView{log: []nemesis.Change{{Seq: 1, Kind: nemesis.HoldGranted, Hold: nemesis.Hold{Client: tc.client, Key: "k0", Token: "t", ValidUntil: int64(time.Hour)}}}}
			st := &fakeStopper{live: map[int]bool{tc.client: true}}
			if struck, err := rf.Arm(t.Context(), &nemesis.Target{Clients: st, View: v}, time.Now()); err != nil || !struck {
				t.Fatalf("replay Arm: %v, %v", struck, err)
			}
			b, _ := json.Marshal(rf)
			if !strings.Contains(string(b), `"replay":"`+tc.want) || len(st.stopped) != 1 || st.stopped[0] != tc.client {
				t.Errorf("replayed decision %s (stopped %v), want replay %q", b, st.stopped, tc.want)
			}
			rf.Heal(t.Context(), &nemesis.Target{Clients: st})
		})
	}
}

// TestClientStopRandom: the random form stops the drawn pick at once and
// names what it stopped, which the description then says.
func TestClientStopRandom(t *testing.T) {
	f := decodeKind(t, "client-stop-random", `{"pick": 7, "pause": "1h", "active": "2h"}`)
	st := &fakeStopper{}
	if struck, err := f.Arm(t.Context(), &nemesis.Target{Clients: st}, time.Now()); err != nil || !struck {
		t.Fatalf("Arm: %v, %v", struck, err)
	}
	if len(st.picks) != 1 || st.picks[0] != 7 {
		t.Errorf("picks %v, want [7]", st.picks)
	}
	if s := f.String(); s != "client-stop-random: stop client 1's process (pid 4242) for 1h0m0s" {
		t.Errorf("String: %q", s)
	}
	if err := f.Heal(t.Context(), &nemesis.Target{Clients: st}); err != nil || st.continued() != 1 {
		t.Errorf("heal: %v, %d continuations", err, st.continued())
	}
	for _, bad := range []string{`{"pick": -1, "pause": "1s", "active": "2s"}`, `{"pick": 1, "pause": "0s", "active": "2s"}`, `{"pick": 1, "pause": "2s", "active": "1s"}`} {
		k, _ := nemesis.Lookup("client-stop-random")
		g, err := k.Decode(json.RawMessage(bad))
		if err != nil {
			t.Fatal(err)
		}
		if why := g.(nemesis.RefusingFault).Refuse(nemesis.Setup{TTL: time.Second, ClientProcesses: true}); why == "" {
			t.Errorf("%s accepted", bad)
		}
	}
}

// stampRecorder keeps the events, when each came, and how many times the
// process had been continued then.
type stampRecorder struct {
	mu     sync.Mutex
	events []history.Event
	at     []time.Time
	conts  []int
	st     *fakeStopper
}

func (r *stampRecorder) Append(e history.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.at = append(r.at, time.Now())
	r.conts = append(r.conts, r.st.continued())
	return nil
}

// TestClientStopRecordsItsEnd: a client-stop step records the fault's
// stop when the stopped process is continued, not at the step's end, so
// the fault's window is as long as the stop; the step still runs its
// whole time, and the process is continued once.
func TestClientStopRecordsItsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["client-stop"], "interval": "1s", "steps": [{"kind": "client-stop", "at": "0s", "for": "2s", "params": {"pause": "50ms", "window": "2s", "active": "1s"}}]}`
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	s := nemesis.Setup{Lock: "setnx-watchdog", Nodes: 1, Groups: 1, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: cluster.Spec{}.Abilities(), ClientProcesses: true, GoClients: true}
	sc, err := nemesis.Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	st := &fakeStopper{live: map[int]bool{0: true}}
	rec := &stampRecorder{st: st}
	if err := nemesis.Run(t.Context(), sc, &nemesis.Target{Clients: st, View: grants(base, time.Hour, []int{0})}, base, rec); err != nil {
		t.Fatal(err)
	}
	end := base.Add(2 * time.Second) // the step's end
	if time.Now().Before(end) {
		t.Errorf("Run returned before the step's end: the step must still last its time")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.events) != 2 || rec.events[0].F != history.FaultStart || rec.events[1].F != history.FaultStop || rec.events[1].Error != "" {
		t.Fatalf("events %+v, want a start and a stop", rec.events)
	}
	// The step's end is a deadline the old record (at the heal) could
	// not come before: the stop came when the process was continued.
	if !rec.at[1].Before(end) {
		t.Errorf("the stop was recorded at the step's end, not when the process was continued")
	}
	if rec.conts[1] != 1 {
		t.Errorf("the stop was recorded after %d continuations, want after the one", rec.conts[1])
	}
	if st.continued() != 1 {
		t.Errorf("%d continuations, want one", st.continued())
	}
}
