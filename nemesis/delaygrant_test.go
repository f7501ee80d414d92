package nemesis_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	toxics "github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// liveView is a View the test feeds change by change.
type liveView struct {
	mu   sync.Mutex
	log  []nemesis.Change
	wake chan struct{}
}

func newLiveView() *liveView { return &liveView{wake: make(chan struct{})} }

func (v *liveView) Holds() ([]nemesis.Hold, uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return nil, uint64(len(v.log))
}

func (v *liveView) Next(ctx context.Context, after uint64) ([]nemesis.Change, error) {
	for {
		v.mu.Lock()
		if uint64(len(v.log)) > after {
			out := append([]nemesis.Change(nil), v.log[after:]...)
			v.mu.Unlock()
			return out, nil
		}
		wake := v.wake
		v.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

// grant appends a grant of k0 to client by n1, returned at run-clock
// time at.
func (v *liveView) grant(client int, at int64) { v.add(nemesis.HoldGranted, client, at) }

// add appends a change of kind to client's hold of k0 (granted by n1 at
// run-clock time at, valid for a second) at at.
func (v *liveView) add(kind nemesis.ChangeKind, client int, at int64) {
	v.addBy(kind, client, at, 0)
}

// addBy is add with the nodes that granted the hold.
func (v *liveView) addBy(kind nemesis.ChangeKind, client int, at int64, granted ...int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	h := nemesis.Hold{Client: client, Key: "k0", Token: "t", Granted: granted, Reported: true, Acquired: at, ValidUntil: at + int64(time.Second)}
	if kind == nemesis.HoldEnded {
		h.Ended = at
	}
	v.log = append(v.log, nemesis.Change{Seq: uint64(len(v.log) + 1), Kind: kind, Time: at, Hold: h})
	close(v.wake)
	v.wake = make(chan struct{})
}

// delayedGrant runs f's Arm against c and v, and plays the acquire it
// aims at: once the delay is on, a SET NX through the group's proxy, whose
// reply must take at least the delay; it then reports the grant to v, as
// the harness would. It returns whether Arm struck.
func delayedGrant(t *testing.T, f nemesis.ArmedFault, c *cluster.Cluster, v *liveView, base time.Time, delay time.Duration) bool {
	t.Helper()
	rc := testutil.Client(t, c.Node(0).GroupAddr(0), c.Password())
	if err := rc.Ping(t.Context()).Err(); err != nil { // connected before the delay
		t.Fatal(err)
	}
	v.grant(9, time.Since(base).Nanoseconds()) // before the delay: not the aim
	done := armAsync(t, f, &nemesis.Target{Cluster: c, View: v}, base)
	px := c.Node(0).GroupProxy(0)
	testutil.Eventually(t, 10*time.Second, "the delay on n1's proxy", func() error {
		if len(px.Toxics.GetToxicArray()) != 1 {
			return os.ErrNotExist
		}
		return nil
	})
	start := time.Now()
	if err := rc.SetNX(t.Context(), "k0", "t", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("SET NX under the delay took %v, want at least %v", took, delay)
	}
	v.grant(1, time.Since(base).Nanoseconds())
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	assertHealthy(t, c) // the delay is gone as soon as the grant is seen
	if err := rc.Del(t.Context(), "k0").Err(); err != nil {
		t.Fatal(err)
	}
	return a.struck
}

// TestDelayGrant: against a real node, delay-grant holds the node's
// replies until a grant returns late, passes over the grant that returned
// before the delay, records the late one as its decision and removes the
// delay; the decision survives Save and Load, and the replay delays at the
// recorded offset and finds the same grant.
func TestDelayGrant(t *testing.T) {
	const delay = 80 * time.Millisecond
	if got := nemesis.GrantDelay(time.Second); got != delay {
		t.Fatalf("GrantDelay(1s) = %v, want %v", got, delay)
	}
	c := startCluster(t, 1, 1)
	f := decodeKind(t, "delay-grant", `{"delay": "80ms", "retry": "5s", "window": "2s", "active": "1s"}`)
	base := time.Now()
	if !delayedGrant(t, f, c, newLiveView(), base, delay) {
		t.Fatal("Arm: no strike")
	}
	if s := f.String(); !strings.Contains(s, "replies of n1 held 80ms from") || !strings.Contains(s, "at client 1's hold of k0 granted by n1") {
		t.Errorf("String: %q", s)
	}
	params, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["delay-grant"], "interval": "1s", "steps": [{"kind": "delay-grant", "at": "0s", "for": "3s", "params": ` + string(params) + `}]}`
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	s := nemesis.Setup{Lock: "setnx", Nodes: 1, Groups: 1, TTL: time.Second, Topology: cluster.TopologyMasters, Abilities: cluster.Spec{}.Abilities()}
	sc, err := nemesis.Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	rf := sc.Steps[0].Fault().(nemesis.ArmedFault)
	rbase := time.Now()
	if !delayedGrant(t, rf, c, newLiveView(), rbase, delay) {
		t.Fatal("replay Arm: no strike")
	}
	b, _ := json.Marshal(rf)
	if !strings.Contains(string(b), `"replay":"same"`) {
		t.Errorf("replayed decision %s, want replay same", b)
	}
	var got struct{ Decision nemesis.Decision }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var rec struct{ Decision nemesis.Decision }
	if err := json.Unmarshal(params, &rec); err != nil {
		t.Fatal(err)
	}
	if got.Decision.At < rec.Decision.At {
		t.Errorf("the replay delayed at %v, before the recorded offset %v", time.Duration(got.Decision.At), time.Duration(rec.Decision.At))
	}
}

// TestDelayGrantHalves: when no acquire comes back granted under the
// delay within Retry (a lock that gives up on a call sooner), the delay
// is halved, and the decision's amount is the delay the grant got.
func TestDelayGrantHalves(t *testing.T) {
	c := startCluster(t, 1, 1)
	f := decodeKind(t, "delay-grant", `{"delay": "80ms", "retry": "150ms", "window": "5s", "active": "1s"}`)
	v := newLiveView()
	base := time.Now()
	done := make(chan error, 1)
	go func() {
		struck, err := f.Arm(t.Context(), &nemesis.Target{Cluster: c, View: v}, base)
		if err == nil && !struck {
			err = os.ErrNotExist
		}
		done <- err
	}()
	px := c.Node(0).GroupProxy(0)
	testutil.Eventually(t, 10*time.Second, "the delay halved to 40ms", func() error {
		for _, tx := range px.Toxics.GetToxicArray() {
			if l, ok := tx.(*toxics.ToxicWrapper).Toxic.(*toxics.LatencyToxic); ok && l.Latency == 40 {
				return nil
			}
		}
		return os.ErrNotExist
	})
	at := time.Since(base) + 40*time.Millisecond
	// The grant must return at least the delay after the halving, as a
	// held reply would.
	testutil.Eventually(t, 5*time.Second, "40ms past the halving", func() error {
		if time.Since(base) < at {
			return os.ErrNotExist
		}
		return nil
	})
	v.grant(2, time.Since(base).Nanoseconds())
	if err := <-done; err != nil {
		t.Fatalf("Arm: %v", err)
	}
	if s := f.String(); !strings.Contains(s, "held 40ms from") {
		t.Errorf("String: %q, want the halved delay", s)
	}
	assertHealthy(t, c)
}

// TestDelayGrantRaced: an acquire already in flight when the delay began
// wins the key (its grant returns sooner than the delay); the wait for a
// late grant outlasts Retry without halving the delay, until that hold
// ends, and the grant after it is struck at the delay first applied.
func TestDelayGrantRaced(t *testing.T) {
	c := startCluster(t, 1, 1)
	f := decodeKind(t, "delay-grant", `{"delay": "200ms", "retry": "50ms", "window": "5s", "active": "1s"}`)
	v := newLiveView()
	base := time.Now()
	done := armAsync(t, f, &nemesis.Target{Cluster: c, View: v}, base)
	px := c.Node(0).GroupProxy(0)
	latency := func() int64 {
		for _, tx := range px.Toxics.GetToxicArray() {
			if l, ok := tx.(*toxics.ToxicWrapper).Toxic.(*toxics.LatencyToxic); ok {
				return l.Latency
			}
		}
		return 0
	}
	testutil.Eventually(t, 10*time.Second, "the delay on n1's proxy", func() error {
		if latency() != 200 {
			return os.ErrNotExist
		}
		return nil
	})
	raced := time.Since(base)
	v.grant(3, raced.Nanoseconds()) // back sooner than the delay: in flight before it
	// Four retries pass while client 3 holds.
	testutil.Eventually(t, 5*time.Second, "four retries past the raced grant", func() error {
		if time.Since(base) < raced+200*time.Millisecond {
			return os.ErrNotExist
		}
		return nil
	})
	if l := latency(); l != 200 {
		t.Fatalf("delay %d ms while the raced hold is open, want 200 (not halved)", l)
	}
	now := time.Since(base).Nanoseconds()
	v.add(nemesis.HoldEnded, 3, now)
	v.grant(4, now)
	if a := <-done; a.err != nil || !a.struck {
		t.Fatalf("Arm: %v, %v; want a strike", a.struck, a.err)
	}
	if s := f.String(); !strings.Contains(s, "held 200ms from") || !strings.Contains(s, "client 4's hold") {
		t.Errorf("String: %q, want client 4's grant under the 200ms delay", s)
	}
	assertHealthy(t, c)
}
