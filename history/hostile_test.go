//go:build unix

package history_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/locktorture/locktorture/history"
)

const event = `{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}`

// TestLineTooLong: a line longer than MaxLine stops the decoder with an
// error naming its line; a line of exactly MaxLine bytes is read.
func TestLineTooLong(t *testing.T) {
	long := event + "\n" + strings.Repeat("x", history.MaxLine+1) + "\n" + event + "\n"
	_, err := history.Read(strings.NewReader(long))
	if !errors.Is(err, history.ErrLineTooLong) || !strings.Contains(err.Error(), "line 2 is longer than 16 MiB") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a line of MaxLine+1 bytes: %v; want one line wrapping ErrLineTooLong naming line 2", err)
	}
	// The same unterminated at the end: not a torn write, too long.
	_, err = history.Read(strings.NewReader(event + "\n" + strings.Repeat("x", history.MaxLine+1)))
	if !errors.Is(err, history.ErrLineTooLong) {
		t.Fatalf("an unterminated last line of MaxLine+1 bytes: %v, want ErrLineTooLong", err)
	}
	// An event padded with spaces to exactly MaxLine bytes is an event.
	padded := event + strings.Repeat(" ", history.MaxLine-len(event))
	for _, in := range []string{padded + "\n" + event + "\n", event + "\n" + padded} {
		evs, err := history.Read(strings.NewReader(in))
		if err != nil || len(evs) != 2 {
			t.Fatalf("a line of exactly MaxLine bytes: %d events, %v; want 2", len(evs), err)
		}
	}
}

// endless is a reader of 'x' without a newline, which counts what it
// gave; it ends after limit bytes, so a decoder without a bound fails
// this test instead of exhausting the machine's memory.
type endless struct{ n, limit int }

func (r *endless) Read(p []byte) (int, error) {
	if r.n >= r.limit {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.limit-r.n)]
	for i := range p {
		p[i] = 'x'
	}
	r.n += len(p)
	return len(p), nil
}

// TestLineBounded: a line that never ends (a history linked to
// /dev/zero, say) is read no further than just past MaxLine.
func TestLineBounded(t *testing.T) {
	r := &endless{limit: 4 * history.MaxLine}
	_, err := history.NewDecoder(r).Next()
	if !errors.Is(err, history.ErrLineTooLong) || !strings.Contains(err.Error(), "line 1 ") {
		t.Fatalf("an endless line: %v; want ErrLineTooLong naming line 1", err)
	}
	// The decoder reads through a 64 KiB buffer: at most one more.
	if max := history.MaxLine + 2<<16; r.n > max {
		t.Errorf("read %d bytes of an endless line, want at most %d", r.n, max)
	}
}

// TestOpenRefuses: a history path that is a symbolic link (to a history,
// dangling) or not a regular file (a named pipe, /dev/zero, a folder) is
// refused with one line, without waiting on the pipe; a regular file is
// read.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(real, []byte(event+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if evs, err := history.ReadFile(real); err != nil || len(evs) != 1 {
		t.Fatalf("a regular history: %d events, %v", len(evs), err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{link, "is a symbolic link"},
		{dangling, "is a symbolic link"},
		// Opened without O_NONBLOCK, a pipe with no writer would block
		// for ever: the test would end by its timeout.
		{fifo, "is a named pipe"},
		{"/dev/zero", "is a character device"},
		{dir, "is a folder"},
	} {
		f, err := history.Open(tc.path)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, history.ErrNotFile) || !strings.Contains(err.Error(), tc.path+" "+tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s): %v; want one line wrapping ErrNotFile with %q", tc.path, err, tc.want)
		}
		if _, err := history.ReadFile(tc.path); !errors.Is(err, history.ErrNotFile) {
			t.Errorf("ReadFile(%s): %v, want ErrNotFile", tc.path, err)
		}
	}
}
