package cluster

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientClockMovesPython: a python3 process started with the client
// clock's environment sees time.time() move when the offset is set, and
// time.monotonic() not move.
func TestClientClockMovesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc for the clock shim")
	}
	cc, err := OpenClientClock(filepath.Join(t.TempDir(), "client.offset"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	// One line in, one line out: wall time minus real-ish monotonic is
	// not comparable across processes, so the test compares the
	// process's time.time() with Go's wall clock read around it.
	cmd := exec.Command(py, "-c", "import sys, time\nfor _ in sys.stdin:\n    print(repr(time.time()), repr(time.monotonic()), flush=True)")
	cmd.Env = append(cmd.Environ(), cc.Env()...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	read := func() (wallSkew time.Duration, mono float64) {
		t.Helper()
		before := time.Now()
		if _, err := in.Write([]byte("\n")); err != nil {
			t.Fatal(err)
		}
		if !sc.Scan() {
			t.Fatalf("python3 said nothing: %v", sc.Err())
		}
		after := time.Now()
		f := strings.Fields(sc.Text())
		wall, _ := strconv.ParseFloat(f[0], 64)
		mono, _ = strconv.ParseFloat(f[1], 64)
		w := time.Unix(0, int64(wall*1e9))
		switch {
		case w.Before(before):
			return w.Sub(before), mono
		case w.After(after):
			return w.Sub(after), mono
		}
		return 0, mono
	}
	if skew, _ := read(); skew != 0 {
		t.Errorf("offset 0: time.time() off by %v", skew)
	}
	_, mono0 := read()
	if err := cc.SetOffset(-time.Hour); err != nil {
		t.Fatal(err)
	}
	skew, mono1 := read()
	if skew > -59*time.Minute || skew < -61*time.Minute {
		t.Errorf("offset -1h: time.time() off by %v, want about -1h", skew)
	}
	if mono1 < mono0 {
		t.Errorf("time.monotonic went back: %v then %v", mono0, mono1)
	}
	if got := cc.Offset(); got != -time.Hour {
		t.Errorf("Offset %v", got)
	}
	if err := cc.SetOffset(0); err != nil {
		t.Fatal(err)
	}
	if skew, _ := read(); skew != 0 {
		t.Errorf("back at 0: time.time() off by %v", skew)
	}
	cc.Close()
	if err := cc.SetOffset(time.Second); err == nil {
		t.Error("SetOffset after Close: no error")
	}
}
