package locks

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSummarize: the lists hold the last attempt's answers, a node's last
// answer in it counting; clean-ups that deleted a grant, of any attempt,
// are Unlocked once each; clean-ups alone, or nothing, are not reported.
func TestSummarize(t *testing.T) {
	g, r, s := Granted, Refused, Silent
	for _, tc := range []struct {
		name string
		in   []NodeAnswer
		want Nodes
	}{
		{"nothing", nil, Nodes{}},
		{"clean-ups only", []NodeAnswer{{Node: 1, Attempt: 1, Cleanup: true, Answer: g}}, Nodes{}},
		{"one node", []NodeAnswer{{Node: 0, Attempt: 1, Answer: g}}, Nodes{Attempt: 1, Granted: []int{0}}},
		{"attempt 0 is the first", []NodeAnswer{{Node: 0, Answer: r}}, Nodes{Attempt: 1, Refused: []int{0}}},
		{"a quorum on the second attempt, out of order", []NodeAnswer{
			{Node: 2, Attempt: 1, Answer: g}, {Node: 0, Attempt: 1, Answer: r}, {Node: 1, Attempt: 1, Answer: s},
			{Node: 2, Attempt: 1, Cleanup: true, Answer: g}, {Node: 1, Attempt: 1, Cleanup: true, Answer: g},
			{Node: 0, Attempt: 1, Cleanup: true, Answer: r},
			{Node: 4, Attempt: 2, Answer: g}, {Node: 2, Attempt: 2, Answer: g}, {Node: 3, Attempt: 2, Answer: r},
			{Node: 1, Attempt: 2, Answer: g}, {Node: 0, Attempt: 2, Answer: s},
		}, Nodes{Attempt: 2, Granted: []int{1, 2, 4}, Refused: []int{3}, Silent: []int{0}, Unlocked: []int{1, 2}}},
		{"the last answer of a node counts", []NodeAnswer{
			{Node: 0, Attempt: 1, Answer: r}, {Node: 0, Attempt: 1, Answer: g},
		}, Nodes{Attempt: 1, Granted: []int{0}}},
		{"a negative node is ignored", []NodeAnswer{
			{Node: -1, Attempt: 3, Answer: g}, {Node: 0, Attempt: 1, Answer: g}, {Node: -2, Attempt: 1, Cleanup: true, Answer: g},
		}, Nodes{Attempt: 1, Granted: []int{0}}},
		{"unlocked twice", []NodeAnswer{
			{Node: 3, Attempt: 1, Answer: g}, {Node: 3, Attempt: 1, Cleanup: true, Answer: g},
			{Node: 3, Attempt: 2, Answer: g}, {Node: 3, Attempt: 2, Cleanup: true, Answer: g},
		}, Nodes{Attempt: 2, Granted: []int{3}, Unlocked: []int{3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := summarize(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReportConcurrent: Report is safe from many goroutines, and a context
// without an Evidence makes it a no-op; Reset empties an Evidence for the
// next call.
func TestReportConcurrent(t *testing.T) {
	Report(context.Background(), NodeAnswer{Node: 0, Attempt: 1, Answer: Granted}) // must not panic
	var ev Evidence
	ctx := WithEvidence(context.Background(), &ev)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { Report(ctx, NodeAnswer{Node: i, Attempt: 1, Answer: Granted}) })
	}
	wg.Wait()
	if n := ev.Nodes(); len(n.Granted) != 50 || len(ev.Answers()) != 50 {
		t.Errorf("%d granted, %d answers; want 50", len(n.Granted), len(ev.Answers()))
	}
	ev.Reset()
	if n := ev.Nodes(); n.Reported() || len(ev.Answers()) != 0 {
		t.Errorf("after Reset: %+v, %d answers", n, len(ev.Answers()))
	}
	Report(ctx, NodeAnswer{Node: 1, Attempt: 1, Answer: Silent})
	if n := ev.Nodes(); !reflect.DeepEqual(n, Nodes{Attempt: 1, Silent: []int{1}}) {
		t.Errorf("reused after Reset: %+v", n)
	}
}

// TestAnswerOf: a yes is Granted; a no, or an error reply of the node
// (redis.Nil among them), Refused; any other error, no reply, Silent.
func TestAnswerOf(t *testing.T) {
	for _, tc := range []struct {
		yes  bool
		err  error
		want Answer
	}{
		{true, nil, Granted},
		{false, nil, Refused},
		{false, redis.Nil, Refused},
		{false, errors.New("dial tcp: connection refused"), Silent},
		{false, context.DeadlineExceeded, Silent},
		{true, context.DeadlineExceeded, Silent},
	} {
		if got := answerOf(tc.yes, tc.err); got != tc.want {
			t.Errorf("answerOf(%v, %v) = %v, want %v", tc.yes, tc.err, got, tc.want)
		}
	}
}
