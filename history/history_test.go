package history_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const clients, each = 8, 100
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_ = w.Append(history.Event{Type: history.Invoke, F: history.Acquire, Process: c, Time: int64(i + 1), Key: "k"})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Append(history.Event{}); err == nil {
		t.Fatal("Append after Close succeeded")
	}
	evs, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != clients*each {
		t.Fatalf("read %d events, want %d", len(evs), clients*each)
	}
}

func TestReadTornLastLine(t *testing.T) {
	in := `{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}
{"type":"ok","f":"acquire","process":0,"time":2,"key":"k","token":"t","valid_until":9}
{"type":"invoke","f":"rele`
	d := history.NewDecoder(strings.NewReader(in))
	n := 0
	for {
		_, err := d.Next()
		if err != nil {
			break
		}
		n++
	}
	if n != 2 || !d.Torn {
		t.Fatalf("read %d events, torn=%v; want 2, true", n, d.Torn)
	}
}

// TestReadNoEvent: a history without one complete event is an error
// wrapping ErrEmpty, never zero events and a torn line; a torn last line
// is skipped only after an event.
func TestReadNoEvent(t *testing.T) {
	event := `{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}`
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7+3) | 0x80 // no '\n', not JSON
	}
	for _, tc := range []struct {
		name, in string
		events   int
		want     string // "" for no error
	}{
		{"empty", "", 0, "history: no complete event: the history is empty"},
		{"blank lines", "\n \n\t\n", 0, "history: no complete event: the history holds 3 blank lines and nothing else"},
		{"text without a newline", strings.Repeat("a", 4096), 0, "history: no complete event: one unterminated line of 4096 bytes that is not a JSON event (invalid character 'a' looking for beginning of value)"},
		{"binary without a newline", string(garbage), 0, "history: no complete event: one unterminated line of 4096 bytes"},
		{"torn first line", event[:20], 0, "history: no complete event: one unterminated line of 20 bytes"},
		{"blank lines, then a torn line", "\n\n" + event[:20], 0, "history: no complete event: one unterminated line of 20 bytes"},
		{"one event without a newline", event, 1, ""},
		{"one event, then a torn line", event + "\n" + event[:20], 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := history.Read(strings.NewReader(tc.in))
			if tc.want == "" {
				if err != nil || len(evs) != tc.events {
					t.Fatalf("read %d events, err %v; want %d, nil", len(evs), err, tc.events)
				}
				return
			}
			if !errors.Is(err, history.ErrEmpty) || !strings.HasPrefix(err.Error(), tc.want) || len(evs) != 0 {
				t.Fatalf("read %d events, err %v; want none and an error starting %q", len(evs), err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line", err)
			}
		})
	}
}

func TestReadRejects(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"bad json mid-file":    {"{\"type\":\n{\"type\":\"invoke\",\"f\":\"acquire\",\"process\":0,\"time\":1,\"key\":\"k\"}\n", "line 1"},
		"unknown type":         {`{"type":"begin","f":"acquire","process":0,"time":1,"key":"k"}` + "\n", `unknown type "begin"`},
		"unknown f":            {`{"type":"invoke","f":"lock","process":0,"time":1,"key":"k"}` + "\n", `unknown f "lock"`},
		"no key":               {`{"type":"invoke","f":"acquire","process":0,"time":1}` + "\n", "without a key"},
		"ok without token":     {"\n" + `{"type":"ok","f":"acquire","process":0,"time":1,"key":"k","valid_until":5}` + "\n", "line 2"},
		"negative time":        {`{"type":"invoke","f":"acquire","process":0,"time":-1,"key":"k"}` + "\n", "negative time"},
		"fault not info":       {`{"type":"ok","f":"fault-start","process":-1,"time":1}` + "\n", "must be of type info"},
		"section ok no values": {`{"type":"ok","f":"section","process":0,"time":1,"key":"k"}` + "\n", "without read and wrote"},
		"nodes on an invoke":   {`{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k","nodes":{"attempt":1,"granted":[0]}}` + "\n", "only the completion"},
		"nodes on a section":   {`{"type":"fail","f":"section","process":0,"time":1,"key":"k","nodes":{"attempt":1}}` + "\n", "only the completion"},
		"nodes on a fault":     {`{"type":"info","f":"fault-start","process":-1,"time":1,"nodes":{}}` + "\n", "only the completion"},
		"negative node":        {`{"type":"fail","f":"acquire","process":0,"time":1,"key":"k","nodes":{"attempt":1,"refused":[-1]}}` + "\n", "negative node"},
		"node twice":           {`{"type":"fail","f":"acquire","process":0,"time":1,"key":"k","nodes":{"attempt":1,"granted":[1],"silent":[2,1]}}` + "\n", "node 1 listed twice"},
		"node 70 twice":        {`{"type":"fail","f":"release","process":0,"time":1,"key":"k","nodes":{"attempt":1,"refused":[70,70]}}` + "\n", "node 70 listed twice"},
		"negative attempt":     {`{"type":"info","f":"extend","process":0,"time":1,"key":"k","nodes":{"attempt":-2}}` + "\n", "negative attempt"},
		"negative unlocked":    {`{"type":"fail","f":"acquire","process":0,"time":1,"key":"k","nodes":{"attempt":1,"unlocked":[-3]}}` + "\n", "negative unlocked"},
		// A node's observation.
		"node event not info": {`{"type":"ok","f":"node","process":-2,"time":1,"key":"k","node":0,"value":"set"}` + "\n", "must be of type info"},
		"node event no node":  {`{"type":"info","f":"node","process":-2,"time":1,"key":"k","value":"set"}` + "\n", "without a node"},
		"node event negative": {`{"type":"info","f":"node","process":-2,"time":1,"key":"k","node":-1,"value":"set"}` + "\n", "without a node"},
		"node event no value": {`{"type":"info","f":"node","process":-2,"time":1,"key":"k","node":0}` + "\n", "without a key or a value"},
		"node on an acquire":  {`{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k","node":0}` + "\n", "only a node event"},
		// A loss notice.
		"lost not info":       {`{"type":"ok","f":"lost","process":0,"time":1,"key":"k","token":"t"}` + "\n", "must be of type info"},
		"lost by the nemesis": {`{"type":"info","f":"lost","process":-1,"time":1,"key":"k","token":"t"}` + "\n", "by negative process"},
		"lost without token":  {`{"type":"info","f":"lost","process":0,"time":1,"key":"k"}` + "\n", "without a key or a token"},
		"lost without key":    {`{"type":"info","f":"lost","process":0,"time":1,"token":"t"}` + "\n", "without a key or a token"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := history.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !errors.Is(err, history.ErrInvalid) {
				t.Fatalf("err = %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestCreateFails(t *testing.T) {
	_, err := history.Create(filepath.Join(t.TempDir(), "missing", "history.jsonl"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestFlushedWhileOpen(t *testing.T) {
	// A run that is killed must leave what it recorded on disk: the
	// periodic flush writes events without a Close.
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Append(history.Event{Type: history.Invoke, F: history.Acquire, Process: 0, Time: 1, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	testutil.Until(t, 10*time.Second, "the periodic flush", func() bool {
		evs, err := history.ReadFile(path)
		return err == nil && len(evs) == 1
	})
}

// TestNodes: the per-node evidence of a completion reads back as written,
// with or without the attempt, and an event without it (every history
// written before it existed) reads as before, Nodes nil: not reported.
func TestNodes(t *testing.T) {
	in := `{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}
{"type":"ok","f":"acquire","process":0,"time":2,"key":"k","token":"t","valid_until":9,"nodes":{"attempt":2,"granted":[0,1,3],"refused":[2],"silent":[4],"unlocked":[0,1]}}
{"type":"invoke","f":"release","process":0,"time":3,"key":"k","token":"t"}
{"type":"ok","f":"release","process":0,"time":4,"key":"k","token":"t","nodes":{"granted":[0]}}
{"type":"invoke","f":"extend","process":0,"time":5,"key":"k","token":"t"}
{"type":"info","f":"extend","process":0,"time":6,"key":"k","token":"t","error":"timeout"}
{"type":"invoke","f":"acquire","process":1,"time":7,"key":"k"}
{"type":"fail","f":"acquire","process":1,"time":8,"key":"k","nodes":{"attempt":1,"refused":[70]}}
{"type":"info","f":"lost","process":0,"time":9,"key":"k","token":"t","error":"renewal refused"}
`
	evs, err := history.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []*history.Nodes{
		nil,
		{Attempt: 2, Granted: []int{0, 1, 3}, Refused: []int{2}, Silent: []int{4}, Unlocked: []int{0, 1}},
		nil,
		{Granted: []int{0}},
		nil, nil, nil,
		{Attempt: 1, Refused: []int{70}},
		nil,
	}
	for i, e := range evs {
		if !reflect.DeepEqual(e.Nodes, want[i]) {
			t.Errorf("event %d: nodes %+v, want %+v", i, e.Nodes, want[i])
		}
	}
	var b strings.Builder
	for _, e := range evs {
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if b.String() != in {
		t.Errorf("re-encoded:\n%s\nwant:\n%s", b.String(), in)
	}
}

// TestDecoderAll: All yields every event, then stops at the end without
// io.EOF; an error is yielded once, last, and ends it; a consumer that
// stops early stops it.
func TestDecoderAll(t *testing.T) {
	good := "{\"type\":\"invoke\",\"f\":\"acquire\",\"process\":0,\"time\":1,\"key\":\"k\"}\n"
	var n int
	for e, err := range history.NewDecoder(strings.NewReader(good + good)).All() {
		if err != nil || e.F != history.Acquire {
			t.Fatalf("event %d: %+v, %v", n, e, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d events, want 2", n)
	}
	var errs []error
	for _, err := range history.NewDecoder(strings.NewReader(good + "not json\n" + good)).All() {
		errs = append(errs, err)
	}
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], history.ErrInvalid) {
		t.Errorf("a bad second line: %v, want nil then ErrInvalid", errs)
	}
	errs = nil
	for _, err := range history.NewDecoder(strings.NewReader("")).All() {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], history.ErrEmpty) {
		t.Errorf("an empty history: %v, want one ErrEmpty", errs)
	}
	for range history.NewDecoder(strings.NewReader(good + good)).All() {
		break // must not panic
	}
}

// TestCreateExclusive: a history is opened with O_EXCL: a path that
// exists (another run's history, or a link planted in its place) is
// refused, and neither truncated nor written through.
func TestCreateExclusive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(path, []byte("another run's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if w, err := history.Create(p); err == nil {
			w.Close()
			t.Errorf("Create(%s) opened a path that exists", p)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "another run's\n" {
		t.Errorf("the history that existed now holds %q", b)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("Create wrote through the link: %v", err)
	}
}
