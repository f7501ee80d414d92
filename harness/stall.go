package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// staller hands out the stalls the client-pause and pause-holder faults arm
// (nemesis.HoldStaller): the next client to pass its last validity check
// before a write takes one. It is nemesis.ClientCrasher (client-crash: the
// next client to acquire abandons its lease) and nemesis.ProcessStopper
// (client-stop: it stops a lock's client process, locks.ProcessLock, and the
// client that drives it, which takes no step while frozen).
type staller struct {
	locks []locks.Lock // the run's, one per client group
	view  *view        // to name the client of a lease

	mu      sync.Mutex
	pending []*stall
	crashes []*stall              // the armed crashes (their d is unused)
	frozen  map[int]chan struct{} // by client: closed when it runs again
	// steps holds, by client, a lock kept from the check that it is not
	// frozen to the record of the step it starts: freeze takes it once, so
	// once freeze returns no earlier step is still being recorded.
	steps map[int]*sync.Mutex
}

var (
	_ nemesis.HoldStaller    = (*staller)(nil)
	_ nemesis.ClientCrasher  = (*staller)(nil)
	_ nemesis.ProcessStopper = (*staller)(nil)
)

// processStopper is a lock whose clients are processes that can be
// stopped (locks.ProcessLock).
type processStopper interface {
	StopLease(token string) (pid int, cont func() error, err error)
	StopProcess(pick int) (pid int, token string, cont func() error, err error)
}

// StopHolder implements nemesis.ProcessStopper: client is frozen, then
// token's process stopped; cont continues both, in reverse.
func (s *staller) StopHolder(client int, token string) (func() error, error) {
	thaw := s.freeze(client)
	err := errors.New("the lock runs in this process: no client process to stop")
	var cont func() error
	for _, lk := range s.locks { // the lease's is the group's: try each
		if ps, ok := lk.(processStopper); ok {
			if _, cont, err = ps.StopLease(token); err == nil {
				break
			}
		}
	}
	if err != nil {
		thaw()
		return nil, err
	}
	return then(cont, thaw), nil
}

// StopProcess implements nemesis.ProcessStopper: the pick-th process of the
// pick-th group's lock (modulo each), and the client of the lease it serves,
// if any.
func (s *staller) StopProcess(pick int) (string, func() error, error) {
	if len(s.locks) == 0 {
		return "", nil, errors.New("no lock to stop")
	}
	pick = max(pick, 0)
	ps, ok := s.locks[pick%len(s.locks)].(processStopper)
	if !ok {
		return "", nil, errors.New("the lock runs in this process: no client process to stop")
	}
	pid, token, cont, err := ps.StopProcess(pick / len(s.locks))
	if err != nil {
		return "", nil, err
	}
	what := fmt.Sprintf("an idle client process (pid %d)", pid)
	thaw := func() {}
	if client, ok := s.view.holder(token); ok && token != "" {
		what = fmt.Sprintf("client %d's process (pid %d)", client, pid)
		thaw = s.freeze(client)
	}
	return what, then(cont, thaw), nil
}

// then continues a stopped process with cont, then its client with thaw.
func then(cont func() error, thaw func()) func() error {
	return func() error {
		err := cont()
		thaw()
		return err
	}
}

// freeze makes client wait at its next step until thaw, once.
func (s *staller) freeze(client int) (thaw func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.frozen == nil {
		s.frozen = map[int]chan struct{}{}
	}
	s.frozen[client] = ch
	s.mu.Unlock()
	// Wait for a step being recorded (step) to finish.
	step := s.stepLock(client)
	step.Lock()
	step.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.frozen[client] == ch {
				delete(s.frozen, client)
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// stepLock is client's step lock (steps).
func (s *staller) stepLock(client int) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steps == nil {
		s.steps = map[int]*sync.Mutex{}
	}
	mu := s.steps[client]
	if mu == nil {
		mu = &sync.Mutex{}
		s.steps[client] = mu
	}
	return mu
}

// step waits while client is frozen, then runs record before any freeze can
// take effect: a freeze that returned has seen the record, or the client sees
// the freeze and records nothing until it thaws. ErrInterrupted when ctx ends
// first; a nil staller runs record at once.
func (s *staller) step(ctx context.Context, client int, record func() error) error {
	if s == nil {
		return record()
	}
	mu := s.stepLock(client)
	for {
		mu.Lock()
		s.mu.Lock()
		ch := s.frozen[client]
		s.mu.Unlock()
		if ch == nil {
			err := record()
			mu.Unlock()
			return err
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ErrInterrupted
		}
	}
}

// await waits while client is frozen (ErrInterrupted when ctx ends); a nil
// staller never waits.
func (s *staller) await(ctx context.Context, client int) error {
	return s.step(ctx, client, func() error { return nil })
}

// Crash arms one crash; the returned function withdraws it if no client
// has taken it.
func (s *staller) Crash() (withdraw func()) { return s.arm(&s.crashes, &stall{}) }

// crash reports whether a crash was armed, and disarms it (never, for a nil
// staller).
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

// stall is a stall of d, or, with size, of what size returns at the check.
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

// arm appends st to list and returns what withdraws it while it is still
// there.
func (s *staller) arm(list *[]*stall, st *stall) (withdraw func()) {
	s.mu.Lock()
	*list = append(*list, st)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		*list = slices.DeleteFunc(*list, func(p *stall) bool { return p == st })
	}
}

// take returns the duration of the oldest stall armed for client, whose lease
// has left of its validity, and disarms it (0 when none; a nil staller never
// stalls). A sized stall is sized before take returns, so a withdraw that
// finds it gone knows its size was asked.
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
