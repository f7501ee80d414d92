package clients_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/report"
)

// hostile is the lock name of testdata/hostile_client.py in mode (see the
// script), its further arguments args.
func hostile(tb testing.TB, mode string, args ...string) string {
	tb.Helper()
	name := execName(tb, "testdata/hostile_client.py") + " " + mode
	for _, a := range args {
		name += " '" + a + "'"
	}
	return name
}

// TestClientVersionsKeepProvenance: a client whose hello claims the
// harness's own version keys ("go", go-redis's module path) has them
// recorded under its own name ("client:go"), so that merging the run's
// lock versions into the harness's (results.json's versions) keeps every
// version the harness reported, and adds the client's beside them.
func TestClientVersionsKeepProvenance(t *testing.T) {
	t.Parallel()
	sum, err := harness.Run(t.Context(), harness.Config{
		Workload: harness.Workload{Lock: hostile(t, "versions"), Clients: 1, Duration: time.Second, Seed: 1},
		Output:   harness.Output{Dir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.LockVersions["client:go"]; got != "go0.0.1-client" {
		t.Errorf("lock versions %v: want the client's go claim under client:go", sum.LockVersions)
	}
	own := report.Versions()
	merged := report.Versions()
	for k, v := range sum.LockVersions {
		if !strings.HasPrefix(k, "client") {
			t.Errorf("lock version key %q does not begin with client", k)
		}
		merged[k] = v // as results.json's writer merges them
	}
	for k, v := range own {
		if merged[k] != v {
			t.Errorf("version %s: %q after the merge, want the harness's %q", k, merged[k], v)
		}
	}
}
