package clients_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
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

// TestClientAbsurdValidity: a client that claims a validity of -1e300 or
// 1e300 ms breaks the protocol: each such acquire is recorded as an unknown outcome
// naming the client's fault, in one line, and the run goes on to its end
// with a history that checks.
func TestClientAbsurdValidity(t *testing.T) {
	t.Parallel()
	res, events := runAndCheck(t, harness.Config{Workload: harness.Workload{Lock: hostile(t, "absurd-validity"), Clients: 2, Keys: 2, Duration: 2 * time.Second}})
	if res.Lease == checker.Invalid || res.Resource == checker.Invalid {
		t.Errorf("lease %s, resource %s", res.Lease, res.Resource)
	}
	var ok, refused int
	for _, e := range events {
		switch {
		case e.F != history.Acquire:
		case e.Type == history.Ok:
			ok++
		case e.Type == history.Info && strings.Contains(e.Error, "locks: client broke the protocol: validity_ms ") && strings.Contains(e.Error, "e+300 is out of range"):
			refused++
			if strings.Contains(e.Error, "\n") {
				t.Errorf("error %q has more than one line", e.Error)
			}
		}
	}
	if ok == 0 || refused == 0 {
		t.Errorf("%d acquires ok, %d refused for their validity; want some of each", ok, refused)
	}
}

// TestClientLongReply: a reply longer than 1 MiB is the client's protocol
// error, said as such (not "client process gone"); the run goes on.
func TestClientLongReply(t *testing.T) {
	t.Parallel()
	_, events := runAndCheck(t, harness.Config{Workload: harness.Workload{Lock: hostile(t, "long-reply"), Clients: 1, Duration: time.Second}})
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.Info {
			if want := "locks: client broke the protocol: a reply longer than 1048576 bytes (1 MiB), the most a line may hold (client killed)"; !strings.HasSuffix(e.Error, want) {
				t.Fatalf("acquire: %q, want it to end %q", e.Error, want)
			}
			return
		}
	}
	t.Fatal("no acquire with an unknown outcome")
}

// knownNames are the names a lock's promises may use, found where they
// are defined: the topologies of the cluster, and the faults of the rows
// of the literature table (the part of a row's name after its last "/").
// It is what the caller that derives a lock's cells from its promises
// passes to locks.DeclaredPromises (locks.WithKnownNames).
func knownNames() locks.PromiseNames {
	known := locks.PromiseNames{Topologies: []string{cluster.TopologyMasters, cluster.TopologyFailover}}
	for _, r := range matrix.Literature {
		fault := r.Name[strings.LastIndex(r.Name, "/")+1:]
		if !slices.Contains(known.SafeUnder, fault) {
			known.SafeUnder = append(known.SafeUnder, fault)
		}
	}
	return known
}

// TestClientPromiseNames: a hello whose promises misspell a fault is
// refused in one line that names the client, with the name it meant;
// the example client's promises, and every fault of the literature table,
// pass.
func TestClientPromiseNames(t *testing.T) {
	t.Parallel()
	known := knownNames()
	every := locks.Promises{Topologies: known.Topologies, SafeUnder: known.SafeUnder}
	if err := every.CheckNames(known); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ lock, want string }{
		{execName(t, "example/example_client.py"), ""},
		{hostile(t, "typo-promises"), `the promises of its client's hello: locks: bad promises: safe_under names "client-pase", which is none of the known names (did you mean "client-pause"?)`},
	} {
		spec, err := locks.Lookup(tc.lock)
		if err != nil {
			t.Fatal(err)
		}
		_, err = locks.DeclaredPromises(spec, locks.WithKnownNames(known))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.lock, err)
		case tc.want != "" && (err == nil || err.Error() != tc.lock+": "+tc.want):
			t.Errorf("%s: %v\nwant %s: %s", tc.lock, err, tc.lock, tc.want)
		}
	}
}
