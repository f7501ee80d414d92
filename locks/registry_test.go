package locks_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// TestRegistry pins the order and flags of the built-in locks: a seed
// picks locks by position, so the order is part of the contract. Locks
// that Register added (TestRegister) come after them.
func TestRegistry(t *testing.T) {
	want := []struct {
		name                       string
		mutant, multiNode, fencing bool
	}{
		{"setnx", false, false, true},
		{"redlock", false, true, true},
		{"redsync", false, true, false},
		{"redislock", false, false, false},
		{"setnx-plain-del", true, false, false},
		{"setnx-get-set", true, false, false},
		{"setnx-no-ttl", true, false, false},
		{"setnx-extend-no-check", true, false, false},
		{"redlock-no-quorum", true, true, false},
		{"redlock-no-elapsed", true, true, false},
		{"redis-py-lock", false, false, false},
		{"redlock-py", false, true, false},
		{"setnx-seed", false, false, false},    // the seed article's lock
		{"redlock-py-wall", true, true, false}, // elapsed on the wall clock
		{"setnx-watchdog", false, false, true},
		{"rueidislock", false, false, false},
		{"setnx-watchdog-no-notice", true, false, false},
		{"setnx-client-token", false, false, false},
	}
	specs := locks.Specs()
	if len(specs) < len(want) {
		t.Fatalf("Specs() has %d entries, want %d: %v", len(specs), len(want), locks.Names())
	}
	for i, w := range want {
		s := specs[i]
		if s.Name != w.name || s.Mutant != w.mutant || s.MultiNode != w.multiNode || s.Fencing != w.fencing {
			t.Errorf("Specs()[%d] = {%s mutant=%v multiNode=%v fencing=%v}, want %+v",
				i, s.Name, s.Mutant, s.MultiNode, s.Fencing, w)
		}
		if s.Summary == "" || s.New == nil {
			t.Errorf("%s: empty Summary or nil New", s.Name)
		}
		got, err := locks.Lookup(w.name)
		if err != nil || got.Name != w.name {
			t.Errorf("Lookup(%q) = %q, %v", w.name, got.Name, err)
		}
	}
	if names := locks.Names(); !slices.Equal(names[:len(want)], []string{
		"setnx", "redlock", "redsync", "redislock",
		"setnx-plain-del", "setnx-get-set", "setnx-no-ttl", "setnx-extend-no-check", "redlock-no-quorum", "redlock-no-elapsed",
		"redis-py-lock", "redlock-py", "setnx-seed", "redlock-py-wall",
		"setnx-watchdog", "rueidislock", "setnx-watchdog-no-notice", "setnx-client-token",
	}) {
		t.Errorf("Names() = %v", names)
	}
}

// TestLanguages: the Go locks say Go, the Python clients Python, and the
// node counts a run starts by default follow MultiNode unless a Spec says.
func TestLanguages(t *testing.T) {
	for _, tc := range []struct {
		name, lang string
		nodes      int
	}{
		{"setnx", "Go", 1},
		{"redlock", "Go", 5},
		{"redis-py-lock", "Python", 1},
		{"redlock-py", "Python", 5},
	} {
		s, err := locks.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Lang() != tc.lang || s.DefaultNodes() != tc.nodes {
			t.Errorf("%s: language %q, %d nodes; want %q, %d", tc.name, s.Lang(), s.DefaultNodes(), tc.lang, tc.nodes)
		}
	}
}

// TestExecLock: a name "exec:COMMAND" is a ProcessLock running COMMAND,
// split like a shell's words, without Register: one node unless asked
// for more, any node count accepted. A command that cannot be split, or
// none, is refused with ErrBadSpec.
func TestExecLock(t *testing.T) {
	t.Setenv(fakeClientEnv, "ok") // the command below is the fake client
	name := "exec:'" + os.Args[0] + "' -test.run=^$"
	s, err := locks.Lookup(name)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", name, err)
	}
	if s.Name != name || !s.MultiNode || s.DefaultNodes() != 1 || !s.Fencing || s.Lang() == "Go" {
		t.Errorf("Lookup(%q) = %+v", name, s)
	}
	l, err := locks.New(name, fakeConfig())
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	defer l.Close()
	lease, err := l.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Errorf("release: %v", err)
	}
	for _, bad := range []string{"exec:", "exec:   ", "exec:python3 'unterminated"} {
		if _, err := locks.Lookup(bad); !errors.Is(err, locks.ErrBadSpec) {
			t.Errorf("Lookup(%q): %v, want ErrBadSpec", bad, err)
		}
	}
}

// TestNewRejects checks the errors of Lookup and New that need no Redis:
// an unknown name, fencing asked of a lock without it (through New and
// through a Spec's New called directly), and bad configurations.
func TestNewRejects(t *testing.T) {
	addrs := []string{"127.0.0.1:1"} // never dialled: construction does not connect
	if _, err := locks.Lookup("no-such-lock"); !errors.Is(err, locks.ErrUnknownLock) {
		t.Errorf("Lookup(unknown) error = %v, want ErrUnknownLock", err)
	}
	if _, err := locks.New("no-such-lock", locks.Config{Addrs: addrs}); !errors.Is(err, locks.ErrUnknownLock) {
		t.Errorf("New(unknown) error = %v, want ErrUnknownLock", err)
	}
	for _, s := range locks.Specs() {
		if s.Fencing {
			continue
		}
		cfg := locks.Config{Addrs: addrs, Fencing: true}
		if l, err := locks.New(s.Name, cfg); err == nil {
			l.Close()
			t.Errorf("New(%q) with Fencing succeeded; the lock issues no fencing tokens", s.Name)
		}
		if l, err := s.New(cfg); err == nil {
			l.Close()
			t.Errorf("Spec(%q).New with Fencing succeeded", s.Name)
		}
	}
	for _, tc := range []struct {
		name string
		cfg  locks.Config
	}{
		{"no address", locks.Config{}},
		{"negative TTL", locks.Config{Addrs: addrs, TTL: -time.Second}},
		{"TTL within the drift allowance", locks.Config{Addrs: addrs, TTL: 2 * time.Millisecond}},
	} {
		for _, name := range []string{"setnx", "redlock", "redsync", "redislock"} {
			if l, err := locks.New(name, tc.cfg); err == nil {
				l.Close()
				t.Errorf("New(%q) with %s succeeded", name, tc.name)
			}
		}
	}
}

// TestRegister: a registered Spec is found by Lookup and New, after the
// built-in locks; a duplicate name, a bad name and a nil New are refused;
// Register is safe for concurrent use with itself and with Lookup (run
// with -race).
func TestRegister(t *testing.T) {
	built := len(locks.Names())
	wrap := func(cfg locks.Config) (locks.Lock, error) {
		if cfg.Fencing { // like every Spec without Fencing (TestNewRejects)
			return nil, errors.New("test-register issues no fencing tokens")
		}
		return locks.New("setnx", cfg)
	}
	if err := locks.Register(locks.Spec{Name: "test-register", Summary: "setnx under another name", New: wrap}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	s, err := locks.Lookup("test-register")
	if err != nil || s.Summary != "setnx under another name" {
		t.Fatalf("Lookup after Register = %+v, %v", s, err)
	}
	if names := locks.Names(); names[len(names)-1] != "test-register" || len(names) != built+1 {
		t.Errorf("Names() = %v, want the registered lock last", names)
	}
	l, err := locks.New("test-register", locks.Config{Addrs: []string{"127.0.0.1:1"}}) // never dialled
	if err != nil {
		t.Fatalf("New(registered): %v", err)
	}
	l.Close()
	if _, err := locks.New("test-register", locks.Config{Addrs: []string{"127.0.0.1:1"}, Fencing: true}); err == nil {
		t.Error("New with Fencing of a Spec without Fencing succeeded")
	}

	for _, tc := range []struct {
		name string
		spec locks.Spec
		want error
	}{
		{"duplicate of a built-in lock", locks.Spec{Name: "setnx", New: wrap}, locks.ErrDuplicateLock},
		{"duplicate of a registered lock", locks.Spec{Name: "test-register", New: wrap}, locks.ErrDuplicateLock},
		{"empty name", locks.Spec{New: wrap}, locks.ErrBadSpec},
		{"name with a slash", locks.Spec{Name: "a/b", New: wrap}, locks.ErrBadSpec},
		{"name with a space", locks.Spec{Name: "a b", New: wrap}, locks.ErrBadSpec},
		{"nil New", locks.Spec{Name: "test-register-nil"}, locks.ErrBadSpec},
	} {
		if err := locks.Register(tc.spec); !errors.Is(err, tc.want) {
			t.Errorf("%s: Register error = %v, want %v", tc.name, err, tc.want)
		}
	}

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			// All race for one name and each for one of its own.
			err := locks.Register(locks.Spec{Name: "test-register-race", New: wrap})
			if err != nil && !errors.Is(err, locks.ErrDuplicateLock) {
				errs[i] = err
			}
			if err := locks.Register(locks.Spec{Name: fmt.Sprintf("test-register-%d", i), New: wrap}); err != nil {
				errs[i] = err
			}
			if _, err := locks.Lookup("test-register-race"); err != nil && !errors.Is(err, locks.ErrUnknownLock) {
				errs[i] = err
			}
			_ = locks.Specs()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, name := range locks.Names() {
		if name == "test-register-race" {
			count++
		}
	}
	if count != 1 || len(locks.Names()) != built+2+n {
		t.Errorf("after the race: %d locks named test-register-race, %d locks in all, want 1 and %d",
			count, len(locks.Names()), built+2+n)
	}
}
