package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/locktorture/locktorture/envelope"
	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/matrix"
)

// envelopeCmd is torture envelope: where locks' safety ends along one fault
// parameter.
func envelopeCmd(fs *flag.FlagSet) runFunc {
	var faults []string
	for _, f := range envelope.Faults {
		faults = append(faults, fmt.Sprintf("%s (--param %s: %s)", f.Name, f.Param, f.Doc))
	}
	lockList := fs.String("lock", "", "locks to compare, comma-separated (e.g. setnx,redlock)")
	fault := fs.String("fault", "", "the fault to size: "+strings.Join(faults, "; "))
	param := fs.String("param", "", "the swept parameter (default: the fault's own; see --fault)")
	from := fs.Float64("from", 0.5, "the sweep's first value, in TTLs (for --fault drift a rate: 0.02 is 2% fast)")
	to := fs.Float64("to", 1.5, "the sweep's last value, in TTLs (for --fault drift a rate)")
	points := fs.Int("points", 6, "points of the sweep, evenly spaced")
	bisect := fs.Int("bisect", 3, "bisection steps between the last point without a violation and the first with one")
	seeds := fs.String("seeds", "1..3", "seeds every point runs with, one run each: comma-separated, each a number or a range a..b (as everywhere)")
	duration := fs.Duration("duration", 6*time.Second, "duration of every run")
	ttl := fs.Duration("ttl", 500*time.Millisecond, "lock TTL")
	hold := fs.Duration("hold", 100*time.Millisecond, "time inside the critical section")
	clients := fs.Int("clients", 6, "concurrent clients, all on one key")
	out := fs.String("out", "results/envelope", "directory under which the envelope's directory is created")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 0 {
			return fmt.Errorf("envelope: unexpected argument %q", fs.Arg(0))
		}
		seedList, err := matrix.ParseSeeds(*seeds)
		if err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
		f, err := envelope.Lookup(*fault, *param)
		if err != nil {
			return err
		}
		locks := strings.Split(*lockList, ",")
		if *lockList == "" {
			locks = nil
		}
		o := envelope.Options{
			Locks: locks, Fault: f, From: *from, To: *to, Points: *points, Bisect: *bisect, Seeds: seedList,
			Duration: *duration, TTL: *ttl, Hold: *hold, Clients: *clients,
			Progress: func(s string) { fmt.Fprintln(stderr, "  "+s) },
		}
		// Checked before its folder is made: a refused envelope leaves none.
		if err := o.Check(); err != nil {
			return err
		}
		_, dir, err := safefs.Fresh(*out, fmt.Sprintf("%s-%s-%s", time.Now().UTC().Format("20060102T150405"), strings.Join(locks, "+"), f.Name))
		if err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
		o.Dir = dir
		fmt.Fprintf(stderr, "envelope %s of %s, %s ÷ TTL %g..%g → %s\n", f.Name, strings.Join(locks, ","), f.Param, *from, *to, dir)
		res, err := envelope.Run(ctx, o)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, envelope.Table(res))
		fmt.Fprintf(stdout, "\n%s\n", filepath.Join(dir, "envelope.svg"))
		return nil
	}
}
