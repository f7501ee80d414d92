package harness_test

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/harness"
)

// TestNodesFlag: --nodes takes a number or the external nodes' addresses.
func TestNodesFlag(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		nodes    int
		external []string
		bad      bool
	}{
		{[]string{"--nodes", "3"}, 3, nil, false},
		{[]string{"--nodes", "10.0.0.1:6379,10.0.0.2:6380"}, 2, []string{"10.0.0.1:6379", "10.0.0.2:6380"}, false},
		{[]string{"--nodes", "[::1]:6379"}, 1, []string{"[::1]:6379"}, false},
		{[]string{"--nodes", "redis.example"}, 0, nil, true},
		{[]string{"--nodes", "10.0.0.1:6379,"}, 0, nil, true},
		{[]string{"--nodes", "0"}, 0, nil, true},
	} {
		var cfg harness.Config
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		harness.BindFlags(fs, &cfg)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.bad {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !tc.bad && (cfg.Nodes != tc.nodes || !slices.Equal(cfg.External, tc.external)) {
			t.Errorf("%q: nodes %d, external %q", tc.args, cfg.Nodes, cfg.External)
		}
	}
}

// TestArgsRoundTrip: the command line Args renders for a configuration
// parses back, through the same flags, into that configuration; the
// password is never rendered.
func TestArgsRoundTrip(t *testing.T) {
	c := harness.Config{
		Workload: harness.Workload{Lock: "exec:python3 'my client.py'", Clients: 3, Keys: 1, Duration: 12 * time.Second, TTL: 500 * time.Millisecond, Hold: 450 * time.Millisecond,
			Seed: 7, Fencing: true, Store: harness.StoreWriteOnly, Extend: true, ExtendEvery: 100 * time.Millisecond, AcquireTimeout: time.Second, RetryDelay: 10 * time.Millisecond},
		Cluster: harness.Cluster{Nodes: 3, Topology: "masters", Appendfsync: "everysec", Password: "s3cret"},
		Faults:  harness.Faults{Nemesis: []string{"kill", "pause"}, NemesisInterval: 250 * time.Millisecond, Restart: "delayed", RestartDelay: 2 * time.Second},
	}
	args := harness.Args(c)
	line := strings.Join(args, " ")
	if strings.Contains(line, "s3cret") {
		t.Fatalf("the password is rendered: %s", line)
	}
	var back harness.Config
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	harness.BindFlags(fs, &back)
	// The renderer quotes for a shell; the parser gets the words a shell
	// would pass it.
	for i, a := range args {
		args[i] = strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(a, `'\''`, `'`), "'"), "'")
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	want := c
	want.Password = ""
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("round trip of %s:\n got %+v\nwant %+v", line, back, want)
	}
	if cmd := harness.CommandLine(harness.Config{Workload: harness.Workload{Lock: "setnx", NoHold: true}}); cmd != "torture run --lock setnx --hold 0s" {
		t.Errorf("CommandLine = %q", cmd)
	}
}

// TestCheckFlags: a flag given a value its field reads as "the default",
// or out of range, is refused in one line; --hold 0 is a hold of nothing.
func TestCheckFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "0"}, "--clients must be at least 1"},
		{[]string{"--keys", "0"}, "--keys must be at least 1"},
		{[]string{"--seed", "0"}, "--seed must not be 0"},
		{[]string{"--duration", "0s"}, "--duration must be positive"},
		{[]string{"--nemesis-interval", "-1s"}, "--nemesis-interval must be positive"},
		{[]string{"--restart-delay", "0s"}, "--restart immediate"},
		{[]string{"--retry-delay", "0s"}, "--retry-delay must be positive"},
		{[]string{"--hold", "0s"}, ""},
	} {
		var cfg harness.Config
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		harness.BindFlags(fs, &cfg)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := harness.CheckFlags(fs, &cfg)
		switch {
		case tc.want == "" && (err != nil || !cfg.NoHold):
			t.Errorf("%q: %v, no hold %v", tc.args, err, cfg.NoHold)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

// TestKindWindow: a targeted kind's workload is the run's when the user
// sets none (with the default 10 ms holds its strike would leave no
// window), and a workload the user gives is kept.
func TestKindWindow(t *testing.T) {
	p, err := harness.NewPlan(harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Nodes: 5}, Faults: harness.Faults{Nemesis: []string{"kill-quorum"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Config(); c.Keys != 1 || c.Hold != 800*time.Millisecond || c.NemesisInterval != 250*time.Millisecond || c.Clients != 10 {
		t.Errorf("kill-quorum with no workload: keys %d, hold %s, interval %s, clients %d", c.Keys, c.Hold, c.NemesisInterval, c.Clients)
	}
	p, err = harness.NewPlan(harness.Config{Workload: harness.Workload{Lock: "redlock", Hold: 10 * time.Millisecond, Keys: 2}, Faults: harness.Faults{Nemesis: []string{"kill-quorum"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Config(); c.Keys != 2 || c.Hold != 10*time.Millisecond || c.NemesisInterval != 250*time.Millisecond {
		t.Errorf("kill-quorum with a workload given: keys %d, hold %s, interval %s", c.Keys, c.Hold, c.NemesisInterval)
	}
	p, err = harness.NewPlan(harness.Config{Workload: harness.Workload{Lock: "setnx"}, Faults: harness.Faults{Nemesis: []string{"kill"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Config(); c.Keys != 2 || c.Hold != 10*time.Millisecond || c.NemesisInterval != 2*time.Second {
		t.Errorf("a random kind asks for nothing: keys %d, hold %s, interval %s", c.Keys, c.Hold, c.NemesisInterval)
	}
}

// TestNemesisNone: --nemesis none is a run without faults, as the
// matrix's none rows; a kind list is split at its commas.
func TestNemesisNone(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []string
	}{
		{"none", nil},
		{"", nil},
		{"kill", []string{"kill"}},
		{"partition,clock", []string{"partition", "clock"}},
	} {
		var cfg harness.Config
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		harness.BindFlags(fs, &cfg)
		if err := fs.Parse([]string{"--nemesis", tc.arg}); err != nil || !slices.Equal(cfg.Nemesis, tc.want) {
			t.Errorf("--nemesis %q: %q (%v), want %q", tc.arg, cfg.Nemesis, err, tc.want)
		}
	}
}
