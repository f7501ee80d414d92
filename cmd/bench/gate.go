package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// gateRun is one `torture gate --lock L` of the gate part: how long it
// took, its CPU and memory, and what it decided.
type gateRun struct {
	Lock    string        `json:"lock"`
	Args    []string      `json:"args"`
	Wall    time.Duration `json:"wall"`
	CPU     time.Duration `json:"cpu"` // user + system, the gate process and its children
	PeakRSS int64         `json:"peak_rss"`
	Exit    int           `json:"exit"`
	// From its gate.json:
	Status   string  `json:"status"`
	Cells    int     `json:"cells"`
	Seeds    []int64 `json:"seeds"`
	Duration string  `json:"duration"`
	Expected float64 `json:"expected_seconds"`
	Scaled   string  `json:"scaled,omitempty"`
	// Violated lists the cells with a violation, as "cell k/n".
	Violated []string `json:"violated,omitempty"`
	// Mismatched lists the cells whose outcome did not match, and Why,
	// for each, the promise broken or what went wrong (its gate.json's).
	Mismatched []string `json:"mismatched,omitempty"`
	Why        []string `json:"why,omitempty"`
	Err        string   `json:"err,omitempty"`
}

// runGate builds bin/torture's command into the temporary directory and
// runs `torture gate` on each lock of -gate-locks, one after the other.
func runGate(ctx context.Context, e *benchEnv, r *results) error {
	exe := filepath.Join(e.tmp, "torture")
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, "./cmd/torture")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/torture: %w: %s", err, out)
	}
	for _, lock := range strings.Split(e.o.gateLocks, ",") {
		lock = strings.TrimSpace(lock)
		out := filepath.Join(e.tmp, "gate-"+lock)
		args := []string{"gate", "--lock", lock, "--seeds", e.o.gateSeeds, "--budget", e.o.gateBudget.String()}
		g := gateRun{Lock: lock, Args: args}
		cmd := exec.CommandContext(ctx, exe, append(args, "--out", out)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		e.logf("torture %s", strings.Join(args, " "))
		start := time.Now()
		err := cmd.Run()
		g.Wall = time.Since(start)
		if ps := cmd.ProcessState; ps != nil {
			g.CPU = ps.UserTime() + ps.SystemTime()
			if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
				g.PeakRSS = ru.Maxrss << 10
			}
			g.Exit = ps.ExitCode()
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return err
		}
		if err := readGate(out, &g); err != nil {
			g.Err = err.Error() + ": " + lastLine(stderr.String())
		}
		e.logf("gate %s: exit %d, %s in %v, CPU %v, peak RSS %d MiB", lock, g.Exit, g.Status, g.Wall.Round(time.Second), g.CPU.Round(time.Second), g.PeakRSS>>20)
		r.Gate = append(r.Gate, g)
	}
	return ctx.Err()
}

// readGate reads the gate.json under dir into g.
func readGate(dir string, g *gateRun) error {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "gate.json"))
	if len(m) != 1 {
		return fmt.Errorf("%d gate.json under %s", len(m), dir)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		return err
	}
	var res struct {
		Seeds    []int64 `json:"seeds"`
		Duration string  `json:"duration"`
		Expected float64 `json:"expected_seconds"`
		Scaled   string  `json:"scaled"`
		Status   string  `json:"status"`
		Cells    []struct {
			Name     string `json:"name"`
			Violated int    `json:"runs_with_violation"`
			Runs     int    `json:"runs"`
			Matches  bool   `json:"matches"`
			Broken   string `json:"broken"`
			Why      string `json:"why"`
			First    string `json:"first_violation"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	g.Status, g.Cells, g.Seeds, g.Duration, g.Expected, g.Scaled = res.Status, len(res.Cells), res.Seeds, res.Duration, res.Expected, res.Scaled
	for _, c := range res.Cells {
		if c.Violated > 0 {
			g.Violated = append(g.Violated, fmt.Sprintf("%s %d/%d", c.Name, c.Violated, c.Runs))
		}
		if !c.Matches {
			g.Mismatched = append(g.Mismatched, c.Name)
			why := c.Why
			if c.Broken != "" {
				why = c.Broken + " promise broken"
				if c.First != "" {
					why += ": " + c.First
				}
			}
			g.Why = append(g.Why, c.Name+": "+why)
		}
	}
	return nil
}

func lastLine(s string) string {
	l := lines(s)
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}

func (r *results) gateSection(p func(string, ...any)) {
	p("`torture gate --lock L` run as a lock author runs it (the command built into a temporary directory, one gate at a time, each gate's runs one at a time), ")
	p("with `--seeds %s --budget %v` to keep `make bench` short (a release gate runs seeds 1,2,3 within 5 minutes: `-gate-seeds 1,2,3 -gate-budget 5m`). ", r.Opts.gateSeeds, r.Opts.gateBudget)
	p("Wall time from start to exit; CPU (user + system) and peak RSS of the gate process, which runs the clients, the proxies and the checker (its redis-servers are children: their CPU is counted when they are reaped, their memory not). ")
	p("Target: a gate within its budget, every cell matching its expectation.\n\n")
	p("| lock | cells × seeds | run length | expected by the budget | wall | CPU | peak RSS | exit | status | cells with a violation (runs) | cells not matching |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, g := range r.Gate {
		viol, mis := strings.Join(g.Violated, ", "), strings.Join(g.Mismatched, ", ")
		if viol == "" {
			viol = "none"
		}
		if mis == "" {
			mis = "none"
		}
		if g.Err != "" {
			mis += " (" + strings.ReplaceAll(g.Err, "|", "/") + ")"
		}
		p("| %s | %d × %d | %s | %s | %.1f s | %.1f s | %.0f MiB | %d | %s | %s | %s |\n", g.Lock, g.Cells, len(g.Seeds), g.Duration,
			time.Duration(g.Expected*float64(time.Second)).Round(time.Second), g.Wall.Seconds(), g.CPU.Seconds(), mib(g.PeakRSS), g.Exit, g.Status, viol, mis)
	}
	for _, g := range r.Gate {
		if g.Scaled != "" {
			p("\n%s: scaled to the budget: %s\n", g.Lock, g.Scaled)
		}
	}
	for _, g := range r.Gate {
		if len(g.Why) > 0 {
			p("\nThe cells of %s that did not match, as its gate.json gives them:\n\n", g.Lock)
			for _, w := range g.Why {
				p("- %s\n", strings.ReplaceAll(w, "\n", " "))
			}
		}
	}
}
