package harness

import (
	"errors"
	"fmt"
	"sync"
)

// ErrStaleFence is returned for an access whose fencing token is older than
// the newest the store has seen for its key.
var ErrStaleFence = errors.New("harness: stale fencing token")

// Store is the protected resource: a fault-free, linearizable in-process
// store of one integer per key, every access atomic under one mutex, so any
// lost update in a history is the lock's doing. With fencing it refuses any
// access carrying a token older than the newest seen for the key, and a newer
// one raises the bar. With StoreWriteOnly reads are neither checked nor raise
// the bar: the storage service of Kleppmann's example, which sees the token
// only with a write, so a token that does not grow from one holder to the
// next lets a stale write in.
type Store struct {
	fencing   bool
	writeOnly bool

	mu     sync.Mutex
	values map[string]int64
	newest map[string]int64
}

// The store modes (Workload.Store).
const (
	// StoreAll checks the fencing token on every access, reads included.
	StoreAll = "all"
	// StoreWriteOnly checks it on writes only.
	StoreWriteOnly = "write-only"
)

// NewStore returns an empty store; fencing checks the token on every access.
func NewStore(fencing bool) *Store {
	return &Store{fencing: fencing, values: make(map[string]int64), newest: make(map[string]int64)}
}

// NewWriteOnlyStore returns an empty store that checks tokens on writes only.
func NewWriteOnlyStore() *Store {
	st := NewStore(true)
	st.writeOnly = true
	return st
}

// admit checks fence against the newest token seen for key; s.mu is held.
func (s *Store) admit(key string, fence int64) error {
	if !s.fencing {
		return nil
	}
	if fence < s.newest[key] {
		return fmt.Errorf("%w: %d < %d on %q", ErrStaleFence, fence, s.newest[key], key)
	}
	s.newest[key] = fence
	return nil
}

// Read returns the value of key.
func (s *Store) Read(key string, fence int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.writeOnly {
		if err := s.admit(key, fence); err != nil {
			return 0, err
		}
	}
	return s.values[key], nil
}

// Write sets the value of key.
func (s *Store) Write(key string, fence int64, v int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admit(key, fence); err != nil {
		return err
	}
	s.values[key] = v
	return nil
}

// Value returns the value of key without a fencing check.
func (s *Store) Value(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[key]
}
