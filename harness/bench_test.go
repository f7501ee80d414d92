package harness

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
)

// BenchmarkRecorder: one cycle of a client as the recorder sees it — six
// events (acquire, section, release: invoke and completion each) stamped
// and appended to a history file — from one client and from many.
func BenchmarkRecorder(b *testing.B) {
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			w, err := history.Create(filepath.Join(b.TempDir(), "history.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			rec := NewRecorder(time.Now(), w)
			validity := time.Now().Add(time.Second)
			cycle := func(p int) error {
				c := &client{id: p, rec: rec}
				const key, token = "k3", "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f"
				for _, e := range []history.Event{
					{Type: history.Invoke, F: history.Acquire, Process: c.id, Key: key},
					{Type: history.Ok, F: history.Acquire, Process: c.id, Key: key, Token: token, ValidUntil: rec.Offset(validity)},
					{Type: history.Invoke, F: history.Section, Process: c.id, Key: key, Token: token},
					{Type: history.Ok, F: history.Section, Process: c.id, Key: key, Token: token, Read: history.Int64(4), Wrote: history.Int64(5)},
					{Type: history.Invoke, F: history.Release, Process: c.id, Key: key, Token: token},
					{Type: history.Ok, F: history.Release, Process: c.id, Key: key, Token: token},
				} {
					if err := c.rec.Append(e); err != nil {
						return err
					}
				}
				return nil
			}
			b.ReportAllocs()
			if parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := cycle(1); err != nil {
							b.Error(err)
							return
						}
					}
				})
			} else {
				for b.Loop() {
					if err := cycle(1); err != nil {
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
