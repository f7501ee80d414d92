package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"sync"
	"time"

	"github.com/locktorture/locktorture/internal/safefs"
)

// Writer appends events to a history as JSON lines; it is safe for
// concurrent use. It flushes at least every FlushInterval, so a killed
// run loses at most that much of its tail.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	buf    *bufio.Writer
	line   []byte // the event being encoded; see appendEvent
	err    error
	n      int
	done   chan struct{}
	closed bool
	wg     sync.WaitGroup
}

// FlushInterval is how often a Writer flushes its buffer to the file.
const FlushInterval = 100 * time.Millisecond

// Create creates the history file at path, mode 0600 (it holds the
// run's tokens and keys). A path that exists already (another run's
// history, a link) is an error: two runs never share one history.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	w := &Writer{f: f, buf: bufio.NewWriterSize(f, 64<<10), done: make(chan struct{})}
	w.wg.Add(1)
	go w.flusher()
	return w, nil
}

func (w *Writer) flusher() {
	defer w.wg.Done()
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			w.mu.Lock()
			if w.err == nil {
				if err := w.buf.Flush(); err != nil {
					w.err = fmt.Errorf("%w: %w", ErrWrite, err)
				}
			}
			w.mu.Unlock()
		}
	}
}

// ErrWrite is wrapped by every error of a Writer.
var ErrWrite = errors.New("history: write")

// Append writes one event. The first write error is kept and returned by
// every later call and by Close.
func (w *Writer) Append(e Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("%w: append after close", ErrWrite)
	}
	if w.err != nil {
		return w.err
	}
	w.line = appendEvent(w.line[:0], &e)
	if _, err := w.buf.Write(w.line); err != nil {
		w.err = fmt.Errorf("%w: %w", ErrWrite, err)
		return w.err
	}
	w.n++
	return nil
}

// Len returns the number of events appended so far.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes and closes the file. It is safe to call more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	close(w.done)
	w.mu.Unlock()
	w.wg.Wait()

	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == nil {
		if ferr := w.buf.Flush(); ferr != nil {
			err = fmt.Errorf("%w: %w", ErrWrite, ferr)
		}
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: %w", ErrWrite, cerr)
	}
	w.err = err
	return err
}

// Decoder reads a history one event at a time.
type Decoder struct {
	r    *bufio.Reader
	line int
	strs map[string]string // see intern
	long []byte            // a line longer than the buffer; see readLine
	unq  []byte            // an unescaped string; see fastString
	ints []int             // the node lists of an event; see parseNodes
	// Torn is set when the history ended in an unterminated line that is
	// not valid JSON (a run killed while writing); that line is skipped.
	Torn bool
	// events is the number of events Next has returned.
	events int
}

// ErrEmpty is wrapped by the error that Next returns, instead of io.EOF,
// for a history without one complete event (an empty file, blank lines
// only, one unterminated line that is not an event): a verdict about it
// would be about nothing.
var ErrEmpty = errors.New("history: no complete event")

// MaxLine is the longest line a Decoder reads, its newline not counted.
// An event holds text from at most two replies of a client process (a
// token, an error), each at most 1 MiB (locks/adapter_proc.go), and JSON
// escaping at most sextuples a byte: 12 MiB. Next stops at a longer line
// with an error wrapping ErrLineTooLong, having held at most MaxLine
// bytes of it (a history linked to /dev/zero cannot exhaust memory).
const MaxLine = 16 << 20

// ErrLineTooLong is wrapped by Next's error for a line over MaxLine.
var ErrLineTooLong = errors.New("history: line too long")

// errLong is readLine's error for a line longer than MaxLine.
var errLong = errors.New("line longer than MaxLine")

// NewDecoder reads JSON lines from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, or io.EOF at the end (ErrEmpty for a
// history without one event). Blank lines are skipped. A malformed or
// invalid line is an error naming its line number, except an unterminated
// last line after at least one event: a torn write (Torn).
func (d *Decoder) Next() (Event, error) {
	for {
		b, err := d.readLine()
		if errors.Is(err, errLong) {
			return Event{}, fmt.Errorf("%w: line %d is longer than %d MiB, which no event is", ErrLineTooLong, d.line+1, MaxLine>>20)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Event{}, fmt.Errorf("history: line %d: %w", d.line+1, err)
		}
		eof := err != nil
		if len(b) == 0 && eof {
			return Event{}, d.end()
		}
		d.line++
		if len(bytes.TrimSpace(b)) == 0 {
			if eof {
				return Event{}, d.end()
			}
			continue
		}
		var e Event
		if jerr := d.unmarshal(b, &e); jerr != nil {
			if eof && d.events > 0 {
				d.Torn = true
				return Event{}, io.EOF
			}
			if eof {
				return Event{}, fmt.Errorf("%w: one unterminated line of %d bytes that is not a JSON event (%v)", ErrEmpty, len(b), jerr)
			}
			return Event{}, fmt.Errorf("%w: line %d: %v", ErrInvalid, d.line, jerr)
		}
		if verr := e.Validate(); verr != nil {
			return Event{}, fmt.Errorf("line %d: %w", d.line, verr)
		}
		d.events++
		return e, nil
	}
}

// All returns an iterator over the events Next returns, until io.EOF
// (not yielded) or an error, yielded once, last.
func (d *Decoder) All() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			e, err := d.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// end is Next's error at the end of the input.
func (d *Decoder) end() error {
	if d.events > 0 {
		return io.EOF
	}
	if d.line == 0 {
		return fmt.Errorf("%w: the history is empty", ErrEmpty)
	}
	return fmt.Errorf("%w: the history holds %d blank lines and nothing else", ErrEmpty, d.line)
}

// readLine returns the next line, with its '\n' if it has one, valid
// until the next call; errLong, read no further, past MaxLine.
func (d *Decoder) readLine() ([]byte, error) {
	b, err := d.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return b, err // no longer than the buffer, far below MaxLine
	}
	d.long = append(d.long[:0], b...)
	for {
		b, err = d.r.ReadSlice('\n')
		n := len(d.long) + len(b)
		if err == nil { // b ends the line with its newline
			n--
		}
		if n > MaxLine {
			d.long = d.long[:0]
			return nil, errLong
		}
		d.long = append(d.long, b...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return d.long, err
		}
	}
}

// ErrNotFile is wrapped by Open's error for a link or a non-regular file.
var ErrNotFile = errors.New("history: not a regular file")

// Open opens the history file at path for reading. A history may come
// from someone else: Open refuses, with an error wrapping ErrNotFile, a
// symbolic link (even dangling) and anything not a regular file (a named
// pipe, without waiting for a writer; a device; a folder).
func Open(path string) (*os.File, error) {
	f, err := safefs.Open(path)
	var refused *safefs.RefusedError
	switch {
	case err == nil:
		return f, nil
	case !errors.As(err, &refused):
		return nil, fmt.Errorf("history: %w", err)
	case refused.Mode&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%w: %s is a symbolic link (name the history file itself)", ErrNotFile, path)
	}
	kind := safefs.Kind(refused.Mode)
	if kind == "" {
		kind = "not a regular file (mode " + refused.Mode.String() + ")"
	}
	return nil, fmt.Errorf("%w: %s is %s", ErrNotFile, path, kind)
}

// ReadFile reads every event of the history at path, opened by Open.
func ReadFile(path string) ([]Event, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read reads every event from r (see Decoder.Next).
func Read(r io.Reader) ([]Event, error) {
	var evs []Event
	for e, err := range NewDecoder(r).All() {
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
	return evs, nil
}
