package locks_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// TestRegistry pins the registry's order and flags: a seed picks locks by
// position, so the order is part of the contract.
func TestRegistry(t *testing.T) {
	want := []struct {
		name                       string
		mutant, multiNode, fencing bool
	}{
		{"setnx", false, false, true},
		{"redlock", false, true, true},
		{"setnx-plain-del", true, false, false},
		{"setnx-get-set", true, false, false},
		{"setnx-no-ttl", true, false, false},
		{"redlock-no-quorum", true, true, false},
		{"redlock-no-elapsed", true, true, false},
	}
	specs := locks.Specs()
	if len(specs) != len(want) {
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
	if names := locks.Names(); !slices.Equal(names, []string{
		"setnx", "redlock", "setnx-plain-del", "setnx-get-set", "setnx-no-ttl", "redlock-no-quorum", "redlock-no-elapsed",
	}) {
		t.Errorf("Names() = %v", names)
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
		for _, name := range []string{"setnx", "redlock"} {
			if l, err := locks.New(name, tc.cfg); err == nil {
				l.Close()
				t.Errorf("New(%q) with %s succeeded", name, tc.name)
			}
		}
	}
}
