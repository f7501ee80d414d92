package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// clockCluster starts n nodes with the clock shim, closed when the test ends.
func clockCluster(tb testing.TB, n int) *cluster.Cluster {
	tb.Helper()
	return testutil.Cluster(tb, cluster.Spec{Nodes: n}, cluster.WithClockShim())
}

func clockSetup() Setup {
	return Setup{Lock: "redlock", MultiNode: true, Nodes: 5, TTL: time.Second, Topology: "masters", Abilities: cluster.Abilities{Process: true, Clock: true, Network: true}}
}

func TestClockRefuse(t *testing.T) {
	s := clockSetup()
	if _, err := Check([]string{"clock"}, s); err != nil {
		t.Errorf("Check with the shim: %v", err)
	}
	s.Abilities.Clock = false
	_, err := Check([]string{"clock"}, s)
	if err == nil || !strings.Contains(err.Error(), "clock refused: the nodes run without the clock shim") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check without the shim: %v, want a one-line refusal", err)
	}
	f := &Clock{Nodes: []int{4}, Mode: ClockJump, Offset: Duration(time.Second)}
	if why := f.Refuse(clockSetup()); why != "" {
		t.Errorf("Refuse of n5 in a 5-node run: %q", why)
	}
	s = clockSetup()
	s.Nodes = 3
	if why := f.Refuse(s); !strings.Contains(why, "no node n5") {
		t.Errorf("Refuse of n5 in a 3-node run: %q, want no node n5", why)
	}
}

func TestClockDecode(t *testing.T) {
	k, err := Lookup("clock")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		`{"nodes":[0,2],"mode":"jump","offset":"-1m30s"}`,
		`{"nodes":[1],"mode":"strobe","offset":"2.5s","period":"250ms"}`,
	} {
		f, err := k.Decode(json.RawMessage(in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", in, err)
		}
		out, err := json.Marshal(f)
		if err != nil || string(out) != in {
			t.Errorf("Decode(%s) then Marshal = %s, %v", in, out, err)
		}
	}
	for in, want := range map[string]string{
		`{"nodes":[0],"mode":"warp","offset":"1s"}`:                   `mode "warp"`,
		`{"nodes":[0],"mode":"strobe","offset":"1s"}`:                 "needs a positive period",
		`{"nodes":[0],"mode":"jump","offset":"1s","period":"1s"}`:     "takes no period",
		`{"nodes":[],"mode":"jump","offset":"1s"}`:                    "no nodes",
		`{"nodes":[2,1],"mode":"jump","offset":"1s"}`:                 "increasing order",
		`{"nodes":[-1],"mode":"jump","offset":"1s"}`:                  "negative node index -1",
		`{"nodes":[0],"mode":"jump","offset":"soon"}`:                 "soon",
		`{"nodes":[0],"mode":"jump","offset":"1s","skew":"1s"}`:       "skew",
		`{"nodes":[0],"mode":"strobe","offset":"1s","period":"-1ms"}`: "needs a positive period",
	} {
		f, err := k.Decode(json.RawMessage(in))
		if err == nil {
			if why := f.(RefusingFault).Refuse(clockSetup()); why != "" {
				err = errors.New(why)
			}
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) then Refuse = %v, want an error with %q", in, err, want)
		}
	}
}

// TestClockPlan draws many faults: all modes, minority and majority, 1.5–3
// TTLs, parameters that survive a JSON round trip, the same for one seed.
func TestClockPlan(t *testing.T) {
	k, _ := Lookup("clock")
	s := clockSetup()
	sizes, modes := map[int]int{}, map[string]int{}
	draw := func(seed uint64) []byte {
		rng := rand.New(rand.NewPCG(seed, 0))
		var all []Fault
		for range 400 {
			all = append(all, k.Plan(rng, s))
		}
		b, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rng := rand.New(rand.NewPCG(1, 0))
	for range 2000 {
		f := k.Plan(rng, s).(*Clock)
		if why := f.Refuse(s); why != "" {
			t.Fatalf("%s refused: %s", f, why)
		}
		off := time.Duration(f.Offset).Abs()
		if off < s.TTL*3/2 || off > 3*s.TTL {
			t.Errorf("%s: offset outside 1.5–3 TTLs", f)
		}
		mode := f.Mode
		if f.Offset < 0 {
			mode += " back"
		}
		modes[mode]++
		sizes[len(f.Nodes)]++
		params, _ := json.Marshal(f)
		g, err := k.Decode(params)
		if err != nil || !reflect.DeepEqual(g, f) || g.String() != f.String() {
			t.Fatalf("%s: round trip gave %v, %v", f, g, err)
		}
	}
	for _, m := range []string{"jump", "jump back", "strobe"} {
		if modes[m] == 0 {
			t.Errorf("mode %q never drawn: %v", m, modes)
		}
	}
	for n := 1; n <= 5; n++ {
		if sizes[n] == 0 {
			t.Errorf("no fault on %d nodes: %v", n, sizes)
		}
	}
	if a, b := draw(7), draw(7); string(a) != string(b) {
		t.Error("one seed drew two different plans")
	}
	s.MultiNode = false
	if f := k.Plan(rng, s).(*Clock); !reflect.DeepEqual(f.Nodes, []int{0}) {
		t.Errorf("single-node lock: fault on %v, want n1", f.Nodes)
	}
}

// TestClockJumpHeal: a jump forward expires the keys of the nodes it hits
// at once, not of the others; Heal sets the clocks right.
func TestClockJumpHeal(t *testing.T) {
	c := clockCluster(t, 3)
	ctx, tg := t.Context(), &Target{Cluster: c}
	for _, n := range c.Nodes() {
		if err := n.Client().Set(ctx, "lock", "me", 10*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	f := &Clock{Nodes: []int{0, 2}, Mode: ClockJump, Offset: Duration(20 * time.Second)}
	if got := f.String(); got != "clock jump +20s on n1,n3" {
		t.Errorf("String() = %q", got)
	}
	if err := f.Start(ctx, tg); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes() {
		hit := i != 1
		err := n.Client().Get(ctx, "lock").Err()
		if gone := errors.Is(err, redis.Nil); gone != hit || (err != nil && !gone) {
			t.Errorf("%s: GET lock after the jump: %v; jumped: %v", n.Name(), err, hit)
		}
	}
	if err := f.Heal(ctx, tg); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		if got := n.ClockOffset(); got != 0 {
			t.Errorf("%s: offset %v after Heal", n.Name(), got)
		}
		rc := n.Client()
		if err := rc.Set(ctx, "fresh", "v", time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		if ttl, err := rc.PTTL(ctx, "fresh").Result(); err != nil || ttl <= 500*time.Millisecond {
			t.Errorf("%s: PTTL of a PX 1000 key after Heal = %v, %v; want > 500ms", n.Name(), ttl, err)
		}
	}
}

// TestClockStrobe: the offset comes and goes; after Heal the goroutine is
// gone and the offset stays 0.
func TestClockStrobe(t *testing.T) {
	c := clockCluster(t, 2)
	ctx, tg := t.Context(), &Target{Cluster: c}
	const period = 10 * time.Millisecond
	f := &Clock{Nodes: []int{1}, Mode: ClockStrobe, Offset: Duration(-time.Hour), Period: Duration(period)}
	if err := f.Start(ctx, tg); err != nil {
		t.Fatal(err)
	}
	n := c.Node(1)
	for _, want := range []time.Duration{0, -time.Hour, 0, -time.Hour} {
		testutil.Until(t, 5*time.Second, "strobe to "+want.String(), func() bool { return n.ClockOffset() == want })
	}
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("n1 not in the fault has offset %v", got)
	}
	if err := f.Heal(ctx, tg); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.bg.done:
	default:
		t.Fatal("strobe goroutine still running after Heal")
	}
	for end := time.Now().Add(10 * period); time.Now().Before(end); {
		if got := n.ClockOffset(); got != 0 {
			t.Fatalf("offset %v after Heal", got)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClockStrobeCancel: the strobe ends with ctx; Heal still sets right.
func TestClockStrobeCancel(t *testing.T) {
	c := clockCluster(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	tg := &Target{Cluster: c}
	f := &Clock{Nodes: []int{0}, Mode: ClockStrobe, Offset: Duration(time.Hour), Period: Duration(5 * time.Millisecond)}
	if err := f.Start(ctx, tg); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-f.bg.done:
	case <-time.After(5 * time.Second):
		t.Fatal("strobe goroutine still running 5s after ctx was cancelled")
	}
	if err := f.Heal(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("offset %v after Heal", got)
	}
}

// TestClockRun runs a one-step schedule: started, recorded, healed.
func TestClockRun(t *testing.T) {
	c := clockCluster(t, 1)
	f := &Clock{Nodes: []int{0}, Mode: ClockJump, Offset: Duration(time.Hour)}
	sc := Schedule{Kinds: []string{"clock"}, Steps: []Step{{Kind: "clock", For: Duration(500 * time.Millisecond), Desc: f.String(), fault: f}}}
	rec := &clockRecorder{started: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), sc, &Target{Cluster: c}, time.Now(), rec) }()
	<-rec.started // recorded just before Start is called
	testutil.Until(t, 5*time.Second, "offset 1h while the fault is on", func() bool { return c.Node(0).ClockOffset() == time.Hour })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("offset %v after Run, want 0", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.events) != 2 || rec.events[0].F != history.FaultStart || rec.events[1].F != history.FaultStop ||
		rec.events[1].Value != "clock jump +1h0m0s on n1" || rec.events[1].Error != "" {
		t.Errorf("events %+v, want a start and a clean stop of %q", rec.events, f)
	}
}

// clockRecorder keeps the events and signals the first fault start.
type clockRecorder struct {
	mu      sync.Mutex
	events  []history.Event
	started chan struct{}
}

func (r *clockRecorder) Append(e history.Event) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if e.F == history.FaultStart {
		r.started <- struct{}{}
	}
	return nil
}

func TestClockNoShim(t *testing.T) {
	c, err := cluster.Start(context.Background(), 1, cluster.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	f := &Clock{Nodes: []int{0}, Mode: ClockJump, Offset: Duration(time.Hour)}
	if err := f.Start(t.Context(), &Target{Cluster: c}); !errors.Is(err, cluster.ErrNoClockShim) {
		t.Errorf("Start without the shim: %v, want ErrNoClockShim", err)
	}
}
