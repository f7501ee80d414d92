package procstat

import (
	"os"
	"testing"
)

// TestStart: this process has a start time, the same at every read; a
// PID that runs nothing has none.
func TestStart(t *testing.T) {
	a, err := Start(os.Getpid())
	if err != nil || a == "" {
		t.Fatalf("Start(self): %q, %v", a, err)
	}
	if b, err := Start(os.Getpid()); err != nil || b != a {
		t.Errorf("Start(self) again: %q, %v; want %q", b, err, a)
	}
	if s, err := Start(1 << 30); err == nil {
		t.Errorf("Start of no process: %q, want an error", s)
	}
}
