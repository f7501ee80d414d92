package locks

import (
	"context"
	"testing"
)

// BenchmarkEvidence: what the per-node evidence of one call costs its
// caller and its lock, without Redis: an Evidence in the context, one
// answer per node reported (1 node: setnx; 5: RedLock), the summary.
func BenchmarkEvidence(b *testing.B) {
	for _, nodes := range []int{1, 5} {
		b.Run(map[int]string{1: "1-node", 5: "5-nodes"}[nodes], func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				ev := new(Evidence)
				cctx := WithEvidence(ctx, ev)
				e := ContextEvidence(cctx)
				for i := range nodes {
					e.add(NodeAnswer{Node: i, Attempt: 1, Answer: Granted})
				}
				if n := ev.Nodes(); len(n.Granted) != nodes {
					b.Fatal(n)
				}
			}
		})
	}
}
