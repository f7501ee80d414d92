package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ClientClock is a wall-clock offset for client processes started with
// Env, as SetClockOffset is for a node. It moves clocks read through libc
// (Python's time.time), not time.monotonic nor Go's time.Now (the vDSO).
type ClientClock struct {
	shim string
	file *clockFile
}

// OpenClientClock builds the clock shim (once) and creates the offset
// file path, at offset 0.
func OpenClientClock(path string) (*ClientClock, error) {
	shim, err := clockShim()
	if err != nil {
		return nil, err
	}
	f, err := mapClock(path, true)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	f.path = abs
	return &ClientClock{shim: shim, file: f}, nil
}

// Env returns the entries that preload the shim (ahead of this process's
// LD_PRELOAD) and name the offset file, appended to the clients'
// inherited environment (locks.Config.ClientEnv).
func (c *ClientClock) Env() []string {
	preload := c.shim
	if v := os.Getenv("LD_PRELOAD"); v != "" {
		preload += " " + v
	}
	return []string{"LD_PRELOAD=" + preload, clockFileEnv + "=" + c.file.path}
}

// SetOffset shifts the clients' wall clock to the real time plus d from
// their next read on; ErrClosed after Close.
func (c *ClientClock) SetOffset(d time.Duration) error {
	if !c.file.store(int64(d)) {
		return fmt.Errorf("%w: set client clock offset", ErrClosed)
	}
	return nil
}

// Offset returns the offset set last (0 after Close).
func (c *ClientClock) Offset() time.Duration { return time.Duration(c.file.load()) }

// Close unmaps the file; the processes keep their own mappings.
func (c *ClientClock) Close() error { return c.file.close() }
