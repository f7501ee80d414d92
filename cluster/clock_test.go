package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// buildProbe compiles testdata/clockprobe.c into a test directory.
func buildProbe(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "clockprobe")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, filepath.Join("testdata", "clockprobe.c")).CombinedOutput(); err != nil {
		tb.Fatalf("gcc clockprobe.c: %v\n%s", err, out)
	}
	return bin
}

// runProbe runs the probe with exactly env and returns what it printed:
// each clock in nanoseconds, checking 0 ≤ tv_nsec < 1e9 on the way.
func runProbe(tb testing.TB, bin string, env []string) map[string]int64 {
	tb.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("clockprobe: %v", err)
	}
	r := make(map[string]int64)
	for s := bufio.NewScanner(strings.NewReader(string(out))); s.Scan(); {
		f := strings.Fields(s.Text())
		if len(f) != 3 {
			tb.Fatalf("clockprobe: bad line %q", s.Text())
		}
		sec, err1 := strconv.ParseInt(f[1], 10, 64)
		nsec, err2 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil || nsec < 0 || nsec >= 1e9 {
			tb.Fatalf("clockprobe: bad line %q (%v)", s.Text(), err)
		}
		r[f[0]] = sec*1e9 + nsec
	}
	return r
}

// rawClock reads clock clk by syscall, as the shim does, in nanoseconds.
func rawClock(tb testing.TB, clk int) int64 {
	tb.Helper()
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clk), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		tb.Fatalf("clock_gettime(%d): %v", clk, e)
	}
	return ts.Nano()
}

const (
	clockMonotonic = 1 // CLOCK_MONOTONIC
	clockBoottime  = 7 // CLOCK_BOOTTIME
	coarseSlack    = int64(20 * time.Millisecond)
)

// checkProbe runs the probe and checks that every wall clock reads the real
// time plus off and that the monotonic clocks are not shifted. The probe's
// clock reads fall between the test's reads before and after it.
func checkProbe(t *testing.T, bin string, env []string, off time.Duration) {
	t.Helper()
	mono0, boot0, real0 := rawClock(t, clockMonotonic), rawClock(t, clockBoottime), time.Now().UnixNano()
	r := runProbe(t, bin, env)
	real1, boot1, mono1 := time.Now().UnixNano(), rawClock(t, clockBoottime), rawClock(t, clockMonotonic)
	lo, hi := real0+int64(off), real1+int64(off)
	for _, c := range []struct {
		name   string
		lo, hi int64
	}{
		{"realtime", lo, hi},
		{"realtime_coarse", lo - coarseSlack, hi}, // as of the last tick
		{"gettimeofday", lo - 1000, hi},           // microseconds
		{"time", lo - lo%1e9, hi},                 // seconds
		{"monotonic", mono0, mono1},
		{"boottime", boot0, boot1},
	} {
		v, ok := r[c.name]
		if !ok {
			t.Errorf("offset %v: probe printed no %s", off, c.name)
		} else if v < c.lo || v > c.hi {
			t.Errorf("offset %v: %s = %d, want in [%d, %d] (%+dns off the low end)", off, c.name, v, c.lo, c.hi, v-c.lo)
		}
	}
}

// TestClockShimProbe checks the shim itself with a C program: every wall
// clock shifted by exactly the offset written through a Node (nanoseconds
// carried right for negative offsets), monotonic clocks untouched, and
// offset 0 when the file is not there.
func TestClockShimProbe(t *testing.T) {
	shim, err := clockShim()
	if err != nil {
		t.Fatal(err)
	}
	probe := buildProbe(t)
	n := &Node{c: &Cluster{shim: shim}, name: "probe", dir: t.TempDir()}
	if err := n.openClock(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.clock.close() })
	env := n.withClockEnv(nil)
	for _, off := range []time.Duration{
		0, 20 * time.Second, -1500 * time.Millisecond, -1, 1, time.Second - 1, -time.Second + 1,
		-time.Hour + 1, 365 * 24 * time.Hour, -time.Duration(1) << 40,
	} {
		if err := n.SetClockOffset(off); err != nil {
			t.Fatal(err)
		}
		if got := n.ClockOffset(); got != off {
			t.Errorf("ClockOffset() = %v after SetClockOffset(%v)", got, off)
		}
		checkProbe(t, probe, env, off)
	}

	// Offset 0 whenever the file cannot be mapped.
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte{1, 2, 3, 4}, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]string{
		"no variable": {"LD_PRELOAD=" + shim},
		"no file":     {"LD_PRELOAD=" + shim, clockFileEnv + "=" + filepath.Join(t.TempDir(), "none")},
		"short file":  {"LD_PRELOAD=" + shim, clockFileEnv + "=" + short},
		"empty name":  {"LD_PRELOAD=" + shim, clockFileEnv + "="},
	} {
		t.Run(name, func(t *testing.T) { checkProbe(t, probe, env, 0) })
	}
}

func TestClockEnv(t *testing.T) {
	n := &Node{c: &Cluster{shim: "/c/shim.so"}, clock: &clockFile{path: "/d/clock.offset"}}
	got := n.withClockEnv([]string{"A=1", "LD_PRELOAD=/x.so"})
	want := []string{"A=1", "LD_PRELOAD=/x.so", "LD_PRELOAD=/c/shim.so /x.so", clockFileEnv + "=/d/clock.offset"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("withClockEnv = %q, want %q", got, want)
	}
	if got := (&Node{c: &Cluster{}}).withClockEnv([]string{"A=1"}); len(got) != 1 {
		t.Errorf("withClockEnv without the shim = %q, want it unchanged", got)
	}
}

func TestClockShimBuild(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	p1, err := buildClockShim()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p1) != filepath.Join(cache, "locktorture") || !strings.HasPrefix(filepath.Base(p1), "clockshim-") {
		t.Errorf("shim at %s, want %s/locktorture/clockshim-<hash>.so", p1, cache)
	}
	fi1, err := os.Stat(p1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := buildClockShim()
	if err != nil {
		t.Fatal(err)
	}
	if fi2, err := os.Stat(p2); err != nil || p2 != p1 || !fi2.ModTime().Equal(fi1.ModTime()) {
		t.Errorf("second build: %s (%v), want %s reused", p2, err, p1)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "locktorture", "build-*")); len(left) > 0 {
		t.Errorf("build directories left behind: %v", left)
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := buildClockShim(); !errors.Is(err, ErrMissingProgram) || !strings.Contains(err.Error(), "gcc is not on the PATH") {
		t.Errorf("build without gcc: %v, want ErrMissingProgram naming gcc", err)
	}
}

// shimLoaded reports whether the node's process has the shim mapped.
func shimLoaded(tb testing.TB, c *Cluster, n *Node) bool {
	tb.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", n.Pid()))
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Contains(string(maps), c.shim)
}

// checkTime checks that the node's TIME is the real time plus off, within 1 s.
func checkTime(tb testing.TB, n *Node, off time.Duration) {
	tb.Helper()
	got, err := n.Client().Time(tb.Context()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	if d := got.Sub(time.Now()) - off; d < -time.Second || d > time.Second {
		tb.Errorf("%s: TIME is %v off the real time, want %v", n.Name(), got.Sub(time.Now()), off)
	}
}

// TestClockShimServes: jemalloc-linked redis-server starts with the shim
// (libfaketime hangs it) and serves, on the real time until told otherwise.
func TestClockShimServes(t *testing.T) {
	c := startCluster(t, 3, WithClockShim())
	for _, n := range c.Nodes() {
		if !shimLoaded(t, c, n) {
			t.Errorf("%s: shim %s not mapped", n.Name(), c.shim)
		}
		if got := n.ClockOffset(); got != 0 {
			t.Errorf("%s: ClockOffset() = %v after Start, want 0", n.Name(), got)
		}
		checkTime(t, n, 0)
	}
	info, err := c.Node(0).Client().Info(t.Context(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, mem_allocator %s", c.Version(), infoField(info, "mem_allocator"))
}

func infoField(info, key string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v
		}
	}
	return ""
}

// TestClockJumpForward: +20 s expires a PX 10000 key on its next access and
// in the active expire cycle, and the node goes on serving.
func TestClockJumpForward(t *testing.T) {
	c := startCluster(t, 1, WithClockShim())
	n, ctx := c.Node(0), t.Context()
	rc := n.Client()
	for _, k := range []string{"k", "untouched"} {
		if err := rc.Set(ctx, k, "v", 10*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.SetClockOffset(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	// The store is done before GET is sent: its clock read sees it.
	if err := rc.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET k after +20s: %v, want nil (expired)", err)
	}
	eventually(t, 5*time.Second, "active expiry of the untouched key", func() bool {
		size, err := rc.DBSize(ctx).Result()
		return err == nil && size == 0
	})
	for i := range 300 {
		k := fmt.Sprintf("k%d", i)
		if err := rc.Set(ctx, k, i, 10*time.Second).Err(); err != nil {
			t.Fatalf("SET %s after the jump: %v", k, err)
		}
		if got, err := rc.Get(ctx, k).Int(); err != nil || got != i {
			t.Fatalf("GET %s after the jump = %d, %v; want %d", k, got, err, i)
		}
	}
	if ttl, err := rc.PTTL(ctx, "k299").Result(); err != nil || ttl < 9*time.Second || ttl > 10*time.Second {
		t.Errorf("PTTL of a key set after the jump = %v, %v; want about 10s", ttl, err)
	}
	checkTime(t, n, 20*time.Second)
}

// TestClockJumpBack: −1 min makes a PX 2000 key live a minute longer.
func TestClockJumpBack(t *testing.T) {
	c := startCluster(t, 1, WithClockShim())
	n, ctx := c.Node(0), t.Context()
	rc := n.Client()
	if err := rc.Set(ctx, "k", "v", 2*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.SetClockOffset(-time.Minute); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rc.PTTL(ctx, "k").Result(); err != nil || ttl < 30*time.Second || ttl > 62*time.Second {
		t.Errorf("PTTL after −1m = %v, %v; want about 62s", ttl, err)
	}
	checkTime(t, n, -time.Minute)
}

func TestClockTime(t *testing.T) {
	c := startCluster(t, 2, WithClockShim())
	for _, off := range []time.Duration{time.Hour, -time.Hour, 1500 * time.Millisecond, -1500 * time.Millisecond, 0} {
		if err := c.Node(0).SetClockOffset(off); err != nil {
			t.Fatal(err)
		}
		checkTime(t, c.Node(0), off)
		checkTime(t, c.Node(1), 0) // each node has its own clock
	}
}

// TestClockRestart: the offset and the shim survive Kill and Restart.
func TestClockRestart(t *testing.T) {
	c := startCluster(t, 1, WithClockShim())
	n, ctx := c.Node(0), t.Context()
	if err := n.SetClockOffset(time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := n.SetClockOffset(2 * time.Hour); err != nil { // while down
		t.Fatal(err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !shimLoaded(t, c, n) {
		t.Errorf("shim not mapped after Restart")
	}
	checkTime(t, n, 2*time.Hour)
	if err := n.SetClockOffset(-time.Hour); err != nil {
		t.Fatal(err)
	}
	checkTime(t, n, -time.Hour)
}

// TestClockStartResets: Start sets a leftover offset file to 0.
func TestClockStartResets(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := binary.NativeEndian.AppendUint64(nil, uint64(time.Hour))
	if err := os.WriteFile(filepath.Join(dir, "n1", clockFileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, 1, WithClockShim(), WithDir(dir))
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("ClockOffset() = %v, want 0", got)
	}
	checkTime(t, c.Node(0), 0)
}

func TestClockOffsetErrors(t *testing.T) {
	plain := startCluster(t, 1)
	if err := plain.Node(0).SetClockOffset(time.Second); !errors.Is(err, ErrNoClockShim) {
		t.Errorf("SetClockOffset without the shim: %v, want ErrNoClockShim", err)
	}
	if got := plain.Node(0).ClockOffset(); got != 0 {
		t.Errorf("ClockOffset() without the shim = %v, want 0", got)
	}

	c := startCluster(t, 1, WithClockShim())
	if err := c.Node(0).SetClockOffset(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).SetClockOffset(time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("SetClockOffset after Close: %v, want ErrClosed", err)
	}
	if got := c.Node(0).ClockOffset(); got != 0 {
		t.Errorf("ClockOffset() after Close = %v, want 0", got)
	}
}
