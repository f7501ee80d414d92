package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	// Every default is harness's (harness.Defaults), stated once there.
	cfg := harness.Defaults()
	fs.StringVar(&cfg.Lock, "lock", "setnx", "lock under test: "+strings.Join(locks.Names(), ", ")+", or exec:'COMMAND' (a client process speaking locks/clients/PROTOCOL.md)")
	addBackendFlags(fs, &cfg) // --backend, --image, --toxiproxy, --password, --nodes
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "lock keys the clients contend for")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long clients run")
	fs.DurationVar(&cfg.TTL, "ttl", cfg.TTL, "lock TTL")
	fs.DurationVar(&cfg.Hold, "hold", cfg.Hold, "time spent inside the critical section (0: none); with --extend, the work of a cycle, which may be several TTLs")
	fs.BoolVar(&cfg.Extend, "extend", false, "renew the lease while working: sections of at most --extend-every, an extend between two")
	fs.DurationVar(&cfg.ExtendEvery, "extend-every", 0, "with --extend, the work between two extends (default TTL/3)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the run's one random source")
	fs.BoolVar(&cfg.Fencing, "fencing", false, "issue fencing tokens and have the resource check them")
	fs.BoolVar(&cfg.ClientProcess, "client-process", false, "run a Go lock in client processes of its own (torture client --lock NAME), which client-stop can stop whole")
	fs.IntVar(&cfg.WaitReplicas, "wait-replicas", 0, "setnx on --topology failover: WAIT for this many replicas (1) after each granted SET, and hold only if they acknowledged it")
	fs.IntVar(&cfg.Quorum, "quorum", 0, "redlock: nodes that must grant (default ⌊N/2⌋+1, the Redis page's majority; the seed article's ⌈N/2⌉+1 is one more for an odd N)")
	fs.StringVar(&cfg.Store, "store", harness.StoreAll, "with --fencing, where the resource checks the token: all (every access) or write-only (writes only, Kleppmann's storage service)")
	nem := fs.String("nemesis", "", "comma-separated fault kinds: "+strings.Join(nemesisNames(), ", "))
	fs.DurationVar(&cfg.NemesisInterval, "nemesis-interval", cfg.NemesisInterval, "quiet time between faults, and least time each stays active")
	fs.DurationVar(&cfg.RestartDelay, "restart-delay", 0, "delay of the kill fault's delayed restarts (default 1.5×TTL)")
	fs.StringVar(&cfg.Restart, "restart", cfg.Restart, "how kill faults restart nodes: mixed, immediate or delayed")
	fs.BoolVar(&cfg.Persistence, "persistence", false, "run the nodes with appendfsync always (a killed node keeps its locks)")
	fs.StringVar(&cfg.Appendfsync, "appendfsync", "", "run the nodes persistent with this fsync policy: always (as --persistence) or everysec (Redis's default: a kill may lose the last second)")
	fs.StringVar(&cfg.Topology, "topology", cfg.Topology, "masters (independent nodes) or failover (primary, replica, three sentinels; single-instance locks)")
	fs.DurationVar(&cfg.LivenessBound, "liveness-bound", 0, "how long a key may stay free yet unacquired after the faults healed before liveness is stuck (default 3×TTL)")
	fs.StringVar(&cfg.Replay, "replay", "", "replay the faults of this schedule.json instead of drawing them from the seed")
	out := fs.String("out", filepath.Join("results", "runs"), "directory under which the run directory is created")
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q (see torture run -h)", fs.Arg(0))
	}
	if cfg.Seed == 0 {
		return errors.New("run: --seed must not be 0")
	}
	if cfg.Duration <= 0 || cfg.TTL <= 0 {
		return errors.New("run: --duration and --ttl must be positive")
	}
	// harness.Config takes 0 for "the default"; a 0 given on the command
	// line is not a request for the default, and is refused like any
	// value out of range (the banner would print it, the run would not
	// use it).
	if err := checkGiven(fs, &cfg, *timeout); err != nil {
		return err
	}
	if *nem != "" {
		cfg.Nemesis = strings.Split(*nem, ",")
	}
	// Validated once, before the run directory is made: the plan is what
	// runs (the kinds of a replayed schedule included).
	plan, err := harness.NewPlan(cfg)
	if err != nil {
		return err
	}
	full := plan.Config()
	id, dir, err := newRunDir(*out, time.Now(), cfg.Lock, cfg.Seed)
	if err != nil {
		return err
	}
	faults := "no faults"
	if len(cfg.Nemesis) > 0 {
		faults = "nemesis " + strings.Join(cfg.Nemesis, ",")
	}
	if cfg.Replay != "" {
		faults = fmt.Sprintf("replaying %s (%s)", cfg.Replay, strings.Join(full.Nemesis, ","))
	}
	fmt.Fprintf(stderr, "run %s: %s, %d clients, %d keys, %s, seed %d, %s → %s\n", id, cfg.Lock, cfg.Clients, cfg.Keys, cfg.Duration, cfg.Seed, faults, dir)

	prog := newProgress(stderr)
	r, err := matrix.RunOne(ctx, plan, dir, id, "torture run "+strings.Join(redactArgs(args), " "), *timeout, harness.WithProgress(time.Second, prog.update), harness.WithLog(logLines{prog}))
	prog.done()
	if r.RunID == "" {
		return err
	}
	if r.Interrupted {
		fmt.Fprintf(stderr, "interrupted after %.1fs; what was recorded is checked below\n", r.Elapsed)
	}
	// What the targeted faults struck (#14).
	if aimed, aerr := nemesis.Aimed(filepath.Join(dir, "schedule.json")); aerr == nil {
		for _, a := range aimed {
			fmt.Fprintf(stderr, "aimed %s\n", a)
		}
	}
	report.Summary(stdout, fmt.Sprintf("%s (%d events) → %s", id, r.Check.Stats.Events, dir), r.Check)
	if err != nil {
		return err
	}
	return verdictErr(r.Check)
}

// checkGiven refuses the flags given a value out of their range, 0
// included where harness.Config would read 0 as "the default": --clients,
// --keys, --extend-every, --nemesis-interval, --restart-delay and --check-timeout must be
// positive (--nodes is checked as it is parsed). --hold 0 is a hold of
// nothing (Config.NoHold).
func checkGiven(fs *flag.FlagSet, cfg *harness.Config, timeout time.Duration) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		switch f.Name {
		case "clients":
			if cfg.Clients < 1 {
				err = fmt.Errorf("run: --clients must be at least 1, got %d", cfg.Clients)
			}
		case "keys":
			if cfg.Keys < 1 {
				err = fmt.Errorf("run: --keys must be at least 1, got %d", cfg.Keys)
			}
		case "hold":
			switch {
			case cfg.Hold < 0:
				err = fmt.Errorf("run: --hold must not be negative, got %s", cfg.Hold)
			case cfg.Hold == 0:
				cfg.NoHold = true
			}
		case "extend-every":
			if cfg.ExtendEvery <= 0 {
				err = fmt.Errorf("run: --extend-every must be positive, got %s", cfg.ExtendEvery)
			}
		case "liveness-bound":
			if cfg.LivenessBound <= 0 {
				err = fmt.Errorf("run: --liveness-bound must be positive, got %s", cfg.LivenessBound)
			}
		case "nemesis-interval":
			if cfg.NemesisInterval <= 0 {
				err = fmt.Errorf("run: --nemesis-interval must be positive, got %s", cfg.NemesisInterval)
			}
		case "restart-delay":
			if cfg.RestartDelay <= 0 {
				err = fmt.Errorf("run: --restart-delay must be positive, got %s (for restarts at once: --restart immediate)", cfg.RestartDelay)
			}
		case "check-timeout":
			if timeout <= 0 {
				err = fmt.Errorf("run: --check-timeout must be positive, got %s", timeout)
			}
		}
	})
	return err
}

// verdictErr maps the verdicts to the error that gives the exit status.
func verdictErr(res checker.Result) error {
	switch res.Outcome() {
	case checker.OutcomeViolation:
		return errViolation
	case checker.OutcomeUnknown:
		return errUnknown
	}
	return nil
}

// newRunDir creates a fresh run directory under out.
func newRunDir(out string, t time.Time, lock string, seed int64) (id, dir string, err error) {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", "", fmt.Errorf("run: %w", err)
	}
	base := fmt.Sprintf("%s-%s-seed%d", t.UTC().Format("20060102T150405"), pathName(lock), seed)
	for i := 0; ; i++ {
		id = base
		if i > 0 {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		dir = filepath.Join(out, id)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return id, dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", "", fmt.Errorf("run: %w", err)
		}
	}
}

// pathName is lock as one safe path element: a registered name as it is
// (letters, digits and -_.), anything else — an exec: lock's command line,
// with its slashes, spaces and quotes — as its safe characters, the rest
// turned to '-', at most 48 of them, and a hash of the whole name so that
// two commands never share a name.
func pathName(lock string) string {
	safe := func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.'
	}
	if lock != "" && strings.IndexFunc(lock, func(r rune) bool { return !safe(r) }) < 0 && strings.Trim(lock, ".") != "" {
		return lock
	}
	var b strings.Builder
	for _, r := range lock {
		switch {
		case b.Len() >= 48:
		case safe(r) && r != '.':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(lock))
	return fmt.Sprintf("%s-%08x", strings.Trim(b.String(), "-"), h.Sum32())
}

func nemesisNames() []string {
	var names []string
	for _, k := range nemesis.Kinds() {
		names = append(names, k.Name)
	}
	return names
}
