package history

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
)

// benchEvents is one harness cycle: acquire, section, release.
func benchEvents() []Event {
	return []Event{
		{Type: Invoke, F: Acquire, Process: 7, Time: 1_234_567_890, Key: "k7"},
		{Type: Ok, F: Acquire, Process: 7, Time: 1_234_667_890, Key: "k7", Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f", ValidUntil: 2_224_567_890},
		{Type: Invoke, F: Section, Process: 7, Time: 1_234_700_000, Key: "k7", Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f"},
		{Type: Ok, F: Section, Process: 7, Time: 1_234_800_000, Key: "k7", Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f", Read: Int64(41), Wrote: Int64(42)},
		{Type: Invoke, F: Release, Process: 7, Time: 1_234_900_000, Key: "k7", Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f"},
		{Type: Fail, F: Release, Process: 7, Time: 1_235_000_000, Key: "k7", Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f", Error: `setnx: release "k7": locks: lease not held`},
	}
}

// benchEventsNodes is benchEvents with a RedLock's per-node evidence on
// the completions of the acquire and the release (5 nodes, one silent).
func benchEventsNodes() []Event {
	evs := benchEvents()
	evs[1].Nodes = &Nodes{Attempt: 1, Granted: []int{0, 1, 2, 3}, Silent: []int{4}}
	evs[5].Nodes = &Nodes{Attempt: 1, Refused: []int{0, 1, 2, 3}, Silent: []int{4}}
	return evs
}

// BenchmarkNodes: encoding and decoding one event of a cycle with
// per-node evidence (benchEventsNodes), beside BenchmarkEncode's and
// BenchmarkDecode's cycle without; the bytes per cycle of each.
func BenchmarkNodes(b *testing.B) {
	for _, tc := range []struct {
		name string
		evs  []Event
	}{{"without", benchEvents()}, {"with", benchEventsNodes()}} {
		var cycle []byte
		for _, e := range tc.evs {
			cycle = appendEvent(cycle, &e)
		}
		b.Run("encode/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for i := 0; b.Loop(); i++ {
				buf = appendEvent(buf[:0], &tc.evs[i%len(tc.evs)])
			}
			b.ReportMetric(float64(len(cycle)), "B/cycle")
		})
		data := bytes.Repeat(cycle, 1000)
		b.Run("decode/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var d *Decoder
			for b.Loop() {
				if d == nil {
					d = NewDecoder(bytes.NewReader(data))
				}
				if _, err := d.Next(); err == io.EOF {
					d = nil
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriterAppend: one event appended to a history file (buffered,
// flushed every FlushInterval), from one goroutine and from many.
func BenchmarkWriterAppend(b *testing.B) {
	evs := benchEvents()
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			w, err := Create(filepath.Join(b.TempDir(), "history.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			if parallel {
				b.RunParallel(func(pb *testing.PB) {
					for i := 0; pb.Next(); i++ {
						if err := w.Append(evs[i%len(evs)]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			} else {
				for i := 0; b.Loop(); i++ {
					if err := w.Append(evs[i%len(evs)]); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkEncode: the Writer's encoding of one event against
// encoding/json's, which it replaced.
func BenchmarkEncode(b *testing.B) {
	evs := benchEvents()
	b.Run("appendEvent", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			buf = appendEvent(buf[:0], &evs[i%len(evs)])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		enc := json.NewEncoder(io.Discard)
		for i := 0; b.Loop(); i++ {
			if err := enc.Encode(evs[i%len(evs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecode: reading one event back, by the Decoder (fast path) and
// by encoding/json alone.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	for range 1000 {
		for _, e := range benchEvents() {
			buf.Write(appendEvent(nil, &e))
		}
	}
	data := buf.Bytes()
	b.Run("Decoder", func(b *testing.B) {
		b.ReportAllocs()
		var d *Decoder
		for b.Loop() {
			if d == nil {
				d = NewDecoder(bytes.NewReader(data))
			}
			if _, err := d.Next(); err == io.EOF {
				d = nil
			} else if err != nil {
				b.Fatal(err)
			}
		}
	})
	lines := bytes.SplitAfter(data, []byte("\n"))
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var e Event
			if err := json.Unmarshal(lines[i%6000], &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
