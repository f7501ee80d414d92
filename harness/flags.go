package harness

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// BindFlags registers on fs a flag for every field of c a user sets on
// `torture run`'s command line. Each defaults to the field's zero, which
// Config reads as "the default" (stated in the usage from Defaults), so an
// unset field can take a default that depends on the rest (a targeted kind's
// nemesis.Kind.Window). Call CheckFlags after fs.Parse.
//
// The flags are declared here and nowhere else: Args renders a Config back
// into them, so a run's reproducing command line (a matrix cell's, a gate's,
// a shrunk schedule's) is always one `torture run` accepts. The password has
// no flag: a command line is readable by every local user
// (/proc/PID/cmdline).
func BindFlags(fs *flag.FlagSet, c *Config) {
	d := Defaults()
	fs.StringVar(&c.Lock, "lock", "", "lock under test: "+strings.Join(locks.Names(), ", ")+", or exec:'COMMAND' (a client process speaking locks/clients/PROTOCOL.md)")
	fs.StringVar(&c.Backend, "backend", "", "where the nodes run: process (redis-server on this host; the default), docker (containers of --image) or external (--nodes host:port,... run by someone else; no kill, pause or clock faults)")
	fs.StringVar(&c.Image, "image", "", "docker backend: the image (default "+cluster.DefaultImage+", which make redis-image builds; nothing is pulled)")
	fs.StringVar(&c.Toxiproxy, "toxiproxy", "", "external backend: URL of the API of a toxiproxy server to reach the nodes through, for network faults (e.g. http://10.0.0.5:8474)")
	fs.Var(nodesFlag{c}, "nodes", "Redis nodes: a number (default 5 for redlock locks, 1 otherwise), or for --backend external their addresses, host:port,...")
	fs.StringVar(&c.Topology, "topology", "", "masters (independent nodes; the default), failover (primary, replica, three sentinels; single-instance locks) or cluster (Redis Cluster: --nodes/2 masters, default 3, each with a replica; process backend; setnx, redislock)")
	fs.BoolVar(&c.Persistence, "persistence", false, "run the nodes with appendfsync always (a killed node keeps its locks)")
	fs.StringVar(&c.Appendfsync, "appendfsync", "", "run the nodes persistent with this fsync policy: always (as --persistence) or everysec (Redis's default: a kill may lose the last second)")

	fs.IntVar(&c.Clients, "clients", 0, fmt.Sprintf("concurrent clients (default %d, or what a targeted fault kind asks for)", d.Clients))
	fs.IntVar(&c.Keys, "keys", 0, fmt.Sprintf("lock keys the clients contend for (default %d, or what a targeted fault kind asks for)", d.Keys))
	fs.DurationVar(&c.Duration, "duration", 0, fmt.Sprintf("how long clients run (default %s, or what a fault kind needs)", d.Duration))
	fs.DurationVar(&c.TTL, "ttl", 0, fmt.Sprintf("lock TTL (default %s, or what a targeted fault kind asks for)", d.TTL))
	fs.DurationVar(&c.Hold, "hold", 0, fmt.Sprintf("time spent inside the critical section; 0 for none (default %s, or what a targeted fault kind asks for); with --extend, the work of a cycle, which may be several TTLs", d.Hold))
	fs.DurationVar(&c.AcquireTimeout, "acquire-timeout", 0, "bound on one acquire call, retries included, and on one extend (default the TTL)")
	fs.DurationVar(&c.RetryDelay, "retry-delay", 0, "every client's delay between two attempts of an acquire and after a failed one, equal for all (default: the lock's random back-off, and up to TTL/20 after a failed acquire)")
	fs.BoolVar(&c.KeyPerClient, "key-per-client", false, "give each client a key of its own, so no two contend (a throughput measurement; --keys is then --clients)")
	fs.BoolVar(&c.Extend, "extend", false, "renew the lease while working: sections of at most --extend-every, an extend between two")
	fs.DurationVar(&c.ExtendEvery, "extend-every", 0, "with --extend, the work between two extends (default TTL/3)")
	fs.Int64Var(&c.Seed, "seed", 0, fmt.Sprintf("seed of the run's one random source (default %d)", d.Seed))
	fs.BoolVar(&c.Fencing, "fencing", false, "issue fencing tokens and have the resource check them")
	fs.BoolVar(&c.ClientProcess, "client-process", false, "run a Go lock in client processes of its own (torture client --lock NAME), which a fault can stop whole; client-stop and client-stop-random turn it on for a Go lock")
	fs.StringVar(&c.Store, "store", "", "with --fencing, where the resource checks the token: all (every access; the default) or write-only (writes only, Kleppmann's storage service)")
	fs.IntVar(&c.Quorum, "quorum", 0, "redlock: nodes that must grant (default ⌊N/2⌋+1, the Redis page's majority; the seed article's ⌈N/2⌉+1 is one more for an odd N)")
	fs.IntVar(&c.WaitReplicas, "wait-replicas", 0, "setnx on --topology failover or cluster: WAIT for this many replicas (1) after each granted SET, and hold only if they acknowledged it")

	fs.Var((*kindsFlag)(&c.Nemesis), "nemesis", "comma-separated fault kinds, or none (the default: no fault): "+strings.Join(kindNames(), ", "))
	fs.IntVar(&c.NemesisCompose, "nemesis-compose", 0, "the most fault kinds one step may hold at once (a partition with a clock jump, latency with a kill), drawn from the seed (default 1: one at a time)")
	fs.DurationVar(&c.NemesisInterval, "nemesis-interval", 0, fmt.Sprintf("quiet time between faults, and least time each stays active (default %s, or what a targeted fault kind asks for)", d.NemesisInterval))
	fs.DurationVar(&c.RestartDelay, "restart-delay", 0, "delay of the kill fault's delayed restarts (default 1.5×TTL)")
	fs.StringVar(&c.Restart, "restart", "", "how kill faults restart nodes: mixed (the default), immediate or delayed")
	fs.DurationVar(&c.LivenessBound, "liveness-bound", 0, "how long a key may stay free yet unacquired after the faults healed before liveness is stuck (default 3×TTL)")
	fs.StringVar(&c.Replay, "replay", "", "replay the faults of this schedule.json instead of drawing them from the seed")
}

// CheckFlags refuses, after fs.Parse, a flag whose value Config would read as
// "the default" or that is out of range; --hold 0 is Workload.NoHold.
func CheckFlags(fs *flag.FlagSet, c *Config) error {
	var err error
	positive := func(name string, d time.Duration) {
		if d <= 0 {
			err = fmt.Errorf("--%s must be positive, got %s", name, d)
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		switch f.Name {
		case "clients", "keys", "quorum", "nemesis-compose", "wait-replicas":
			least, want := 1, "be at least 1"
			switch f.Name {
			case "quorum":
				want += " (leave it out for a majority)"
			case "wait-replicas":
				least, want = 0, "not be negative"
			}
			if n := f.Value.(flag.Getter).Get().(int); n < least {
				err = fmt.Errorf("--%s must %s, got %d", f.Name, want, n)
			}
		case "seed":
			if c.Seed == 0 {
				err = errors.New("--seed must not be 0")
			}
		case "hold":
			switch {
			case c.Hold < 0:
				err = fmt.Errorf("--hold must not be negative, got %s", c.Hold)
			case c.Hold == 0:
				c.NoHold = true
			}
		case "duration", "ttl", "extend-every", "liveness-bound", "nemesis-interval", "acquire-timeout", "retry-delay":
			positive(f.Name, f.Value.(flag.Getter).Get().(time.Duration))
		case "restart-delay":
			if c.RestartDelay <= 0 {
				err = fmt.Errorf("--restart-delay must be positive, got %s (for restarts at once: --restart immediate)", c.RestartDelay)
			}
		}
	})
	return err
}

// Args renders c as the `torture run` flags that reproduce it: every non-zero
// field, in BindFlags's order (never the password).
func Args(c Config) []string {
	var zero Config
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	BindFlags(fs, &zero)
	zero = c // the flags' values now read c; their defaults are zero
	zero.Password = ""
	var out []string
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if v == f.DefValue {
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v == "true" {
				out = append(out, "--"+f.Name)
			}
			return
		}
		out = append(out, "--"+f.Name, quoteArg(v))
	})
	if c.NoHold {
		out = append(out, "--hold", "0s")
	}
	return out
}

// quoteArg quotes a value for a shell unless it holds only the characters of
// names, numbers, durations and addresses.
func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_.,:/+=@%µ", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var _ flag.Getter = (*kindsFlag)(nil)

// kindsFlag is --nemesis: comma-separated fault kinds, or none.
type kindsFlag []string

func (k *kindsFlag) String() string {
	if k == nil {
		return ""
	}
	return strings.Join(*k, ",")
}

func (k *kindsFlag) Set(s string) error {
	*k = nil
	if s == "" || s == "none" {
		return nil // no fault, as the matrix's none rows run
	}
	*k = strings.Split(s, ",")
	return nil
}

func (k *kindsFlag) Get() any { return []string(*k) }

// nodesFlag is --nodes: a number, or host:port,... for the external backend.
type nodesFlag struct{ cfg *Config }

func (f nodesFlag) String() string {
	switch {
	case f.cfg == nil:
		return ""
	case len(f.cfg.External) > 0:
		return strings.Join(f.cfg.External, ",")
	case f.cfg.Nodes == 0:
		return ""
	}
	return strconv.Itoa(f.cfg.Nodes)
}

func (f nodesFlag) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			// Config.Nodes 0 would be "the default".
			return fmt.Errorf("want at least 1 node, got %d", n)
		}
		f.cfg.Nodes, f.cfg.External = n, nil
		return nil
	}
	var addrs []string
	for a := range strings.SplitSeq(s, ",") {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("want a number or host:port,...: %q: %v", a, err)
		}
		addrs = append(addrs, a)
	}
	f.cfg.Nodes, f.cfg.External = len(addrs), addrs
	return nil
}

// kindNames are the names of the fault kinds, in their order.
func kindNames() []string {
	var names []string
	for _, k := range nemesis.Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// CommandLine is the `torture run` command that reproduces c (Args).
func CommandLine(c Config) string {
	return strings.Join(append([]string{"torture", "run"}, Args(c)...), " ")
}
