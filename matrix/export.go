package matrix

import (
	"time"

	"github.com/locktorture/locktorture/harness"
)

// Config returns the harness configuration of one run of the cell with
// seed, lasting d (not raised to MinDuration: the caller decides), in
// dir: what Run runs, for callers that drive the harness themselves (the
// benchmarks).
func (sp Spec) Config(seed int64, d time.Duration, dir string) harness.Config {
	return sp.config(seed, d, dir)
}
