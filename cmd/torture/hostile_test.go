//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/locktorture/locktorture/history"
)

// TestCheckRefusesHostileHistory: check and explain refuse, in one line
// and with exit 2, a history that is a symbolic link, a named pipe (at
// once: no writer is awaited), a device (even /dev/null: an empty history
// is an empty regular file), or one whose line is longer than
// history.MaxLine (named by its number).
func TestCheckRefusesHostileHistory(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(real, []byte(`{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A run folder whose history.jsonl is a link to /dev/zero.
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(run, "history.jsonl")); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.jsonl")
	b, _ := os.ReadFile(real)
	b = append(b, strings.Repeat(" ", history.MaxLine+1)+"\n"...)
	if err := os.WriteFile(long, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{link, "link.jsonl is a symbolic link"},
		{fifo, "fifo.jsonl is a named pipe"},
		{"/dev/zero", "/dev/zero is a character device"},
		{"/dev/null", "/dev/null is a character device"},
		{run, "history.jsonl is a symbolic link"},
		{long, "line 2 is longer than 16 MiB"},
	} {
		for _, cmd := range []string{"check", "explain"} {
			_, stderr, code := torture(t, cmd, tc.path)
			if line := strings.TrimSpace(stderr); code != exitError || strings.Contains(line, "\n") || !strings.HasPrefix(line, "torture: ") || !strings.Contains(line, tc.want) {
				t.Errorf("torture %s %s: exit %d, stderr %q; want exit 2 and one line with %q", cmd, tc.path, code, stderr, tc.want)
			}
		}
	}
}

// TestCheckLostBeforeGrant: a lost notice timed before the grant of the
// hold it ends (written after it) would end that hold before it began,
// and the overlap that follows would disappear; check and explain refuse
// the history in one line naming the event, exit 2.
func TestCheckLostBeforeGrant(t *testing.T) {
	path := filepath.Join("..", "..", "checker", "testdata", "malformed_lost-before-grant.jsonl")
	for _, cmd := range []string{"check", "explain"} {
		_, stderr, code := torture(t, cmd, path)
		line := strings.TrimSpace(stderr)
		if code != exitError || strings.Contains(line, "\n") || !strings.Contains(line, "event 2 (time 50): lost notice of process 0") {
			t.Errorf("torture %s: exit %d, stderr %q; want exit 2 and one line naming event 2", cmd, code, stderr)
		}
	}
}
