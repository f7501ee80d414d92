package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
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

// fakeLock grants every acquire and release at once, without Redis, and
// reports nodes answers per call when nodes > 0: the harness's own cost
// of a lock's per-node evidence, alone.
type fakeLock struct{ nodes int }

func (l fakeLock) ReportsNodes() bool { return l.nodes > 0 }

func (l fakeLock) report(ctx context.Context) {
	for i := range l.nodes {
		locks.Report(ctx, locks.NodeAnswer{Node: i, Attempt: 1, Answer: locks.Granted})
	}
}

func (l fakeLock) Acquire(ctx context.Context, key string) (locks.Lease, error) {
	l.report(ctx)
	return locks.Lease{Key: key, Token: "5f2b8c1e9d0a4b7c8e3f6a1d2c9b0e4f", Validity: time.Now().Add(time.Second)}, nil
}

func (l fakeLock) Release(ctx context.Context, _ locks.Lease) error { l.report(ctx); return nil }

func (l fakeLock) Extend(ctx context.Context, lease locks.Lease) (locks.Lease, error) {
	l.report(ctx)
	return lease, nil
}

func (fakeLock) Close() error { return nil }

// BenchmarkEvidence: one acquire and one release as a client records
// them (four events, the view), with a lock that reports no per-node
// evidence, and with one that reports 1 node (setnx) or 5 (RedLock).
func BenchmarkEvidence(b *testing.B) {
	for _, nodes := range []int{0, 1, 5} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			w, err := history.Create(filepath.Join(b.TempDir(), "history.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			base := time.Now()
			c := &client{id: 1, rec: NewRecorder(base, w), lock: "fake", view: newView(base)}
			lk := fakeLock{nodes}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				lease, err := c.acquire(ctx, lk, "k3")
				if err != nil {
					b.Fatal(err)
				}
				if err := c.release(ctx, lk, lease); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
