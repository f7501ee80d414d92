package locks

import (
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand/v2"
	"sync"
	"time"
)

// Backoff draws the random delays between two acquire attempts from one
// generator seeded by Config.Seed, so one seed gives one sequence of
// delays (which goroutine gets which delay still depends on scheduling).
// Every lock of the registry waits by it; a lock written outside this
// package (Register) may too. It is safe for concurrent use.
type Backoff struct {
	max   time.Duration
	equal bool // every delay is max (Config.EqualRetry)

	mu  sync.Mutex
	rng *mrand.Rand
}

// NewBackoff returns the back-off of cfg: delays below cfg.RetryDelay,
// drawn by a generator seeded with cfg.Seed (all of cfg.RetryDelay with
// cfg.EqualRetry).
func NewBackoff(cfg Config) *Backoff {
	seed := uint64(cfg.Seed)
	return &Backoff{
		max:   cfg.RetryDelay,
		equal: cfg.EqualRetry,
		rng:   mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Next returns a delay drawn uniformly from [max/2, max), or max when
// the delays are equal.
func (b *Backoff) Next() time.Duration {
	if b.equal {
		return b.max
	}
	lo := b.max / 2
	span := b.max - lo
	if span <= 0 {
		return max(lo, 0)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return lo + time.Duration(b.rng.Int64N(int64(span)))
}

// newToken returns 128 random bits from crypto/rand, hex-encoded: the
// value that identifies one holder.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24; it crashes the program instead
	return hex.EncodeToString(b[:])
}
