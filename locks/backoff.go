package locks

import (
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand/v2"
	"sync"
	"time"
)

// Backoff draws the delays between acquire attempts from one generator
// seeded by Config.Seed: one seed, one sequence (which goroutine gets
// which still depends on scheduling). Safe for concurrent use.
type Backoff struct {
	max   time.Duration
	equal bool // every delay is max (Config.EqualRetry)

	mu  sync.Mutex
	rng *mrand.Rand
}

// NewBackoff returns cfg's back-off.
func NewBackoff(cfg Config) *Backoff {
	seed := uint64(cfg.Seed)
	return &Backoff{
		max:   cfg.RetryDelay,
		equal: cfg.EqualRetry,
		rng:   mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Next returns a delay from [max/2, max), or max when equal.
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

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24; it crashes the program instead
	return hex.EncodeToString(b[:])
}
