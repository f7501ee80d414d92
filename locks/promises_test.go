package locks_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/locks"
)

// TestBuiltinPromises: every built-in lock declares its promises, and
// they agree with its Spec.
func TestBuiltinPromises(t *testing.T) {
	for _, s := range locks.Specs() {
		if s.Promises == nil {
			if strings.HasPrefix(s.Name, "test-") {
				continue // registered by the registry's tests
			}
			t.Errorf("%s declares no promises", s.Name)
			continue
		}
		if _, err := locks.DeclaredPromises(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// TestPromisesSatisfies: the traits a row of the literature table selects
// by, with negation.
func TestPromisesSatisfies(t *testing.T) {
	redlock := locks.Promises{Quorum: 5, ElapsedFromRequest: true, Fences: true, Persistence: locks.PersistDelayedRestart}
	single := locks.Promises{SafeUnder: []string{"client-pause"}, Topologies: []string{"failover"}}
	for _, tc := range []struct {
		p    locks.Promises
		when string
		want bool
	}{
		{redlock, "", true},
		{redlock, "quorum elapsed", true},
		{redlock, "single", false},
		{redlock, "fences !fence-sound", true},
		{redlock, "fence-sound", false},
		{redlock, "persist:delayed-restart", true},
		{redlock, "quorum !reports", true},
		{redlock, "quorum reports", false},
		{locks.Promises{Quorum: 5, ReportsNodes: true}, "quorum reports", true},
		{single, "single !elapsed", true},
		{single, "safe-under:client-pause topology:failover", true},
		{single, "!safe-under:client-pause", false},
	} {
		if got := tc.p.Satisfies(tc.when); got != tc.want {
			t.Errorf("%v satisfies %q = %v, want %v", tc.p, tc.when, got, tc.want)
		}
	}
}

// TestPromisesRefused: promises that contradict themselves or their Spec
// are refused at registration, in one line.
func TestPromisesRefused(t *testing.T) {
	build := func(locks.Config) (locks.Lock, error) { return nil, errors.New("unused") }
	for _, s := range []locks.Spec{
		{Name: "bad-fence", Promises: &locks.Promises{FenceSound: true}, New: build},
		{Name: "bad-quorum", MultiNode: true, Promises: &locks.Promises{Quorum: 2}, New: build},
		{Name: "bad-multinode", Promises: &locks.Promises{Quorum: 5}, New: build},
		{Name: "bad-fencing", Promises: &locks.Promises{Fences: true}, New: build},
		{Name: "bad-persistence", Promises: &locks.Promises{Persistence: "fsync-maybe"}, New: build},
	} {
		if err := locks.Register(s); !errors.Is(err, locks.ErrBadSpec) {
			t.Errorf("Register(%s) = %v, want ErrBadSpec", s.Name, err)
		}
	}
	if _, err := locks.DeclaredPromises(locks.Spec{Name: "none", New: build}); !errors.Is(err, locks.ErrNoPromises) {
		t.Errorf("DeclaredPromises of a lock without = %v, want ErrNoPromises", err)
	}
}

// known are names as the caller that derives cells would pass them.
var known = locks.PromiseNames{
	Topologies: []string{"masters", "failover"},
	SafeUnder:  []string{"none", "latency", "kill-immediate", "kill-delayed", "client-pause", "clock", "client-clock"},
}

// TestPromiseNames: a topology or fault name that is not known is refused
// in one line, with the closest known name when one is close; known names
// pass.
func TestPromiseNames(t *testing.T) {
	for _, tc := range []struct {
		p    locks.Promises
		want string // "" for accepted
	}{
		{locks.Promises{Topologies: []string{"failover"}, SafeUnder: []string{"client-pause", "kill-delayed"}}, ""},
		{locks.Promises{SafeUnder: []string{"client-pase"}},
			`locks: bad promises: safe_under names "client-pase", which is none of the known names (did you mean "client-pause"?)`},
		{locks.Promises{SafeUnder: []string{"Client-Pause"}},
			`locks: bad promises: safe_under names "Client-Pause", which is none of the known names (did you mean "client-pause"?)`},
		{locks.Promises{Topologies: []string{"failvoer"}},
			`locks: bad promises: topologies names "failvoer", which is none of the known names (did you mean "failover"?)`},
		{locks.Promises{SafeUnder: []string{"gremlins"}},
			`locks: bad promises: safe_under names "gremlins", which is none of the known names (none, latency, kill-immediate, kill-delayed, client-pause, clock, client-clock)`},
	} {
		err := tc.p.CheckNames(known)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.p, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, locks.ErrBadPromises)):
			t.Errorf("%v: %v\nwant %s", tc.p, err, tc.want)
		}
	}
}

// TestDeclaredPromisesNames: with the known names, DeclaredPromises
// refuses a misspelt name and says whose it is: the client's hello, or the
// Spec of a registered lock; without them it checks no name.
func TestDeclaredPromisesNames(t *testing.T) {
	t.Setenv(fakeClientEnv, "typo-promises") // inherited by the client process
	spec, err := locks.ExecSpec(locks.ExecPrefix + os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = locks.DeclaredPromises(spec, locks.WithKnownNames(known))
	want := "the promises of its client's hello: locks: bad promises: topologies names \"failvoer\", which is none of the known names (did you mean \"failover\"?)"
	if !errors.Is(err, locks.ErrBadPromises) || !strings.HasPrefix(err.Error(), spec.Name+": ") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("DeclaredPromises of the client: %v\nwant %s: %s", err, spec.Name, want)
	}
	if _, err := locks.DeclaredPromises(spec); err != nil {
		t.Errorf("DeclaredPromises without known names: %v", err)
	}

	build := func(locks.Config) (locks.Lock, error) { return nil, errors.New("unused") }
	mine := locks.Spec{Name: "mine", New: build, Promises: &locks.Promises{SafeUnder: []string{"kill-delaid"}}}
	_, err = locks.DeclaredPromises(mine, locks.WithKnownNames(known))
	if want := `locks: bad spec: "mine": locks: bad promises: safe_under names "kill-delaid", which is none of the known names (did you mean "kill-delayed"?)`; err == nil || err.Error() != want {
		t.Errorf("DeclaredPromises of a Spec: %v\nwant %s", err, want)
	}
}
