package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/report"
)

// gateRun is one `torture gate --lock L` beside Hogs busy CPU hogs.
type gateRun struct {
	Lock    string        `json:"lock"`
	Hogs    int           `json:"hogs"`
	Args    []string      `json:"args"`
	Wall    time.Duration `json:"wall"`
	CPU     time.Duration `json:"cpu"` // user + system, the gate process and its children
	PeakRSS int64         `json:"peak_rss"`
	Exit    int           `json:"exit"`
	// From its gate.json:
	Status   string  `json:"status"`
	Cells    int     `json:"cells"`
	Runs     int     `json:"runs"`
	Duration string  `json:"duration"`
	Rate     float64 `json:"rate"`
	Need     int     `json:"trials_needed"`
	// Short names the promise cells short of Need trials; PerMinute is
	// the promise cells' median trials per minute of runs, Slowest the
	// cell with the fewest (and its figure).
	Short     []string `json:"short,omitempty"`
	PerMinute float64  `json:"trials_per_minute"`
	Slowest   string   `json:"slowest,omitempty"`
	// Violated lists the cells with a violation, as "cell k/n";
	// Mismatched the cells whose outcome did not match.
	Violated   []string `json:"violated,omitempty"`
	Mismatched []string `json:"mismatched,omitempty"`
	Err        string   `json:"err,omitempty"`
}

// matrixRun is one `torture matrix --quick` at --jobs Jobs.
type matrixRun struct {
	Jobs     int           `json:"jobs"`
	Wall     time.Duration `json:"wall"`
	Cells    int           `json:"cells"`
	Matching int           `json:"matching"`
	Exit     int           `json:"exit"`
	Err      string        `json:"err,omitempty"`
}

// gateFigures is what the gate part measures.
type gateFigures struct {
	Gates  []gateRun   `json:"gates"`
	Matrix []matrixRun `json:"matrix"`
}

// runGate builds ./cmd/torture and runs `torture gate` on each of
// -gate-locks beside each of -gate-hogs, then `torture matrix --quick`
// at each of -matrix-jobs.
func runGate(ctx context.Context, e *benchEnv, r *results) error {
	exe := filepath.Join(e.tmp, "torture")
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, "./cmd/torture")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/torture: %w: %s", err, out)
	}
	r.Gate = &gateFigures{}
	hogs, err := intList(e.o.gateHogs)
	if err != nil {
		return fmt.Errorf("-gate-hogs: %w", err)
	}
	for _, h := range hogs {
		for _, lock := range strings.Split(e.o.gateLocks, ",") {
			lock = strings.TrimSpace(lock)
			g, err := gateOnce(ctx, e, exe, lock, h)
			if err != nil {
				return err
			}
			r.Gate.Gates = append(r.Gate.Gates, g)
		}
	}
	jobs, err := intList(e.o.matrixJobs)
	if err != nil {
		return fmt.Errorf("-matrix-jobs: %w", err)
	}
	for _, j := range jobs {
		m, err := matrixOnce(ctx, e, exe, j)
		if err != nil {
			return err
		}
		r.Gate.Matrix = append(r.Gate.Matrix, m)
	}
	return ctx.Err()
}

// intList parses "0,4,8".
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// timed runs exe with args beside hogs CPU hogs (busy shell loops, one
// CPU each): its wall time, process state and stderr.
func timed(ctx context.Context, exe string, args []string, hogs int) (time.Duration, *os.ProcessState, string, error) {
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range hogs {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			return 0, nil, "", fmt.Errorf("start a CPU hog: %w", err)
		}
		cmds = append(cmds, c)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return wall, nil, stderr.String(), err
	}
	return wall, cmd.ProcessState, stderr.String(), nil
}

// gateOnce runs one gate of lock beside hogs CPU hogs.
func gateOnce(ctx context.Context, e *benchEnv, exe, lock string, hogs int) (gateRun, error) {
	out := filepath.Join(e.tmp, fmt.Sprintf("gate-%s-hogs%d", lock, hogs))
	args := []string{"gate", "--lock", lock}
	g := gateRun{Lock: lock, Hogs: hogs, Args: args}
	e.logf("torture %s, %d CPU hogs beside it", strings.Join(args, " "), hogs)
	wall, ps, stderr, err := timed(ctx, exe, append(args, "--out", out), hogs)
	if err != nil {
		return g, err
	}
	g.Wall = wall
	g.CPU = ps.UserTime() + ps.SystemTime()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		g.PeakRSS = ru.Maxrss << 10
	}
	g.Exit = ps.ExitCode()
	if err := readGate(out, &g); err != nil {
		g.Err = err.Error() + ": " + lastLine(stderr)
	}
	e.logf("gate %s beside %d hogs: exit %d, %s in %v, %d runs, median %.1f trials a minute", lock, hogs, g.Exit, g.Status, g.Wall.Round(time.Second), g.Runs, g.PerMinute)
	return g, nil
}

// matrixOnce runs make torture's matrix (quick, one seed) at jobs.
func matrixOnce(ctx context.Context, e *benchEnv, exe string, jobs int) (matrixRun, error) {
	out := filepath.Join(e.tmp, fmt.Sprintf("matrix-jobs%d", jobs))
	args := []string{"matrix", "--quick", "--seeds", "1", "--jobs", strconv.Itoa(jobs), "--out", out}
	m := matrixRun{Jobs: jobs}
	e.logf("torture %s", strings.Join(args, " "))
	wall, ps, stderr, err := timed(ctx, exe, args, 0)
	if err != nil {
		return m, err
	}
	m.Wall, m.Exit = wall, ps.ExitCode()
	var sum report.Matrix
	if err := readJSONUnder(out, "summary.json", &sum); err != nil {
		m.Err = err.Error() + ": " + lastLine(stderr)
	}
	m.Cells = len(sum.Cells)
	for _, c := range sum.Cells {
		if c.Matches {
			m.Matching++
		}
	}
	e.logf("matrix at jobs %d: %d of %d cells matching in %v", jobs, m.Matching, m.Cells, m.Wall.Round(time.Second))
	return m, nil
}

// readJSONUnder decodes the one file name found in dir or a folder of it.
func readJSONUnder(dir, name string, v any) error {
	m, _ := filepath.Glob(filepath.Join(dir, name))
	if len(m) == 0 {
		m, _ = filepath.Glob(filepath.Join(dir, "*", name))
	}
	if len(m) != 1 {
		return fmt.Errorf("%d %s under %s", len(m), name, dir)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// readGate reads the gate.json under dir into g.
func readGate(dir string, g *gateRun) error {
	var res gate.Result
	if err := readJSONUnder(dir, "gate.json", &res); err != nil {
		return err
	}
	g.Status, g.Cells, g.Duration, g.Rate, g.Need = string(res.Status), len(res.Cells), res.Duration, res.Rate, res.Need
	d, _ := time.ParseDuration(res.Duration)
	var perMin []float64
	slowest := -1.0
	for _, c := range res.Cells {
		g.Runs += c.Runs
		if c.Violated > 0 {
			g.Violated = append(g.Violated, fmt.Sprintf("%s %d/%d", c.Name, c.Violated, c.Runs))
		}
		if !c.Matches {
			g.Mismatched = append(g.Mismatched, c.Name)
		}
		if c.Outcome != checker.OutcomeSafe || c.Runs == 0 || d <= 0 {
			continue // an expected violation stops at its first
		}
		if c.Trials < res.Need {
			g.Short = append(g.Short, c.Name)
		}
		pm := float64(c.Trials) / (float64(c.Runs) * d.Minutes())
		perMin = append(perMin, pm)
		if slowest < 0 || pm < slowest {
			slowest, g.Slowest = pm, fmt.Sprintf("%s (%.0f)", c.Name, pm)
		}
	}
	if len(perMin) > 0 {
		slices.Sort(perMin)
		g.PerMinute = perMin[len(perMin)/2]
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func (r *results) gateSection(p func(string, ...any)) {
	if r.Gate == nil {
		return
	}
	p("`torture gate --lock L` run as a release engineer runs it (its defaults: runs side by side as the machine holds them, more seeds of a promise cell until its trials exclude a per-trial violation rate of 25 %%, within a budget of 5 minutes), ")
	p("idle and with busy CPU hogs beside it (`sh -c 'while :; do :; done'`, one CPU each, on top of whatever else the machine ran: see the load averages above). ")
	p("Wall time from start to exit; CPU (user + system) and peak RSS of the gate process. A promise cell's trials per minute are its trials over the minutes of its runs. ")
	p("Target: every gate PASS within 3 minutes, the same verdict beside the hogs, never a false alarm (exit 1).\n\n")
	p("| lock | CPU hogs | wall | runs | exit | status | trials a minute, median cell | fewest | cells short of the trials | cells with a violation (runs) | CPU | peak RSS |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, g := range r.Gate.Gates {
		short := cmp.Or(strings.Join(g.Short, ", "), "none") + errNote(g.Err)
		viol := cmp.Or(strings.Join(g.Violated, ", "), "none")
		p("| %s | %d | %.0f s | %d | %d | %s | %.1f | %s | %s | %s | %.1f s | %.0f MiB |\n", g.Lock, g.Hogs, g.Wall.Seconds(), g.Runs, g.Exit, g.Status,
			g.PerMinute, g.Slowest, short, viol, g.CPU.Seconds(), mib(g.PeakRSS))
	}
	if len(r.Gate.Matrix) > 0 {
		p("\n`make torture`'s matrix (`torture matrix --quick --seeds 1 --jobs J`, no hogs) at each number of runs side by side (0: the default, as many as the machine holds):\n\n")
		p("| jobs | wall | cells matching | exit |\n|---|---|---|---|\n")
		for _, m := range r.Gate.Matrix {
			p("| %d | %.0f s | %d of %d | %d%s |\n", m.Jobs, m.Wall.Seconds(), m.Matching, m.Cells, m.Exit, errNote(m.Err))
		}
	}
}

func errNote(err string) string {
	if err == "" {
		return ""
	}
	return " (" + strings.ReplaceAll(err, "|", "/") + ")"
}
