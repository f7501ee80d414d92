package locks_test

import (
	"errors"
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
