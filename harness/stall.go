package harness

import (
	"sync"
	"time"

	"github.com/locktorture/locktorture/nemesis"
)

// staller hands out stalls armed by the client-pause fault: the next
// client to pass its last validity check before a write takes one and
// waits. It implements nemesis.ClientStaller, and nemesis.ClientCrasher
// for the client-crash fault: the next client to acquire takes a crash
// and abandons its lease.
type staller struct {
	mu      sync.Mutex
	pending []*stall
	crashes []*stall // the armed crashes (their d is unused)
}

var (
	_ nemesis.ClientStaller = (*staller)(nil)
	_ nemesis.ClientCrasher = (*staller)(nil)
)

// Crash arms one crash; the returned function withdraws it if no client
// has taken it.
func (s *staller) Crash() (withdraw func()) {
	c := &stall{}
	s.mu.Lock()
	s.crashes = append(s.crashes, c)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, p := range s.crashes {
			if p == c {
				s.crashes = append(s.crashes[:i], s.crashes[i+1:]...)
				return
			}
		}
	}
}

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

type stall struct{ d time.Duration }

// Stall arms one stall of d; the returned function withdraws it if no
// client has taken it.
func (s *staller) Stall(d time.Duration) (withdraw func()) {
	st := &stall{d: d}
	s.mu.Lock()
	s.pending = append(s.pending, st)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, p := range s.pending {
			if p == st {
				s.pending = append(s.pending[:i], s.pending[i+1:]...)
				return
			}
		}
	}
}

// take returns the duration of the oldest armed stall and disarms it, or
// 0 when none is armed. A nil staller never stalls.
func (s *staller) take() time.Duration {
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
	return st.d
}
