package nemesis

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
)

// TestSlewRate: Slew moves the offset from a negative value to 0, never
// faster than the rate (an offset set at time t is at most from + rate ×
// (t − start), t read after the offset was computed), never above 0, in
// non-decreasing steps.
func TestSlewRate(t *testing.T) {
	const from, rate = -150 * time.Millisecond, 0.5
	type set struct {
		at  time.Duration
		off time.Duration
	}
	var sets []set
	began := time.Now()
	err := Slew(context.Background(), nil, func(d time.Duration) error {
		sets = append(sets, set{time.Since(began), d})
		return nil
	}, from, rate, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 3 || sets[len(sets)-1].off != 0 {
		t.Fatalf("sets %v: want several, ending at 0", sets)
	}
	for i, s := range sets {
		if s.off > 0 || (i > 0 && s.off < sets[i-1].off) {
			t.Errorf("set %d: %v after %v: want non-decreasing and ≤ 0", i, s.off, sets[max(i-1, 0)].off)
		}
		if bound := from + time.Duration(rate*float64(s.at)); s.off > bound {
			t.Errorf("set %d at %v: offset %v, above the rate's bound %v", i, s.at, s.off, bound)
		}
	}
}

func TestSlewStopped(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	err := Slew(context.Background(), stop, func(time.Duration) error { return nil }, -time.Hour, 0.01, time.Millisecond)
	if err != ErrSlewStopped {
		t.Errorf("Slew stopped: %v, want ErrSlewStopped", err)
	}
}

// TestClockBackSlew: on a real node with the clock shim, the fault sets the
// clock back, and after its hold slews it to 0; polled with a deadline,
// every offset seen is within the rate's bound from the start of the slew.
func TestClockBackSlew(t *testing.T) {
	c := clockCluster(t, 1)
	f := &ClockBackSlew{Nodes: []int{0}, Offset: Duration(-100 * time.Millisecond), Hold: Duration(50 * time.Millisecond), Rate: 0.25}
	if why := f.Refuse(Setup{Nodes: 1}); why != "" {
		t.Fatal(why)
	}
	if got := f.MinActive(); got != 50*time.Millisecond+400*time.Millisecond+slewTick {
		t.Errorf("MinActive %v", got)
	}
	tg := &Target{Cluster: c}
	n := c.Node(0)
	start := time.Now()
	if err := f.Start(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	if got := n.ClockOffset(); got != -100*time.Millisecond {
		t.Errorf("offset after Start %v, want -100ms", got)
	}
	var mu sync.Mutex
	var bad []string
	testutil.Until(t, 10*time.Second, "the slew to reach 0", func() bool {
		off := n.ClockOffset()
		// The slew starts after the hold, so from Start the offset is at
		// most -100ms + 0.25 × (elapsed − 50ms).
		if bound := -100*time.Millisecond + time.Duration(0.25*float64(time.Since(start)-50*time.Millisecond)); off > max(bound, -100*time.Millisecond) {
			mu.Lock()
			bad = append(bad, off.String()+" > "+bound.String())
			mu.Unlock()
		}
		return off == 0
	})
	if len(bad) > 0 {
		t.Errorf("offsets above the rate's bound: %s", strings.Join(bad, ", "))
	}
	if err := f.Heal(context.Background(), tg); err != nil {
		t.Errorf("Heal after the slew: %v", err)
	}
}

// TestClockBackSlewHealCutShort: a Heal whose context ends before the slew
// sets the clock right at once and says so.
func TestClockBackSlewHealCutShort(t *testing.T) {
	c := clockCluster(t, 1)
	f := &ClockBackSlew{Nodes: []int{0}, Offset: Duration(-time.Hour), Rate: 0.01}
	tg := &Target{Cluster: c}
	if err := f.Start(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Heal(ctx, tg); err == nil || !strings.Contains(err.Error(), "slew cut short") {
		t.Errorf("Heal cut short: %v", err)
	}
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("offset after Heal %v, want 0", got)
	}
}

func TestClientClockRefusesGoLock(t *testing.T) {
	s := Setup{Lock: "redlock", MultiNode: true, Nodes: 3, TTL: time.Second}
	_, err := Check([]string{"client-clock"}, s)
	if err == nil || !strings.Contains(err.Error(), "runs in Go") || strings.Contains(err.Error(), "\n") {
		t.Errorf("client-clock on a Go lock: %v, want a one-line refusal", err)
	}
	s.ClientProcesses = true
	if _, err := Check([]string{"client-clock"}, s); err != nil {
		t.Errorf("client-clock on a process lock: %v", err)
	}
}

type fakeClock struct {
	mu   sync.Mutex
	offs []time.Duration
}

func (f *fakeClock) SetOffset(d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offs = append(f.offs, d)
	return nil
}

func (f *fakeClock) last() (time.Duration, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.offs[len(f.offs)-1], len(f.offs)
}

// TestClientClockStrobe: a strobe flips the clients' offset between the
// jump and 0 until Heal, which leaves it at 0.
func TestClientClockStrobe(t *testing.T) {
	clk := &fakeClock{}
	f := &ClientClock{Mode: ClockStrobe, Offset: Duration(-300 * time.Millisecond), Period: Duration(2 * time.Millisecond)}
	tg := &Target{ClientClock: clk}
	if err := f.Start(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	testutil.Until(t, 10*time.Second, "three flips", func() bool {
		_, n := clk.last()
		return n >= 3
	})
	if err := f.Heal(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	clk.mu.Lock()
	defer clk.mu.Unlock()
	for i, d := range clk.offs[:len(clk.offs)-1] {
		if want := []time.Duration{-300 * time.Millisecond, 0}[i%2]; d != want {
			t.Errorf("set %d: %v, want %v", i, d, want)
		}
	}
	if last := clk.offs[len(clk.offs)-1]; last != 0 {
		t.Errorf("after Heal %v, want 0", last)
	}
	if err := (&ClientClock{Mode: ClockJump, Offset: Duration(time.Second)}).Start(context.Background(), &Target{}); err == nil {
		t.Error("Start without a client clock: no error")
	}
}

// TestDriftRate: Drift sets offsets that grow at the rate (an offset set
// at time t is at most rate × (t − start), t read after it was computed)
// until stopped.
func TestDriftRate(t *testing.T) {
	const rate = 0.5
	stop := make(chan struct{})
	var offs, ats []time.Duration
	began := time.Now()
	err := Drift(context.Background(), stop, func(d time.Duration) error {
		offs, ats = append(offs, d), append(ats, time.Since(began))
		if len(offs) == 5 {
			close(stop)
		}
		return nil
	}, rate, 2*time.Millisecond)
	if err != ErrSlewStopped {
		t.Fatalf("Drift stopped: %v", err)
	}
	for i, d := range offs {
		if d < 0 || (i > 0 && d < offs[i-1]) || d > time.Duration(rate*float64(ats[i])) {
			t.Errorf("set %d at %v: offset %v, want non-decreasing within rate × elapsed", i, ats[i], d)
		}
	}
	if offs[len(offs)-1] == 0 {
		t.Error("the offset never grew")
	}
}
