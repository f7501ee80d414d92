package harness

import (
	"sync"
	"time"

	"github.com/locktorture/locktorture/nemesis"
)

// staller hands out stalls armed by the client-pause and pause-holder
// faults: the next client to pass its last validity check before a write
// takes one and waits. It implements nemesis.HoldStaller, and
// nemesis.ClientCrasher for the client-crash fault: the next client to
// acquire takes a crash and abandons its lease.
type staller struct {
	mu      sync.Mutex
	pending []*stall
	crashes []*stall // the armed crashes (their d is unused)
}

var (
	_ nemesis.HoldStaller   = (*staller)(nil)
	_ nemesis.ClientCrasher = (*staller)(nil)
)

// Crash arms one crash; the returned function withdraws it if no client
// has taken it.
func (s *staller) Crash() (withdraw func()) { return s.arm(&s.crashes, &stall{}) }

// crash reports whether a crash was armed, and disarms it. A nil staller
// never crashes.
func (s *staller) crash() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.crashes) == 0 {
		return false
	}
	s.crashes = s.crashes[1:]
	return true
}

// stall is a stall of d, or, when size is set, of what size returns at
// the check.
type stall struct {
	d    time.Duration
	size func(client int, left time.Duration) time.Duration
}

// Stall arms one stall of d; the returned function withdraws it if no
// client has taken it.
func (s *staller) Stall(d time.Duration) (withdraw func()) {
	return s.arm(&s.pending, &stall{d: d})
}

// StallHold arms one stall sized by size when a client takes it.
func (s *staller) StallHold(size func(client int, left time.Duration) time.Duration) (withdraw func()) {
	return s.arm(&s.pending, &stall{size: size})
}

// arm appends st to the list (s.pending or s.crashes) and returns the
// function that withdraws it while it is still there.
func (s *staller) arm(list *[]*stall, st *stall) (withdraw func()) {
	s.mu.Lock()
	*list = append(*list, st)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, p := range *list {
			if p == st {
				*list = append((*list)[:i], (*list)[i+1:]...)
				return
			}
		}
	}
}

// take returns the duration of the oldest armed stall for client, whose
// lease has left of its validity, and disarms it; 0 when none is armed.
// A sized stall is sized before take returns, so a withdraw that finds
// the stall gone knows its size was asked. A nil staller never stalls.
func (s *staller) take(client int, left time.Duration) time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return 0
	}
	st := s.pending[0]
	s.pending = s.pending[1:]
	if st.size != nil {
		return st.size(client, left)
	}
	return st.d
}
