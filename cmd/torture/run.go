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
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/shrink"
	"github.com/locktorture/locktorture/trial"
)

func runCmd(fs *flag.FlagSet) runFunc {
	// Every configuration flag is the harness's (harness.BindFlags); a zero
	// is "the default".
	var cfg harness.Config
	harness.BindFlags(fs, &cfg)
	out := fs.String("out", filepath.Join("results", "runs"), "directory under which the run directory is created")
	timeout := fs.Duration("check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 0 {
			return fmt.Errorf("run: unexpected argument %q (see torture run -h)", fs.Arg(0))
		}
		if err := harness.CheckFlags(fs, &cfg); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		if *timeout <= 0 {
			return fmt.Errorf("run: --check-timeout must be positive, got %s", *timeout)
		}
		if cfg.Lock == "" {
			cfg.Lock = "setnx"
		}
		cfg.Password = os.Getenv(passwordEnv)
		// Validated once, before the run directory is made: the plan is what
		// runs.
		plan, err := harness.NewPlan(cfg)
		if errors.Is(err, locks.ErrUnknownLock) {
			return fmt.Errorf("%w; a lock of your own runs from a main of your own that registers it (locks.Register; docs/your-lock.md), or as exec:COMMAND (locks/clients/PROTOCOL.md)", err)
		}
		if err != nil {
			return err
		}
		full := plan.Config()
		id, dir, err := newRunDir(*out, time.Now(), full.Lock, full.Seed)
		if err != nil {
			return err
		}
		faults := "no faults"
		if len(full.Nemesis) > 0 {
			faults = "nemesis " + strings.Join(full.Nemesis, ",")
		}
		if full.Replay != "" {
			faults = fmt.Sprintf("replaying %s (%s)", full.Replay, strings.Join(full.Nemesis, ","))
		}
		fmt.Fprintf(stderr, "run %s: %s, %d clients, %d keys, TTL %s, hold %s, %s, seed %d, %s → %s\n", id, report.Printable(full.Lock), full.Clients, full.Keys,
			full.TTL, full.Hold, full.Duration, full.Seed, faults, dir)

		prog := newProgress(stderr)
		r, err := trial.Run(ctx, plan, dir, trial.Options{ID: id, Command: harness.CommandLine(cfg), CheckTimeout: *timeout,
			Progress: prog.update, Log: logLines{prog}})
		prog.done()
		if r.RunID == "" {
			return err
		}
		if r.Interrupted {
			fmt.Fprintf(stderr, "interrupted after %.1fs; what was recorded is checked below\n", r.Elapsed)
		}
		// What the targeted faults struck, and whether each left a window.
		for _, s := range r.Strikes {
			line := fmt.Sprintf("aimed step %d (%s): %s", s.Step, s.Outcome, report.Printable(s.Desc))
			if s.Why != "" {
				line += "; " + report.Printable(s.Why)
			}
			fmt.Fprintln(stderr, line)
		}
		fmt.Fprintf(stderr, "trials: %s\nmachine health: %s\n", r.Trials.Text(), report.HealthText(r.Health))
		report.Summary(stdout, fmt.Sprintf("%s (%d events) → %s", id, r.Check.Stats.Events, dir), r.Check, r.Findings)
		if err != nil {
			return err
		}
		return verdictErr(r.Check)
	}
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

// newRunDir creates a fresh run directory under out (safefs.Fresh).
func newRunDir(out string, t time.Time, lock string, seed int64) (id, dir string, err error) {
	base := fmt.Sprintf("%s-%s-seed%d", t.UTC().Format("20060102T150405"), pathName(lock), seed)
	if id, dir, err = safefs.Fresh(out, base); err != nil {
		return "", "", fmt.Errorf("run: %w", err)
	}
	return id, dir, nil
}

// pathName is lock as one safe path element: a registered name as it is;
// anything else (an exec: command line, with slashes, spaces, quotes) as at
// most 48 of its safe characters, the rest turned to '-', and a hash of the
// whole, so two commands never share a name.
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

// passwordEnv holds the external nodes' password. There is no flag for
// it: a command line is readable by every local user (/proc/PID/cmdline),
// a process's environment only by its own user.
const passwordEnv = "LOCKTORTURE_PASSWORD"

// clientCmd is `torture client --lock NAME`: a client process serving the
// registered Go lock NAME over locks/clients/PROTOCOL.md on stdin and stdout
// (locks.Serve) until its input ends, as --client-process starts it
// (locks.AsProcess).
func clientCmd(fs *flag.FlagSet) runFunc {
	name := fs.String("lock", "", "the registered Go lock to serve: "+goLocks())
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		switch {
		case fs.NArg() > 0:
			return fmt.Errorf("client: unexpected argument %q (see torture client -h)", fs.Arg(0))
		case *name == "":
			return errors.New("client: --lock is required (see torture client -h)")
		}
		spec, err := locks.Lookup(*name)
		switch {
		case err != nil:
			return fmt.Errorf("client: %w", err)
		case spec.Process:
			return fmt.Errorf("client: %s runs in client processes of its own; a client process serves a Go lock (%s)", *name, goLocks())
		}
		return locks.Serve(ctx, *name, os.Stdin, stdout)
	}
}

// goLocks names the registered locks that run in this process, which a client
// process can serve.
func goLocks() string {
	s := ""
	for _, sp := range locks.Specs() {
		if sp.Process {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += sp.Name
	}
	return s
}

// shrinkCmd is `torture shrink RUN` (shrink.Run): the fewest fault steps,
// then the shortest duration, that still reproduce a violation within --tries
// replays, written as RUN/minimal.json (or minimal-1.json, …) with the
// command that replays it.
func shrinkCmd(fs *flag.FlagSet) runFunc {
	var o shrink.Options
	fs.IntVar(&o.Tries, "tries", 3, "replays of each candidate schedule; it reproduces when one of them violates")
	fs.DurationVar(&o.CheckTimeout, "check-timeout", checker.DefaultTimeout, "porcupine time limit per model (exceeded: verdict unknown)")
	fs.StringVar(&o.Lock, "lock", "", "the stored lock, named again: needed to replay a client process (exec:...), which shrink never runs unasked")
	fs.StringVar(&o.Backend, "backend", "", "the stored backend, named again: needed to replay on an external backend or a docker image other than the default")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		o.Log = stderr
		if fs.NArg() != 1 {
			return fmt.Errorf("shrink: want one run directory, got %d arguments (see torture shrink -h)", fs.NArg())
		}
		res, err := shrink.Run(ctx, fs.Arg(0), o)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d of %d fault steps reproduce a violation within %d tries, over %s (%d replays):\n", len(res.Keep), len(res.Schedule.Steps), o.Tries, res.Duration, res.Replays)
		for _, i := range res.Keep {
			st := res.Schedule.Steps[i]
			fmt.Fprintf(stdout, "  step %d at %s for %s: %s\n", i, time.Duration(st.At), time.Duration(st.For), report.Printable(st.Desc))
		}
		fmt.Fprintf(stdout, "written to %s; replay it with:\n  %s\n", res.Minimal, report.Printable(harness.CommandLine(res.Replay)))
		return nil
	}
}
