package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/report"
	"github.com/locktorture/locktorture/trial"
)

// checkRow is one line of part 2.
type checkRow struct {
	Ops       int    `json:"ops"`
	Events    int    `json:"events"`
	Violation bool   `json:"violation"`
	Mode      string `json:"mode"` // "stream" or "run"
	FileBytes int64  `json:"file_bytes"`
	// Decode is one pass of history.Decoder over the file, nothing else;
	// Total is decode + check.
	Decode  time.Duration   `json:"decode"`
	Total   time.Duration   `json:"total"`
	Timings checker.Timings `json:"timings"`
	// PeakRSS is the child process's maximum resident set (VmHWM), bytes.
	PeakRSS int64 `json:"peak_rss"`
	// PeakHeap is the largest HeapInuse sampled every 10 ms, bytes.
	PeakHeap uint64          `json:"peak_heap"`
	Lease    checker.Verdict `json:"lease"`
	Resource checker.Verdict `json:"resource"`
	// FirstLease and FirstResource are the violation times the checker
	// reported; Injected the time the generator put the overlap at.
	FirstLease    *int64 `json:"first_lease,omitempty"`
	FirstResource *int64 `json:"first_resource,omitempty"`
	Injected      int64  `json:"injected"`
	Err           string `json:"err,omitempty"`
}

// kind is the row's history as the tables name it.
func (c checkRow) kind() string {
	if c.Violation {
		return "late violation"
	}
	return "valid"
}

// checkChild is "check-one": it checks one history and prints a checkRow
// as JSON, so that the parent reads the check's peak RSS alone.
func checkChild(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check-one", flag.ContinueOnError)
	path := fs.String("hist", "", "history file")
	mode := fs.String("mode", "stream", "stream (trial.Check: the analysis in one streamed pass, what every run and torture check do) or run (that, then report.html and the explanations from it)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the check here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *mode != "stream" && *mode != "run" {
		return fmt.Errorf("check-one: unknown mode %q", *mode)
	}
	row := checkRow{Mode: *mode}
	if st, err := os.Stat(*path); err == nil {
		row.FileBytes = st.Size()
	}
	start := time.Now() // decode only
	f, err := os.Open(*path)
	if err != nil {
		return err
	}
	for _, err := range history.NewDecoder(f).All() {
		if err != nil {
			return err
		}
		row.Events++
	}
	f.Close()
	row.Decode = time.Since(start)
	runtime.GC()

	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	opts := checker.Options{Timings: &row.Timings}
	if *profile != "" {
		pf, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start = time.Now()
	a, _, err := trial.Check(*path, opts) // what every run and `torture check` do
	if err != nil {
		return err
	}
	res := a.Result
	if *mode == "run" {
		dir, err := os.MkdirTemp("", "bench-report")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		r := report.Results{RunID: "bench", Lease: res.Lease, Resource: res.Resource, Check: res}
		if err := report.WriteResults(dir, r); err != nil {
			return err
		}
		if err := report.WriteHTML(filepath.Join(dir, "report.html"), r, &a, opts); err != nil {
			return err
		}
	}
	runtime.KeepAlive(a)
	row.Total = time.Since(start)
	close(stop)
	<-sampled
	row.PeakHeap = peak
	row.PeakRSS = vmHWM()
	row.Lease, row.Resource = res.Lease, res.Resource
	row.FirstLease, row.FirstResource = res.FirstLeaseViolation, res.FirstResourceViolation
	return json.NewEncoder(stdout).Encode(row)
}

// checkOne runs a check-one child on path and adds its peak RSS.
func checkOne(ctx context.Context, path, mode string) (checkRow, error) {
	exe, err := os.Executable()
	if err != nil {
		return checkRow{}, err
	}
	cmd := exec.CommandContext(ctx, exe, "check-one", "-hist", path, "-mode", mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return checkRow{}, fmt.Errorf("check-one %s: %w", path, err)
	}
	var row checkRow
	if err := json.Unmarshal(out, &row); err != nil {
		return checkRow{}, fmt.Errorf("check-one %s: %w (%q)", path, err, out)
	}
	return row, nil
}

// vmHWM is this process's peak resident set (VmHWM), or 0. Unlike the
// rusage a parent reads, it does not count the parent's pages, which a
// child started with vfork shares until it execs.
func vmHWM() int64 { return statusKB("/proc/self/status", "VmHWM") << 10 }

// statusKB is the field (VmHWM, VmRSS) of a /proc status file, in KiB, or 0.
func statusKB(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// runChecker is part 2: generate and check histories of each size,
// valid and with a late violation.
func runChecker(ctx context.Context, e *benchEnv, r *results) error {
	for _, n := range e.o.sizes {
		for _, violation := range []bool{false, true} {
			path := filepath.Join(e.tmp, fmt.Sprintf("gen-%d-%v.jsonl", n, violation))
			start := time.Now()
			_, at, err := genHistory(path, n, 10, 5, violation)
			if err != nil {
				return err
			}
			e.logf("generated %d ops (violation %v) in %v", n, violation, time.Since(start).Round(time.Millisecond))
			row, err := checkOne(ctx, path, "stream")
			if err != nil {
				return err
			}
			row.Ops, row.Violation, row.Injected = n, violation, at
			want := checker.Valid
			if violation {
				want = checker.Invalid
			}
			if row.Lease != want || row.Resource != want {
				row.Err = fmt.Sprintf("verdicts %s/%s, want %s", row.Lease, row.Resource, want)
			}
			e.logf("checked %d ops (violation %v, %s): %v, peak RSS %d MiB, %s/%s", n, violation, row.Mode,
				row.Total.Round(time.Millisecond), row.PeakRSS>>20, row.Lease, row.Resource)
			r.Checker = append(r.Checker, row)
			os.Remove(path)
		}
	}
	return nil
}
