package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/report"
)

// A verdict about nothing is not a pass: each input below once ended in
// "valid" and exit 0. Each must now give its one-line message and a
// non-zero exit.

// TestCheckNothing: `torture check` of histories that hold no complete
// event, or no operation that succeeded, or a malformed one.
func TestCheckNothing(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	garbage := func(n int, newlines bool) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*131+7) | 0x80
			if newlines && i%100 == 99 {
				b[i] = '\n'
			}
		}
		return b
	}
	text := func(n int) []byte { return bytes.Repeat([]byte("lock "), n/5) }
	const (
		acq    = `{"type":"invoke","f":"acquire","process":%d,"time":%d,"key":"k0"}` + "\n"
		acqOK  = `{"type":"ok","f":"acquire","process":%d,"time":%d,"key":"k0","token":"t%d","valid_until":%d}` + "\n"
		acqBad = `{"type":"fail","f":"acquire","process":%d,"time":%d,"key":"k0","error":"setnx: acquire \"k0\": locks: not acquired"}` + "\n"
		rel    = `{"type":"invoke","f":"release","process":%d,"time":%d,"key":"k0","token":"t%d"}` + "\n"
	)
	noAcquireOK := fmt.Sprintf(acq+acqBad+acq+acqBad, 0, 10, 0, 20, 1, 5, 1, 30)
	noSection := fmt.Sprintf(acq+acqOK+rel, 0, 10, 0, 20, 0, 1000, 0, 50, 0)
	overlapNoSection := fmt.Sprintf(acq+acqOK+acq+acqOK, 0, 10, 0, 20, 0, 1000, 1, 30, 1, 40, 1, 1000)
	releaseFirst := fmt.Sprintf(acq+acqOK+rel, 0, 0, 0, 100, 0, 1000, 0, 50, 0)

	for _, tc := range []struct {
		name, path string
		code       int
		stderr     string // the one line on stderr, after the path: a regular expression
		stdout     string // lines the summary must hold, when there is one
	}{
		{"empty file", write("empty.jsonl", nil), exitError, `^history: no complete event: the history is empty$`, ""},
		{"blank lines", write("blank.jsonl", []byte("\n\n  \n")), exitError, `^history: no complete event: the history holds 3 blank lines and nothing else$`, ""},
		{"binary garbage, 4 KB, no newline", write("garbage.bin", garbage(4096, false)), exitError,
			`^history: no complete event: one unterminated line of 4096 bytes that is not a JSON event \(invalid character .* looking for beginning of value\)$`, ""},
		{"binary garbage with newlines", write("garbage-lines.bin", garbage(4096, true)), exitError,
			`^history: invalid event: line 1: invalid character .* looking for beginning of value$`, ""},
		{"text, 4 KB, no newline", write("text-4k.txt", text(4096)), exitError,
			`^history: no complete event: one unterminated line of 4095 bytes that is not a JSON event \(invalid character 'l' looking for beginning of value\)$`, ""},
		{"text, 1 MB, no newline", write("text-1m.txt", text(1<<20)), exitError,
			`^history: no complete event: one unterminated line of 1048575 bytes that is not a JSON event`, ""},
		// Longer than any event: the decoder stops at history.MaxLine
		// (16 MiB) instead of holding the line whole.
		{"text, 50 MB, no newline", write("text-50m.txt", text(50<<20)), exitError,
			`^history: line too long: line 1 is longer than 16 MiB, which no event is$`, ""},
		{"a release invoked before its acquire's ok", write("release-first.jsonl", []byte(releaseFirst)), exitError,
			`^checker: malformed history: event 2 \(time 50\): process 0 invokes release at 50, earlier than its acquire ok at 100 \(event 1\): a process does one thing at a time$`, ""},
		{"no acquire succeeded", write("no-acquire-ok.jsonl", []byte(noAcquireOK)), exitUnknown, "",
			"  lease safety:    unknown — no acquire succeeded: 2 acquires, none ok (2 fail; most often \"setnx: acquire \\\"k0\\\": locks: not acquired\" (2 times))\n" +
				"  resource safety: unknown — no section completed: no acquire succeeded, so no section ran\n"},
		{"no section", write("no-section.jsonl", []byte(noSection)), exitUnknown, "",
			"  lease safety:    valid\n  resource safety: unknown — no section completed: the history has no section\n"},
		{"an overlap and no section", write("overlap.jsonl", []byte(overlapNoSection)), exitViolation, "",
			"  lease safety:    invalid\n  resource safety: unknown — no section completed: the history has no section\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := torture(t, "check", tc.path)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.stderr != "" {
				line, ok := strings.CutPrefix(strings.TrimSuffix(stderr, "\n"), "torture: check "+tc.path+": ")
				if !ok || strings.Contains(line, "\n") || !regexp.MustCompile(tc.stderr).MatchString(line) {
					t.Errorf("stderr %q\nwant one line: torture: check %s: /%s/", stderr, tc.path, tc.stderr)
				}
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout:\n%s\nwant it to hold:\n%s", stdout, tc.stdout)
			}
			if tc.stdout != "" && stderr != "" {
				t.Errorf("stderr %q, want nothing beside the summary", stderr)
			}
		})
	}
}

// neverLock refuses every acquire; badTokenLock grants every one with a
// lease without a token.
type neverLock struct{}

func (neverLock) Acquire(context.Context, string) (locks.Lease, error) {
	return locks.Lease{}, fmt.Errorf("never: %w", locks.ErrNotAcquired)
}
func (neverLock) Release(context.Context, locks.Lease) error { return locks.ErrNotHeld }
func (neverLock) Extend(context.Context, locks.Lease) (locks.Lease, error) {
	return locks.Lease{}, locks.ErrNotHeld
}
func (neverLock) Close() error { return nil }

type badTokenLock struct{ neverLock }

func (badTokenLock) Acquire(_ context.Context, key string) (locks.Lease, error) {
	return locks.Lease{Key: key, Validity: time.Now().Add(time.Second)}, nil
}

// register registers a test lock once per test binary (-count=2 runs the
// tests twice).
func register(tb testing.TB, name string, lk locks.Lock) {
	tb.Helper()
	err := locks.Register(locks.Spec{Name: name, Summary: "a test lock", New: func(locks.Config) (locks.Lock, error) { return lk, nil }})
	if err != nil && !errors.Is(err, locks.ErrDuplicateLock) {
		tb.Fatal(err)
	}
}

// TestRunNothing: runs refused at start (before any run directory is
// made) with the reason, runs that tested nothing, with the reason in the
// summary and results.json, and a lock whose lease lacks a token.
func TestRunNothing(t *testing.T) {
	register(t, "test-never", neverLock{})
	register(t, "test-no-token", badTokenLock{})
	sched := filepath.Join(t.TempDir(), "schedule.json")
	if err := os.WriteFile(sched, []byte(`{"seed": 1, "kinds": ["kill"], "interval": "1s", "steps": [
		{"kind": "kill", "at": "1s", "for": "1s", "params": {"nodes": [99], "restart_delay": "0s"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // the last stderr line, a regular expression; "" when the run goes on
		stdout []string
	}{
		// Refused at start.
		{"--clients 0", []string{"--clients", "0"}, exitError, `^torture: run: --clients must be at least 1, got 0$`, nil},
		{"--clients -3", []string{"--clients", "-3"}, exitError, `^torture: run: --clients must be at least 1, got -3$`, nil},
		{"--keys 0", []string{"--keys", "0"}, exitError, `^torture: run: --keys must be at least 1, got 0$`, nil},
		{"--keys -1", []string{"--keys", "-1"}, exitError, `^torture: run: --keys must be at least 1, got -1$`, nil},
		{"redlock --nodes 0", []string{"--lock", "redlock", "--nodes", "0"}, exitError,
			`^torture: run: invalid value "0" for flag -nodes: want at least 1 node, got 0 \(see torture run -h\)$`, nil},
		{"redlock --nodes -2", []string{"--lock", "redlock", "--nodes", "-2"}, exitError,
			`^torture: run: invalid value "-2" for flag -nodes: want at least 1 node, got -2 \(see torture run -h\)$`, nil},
		{"--hold -1s", []string{"--hold", "-1s"}, exitError, `^torture: run: --hold must not be negative, got -1s$`, nil},
		{"--nemesis-interval 0s", []string{"--nemesis", "kill", "--nemesis-interval", "0s"}, exitError, `^torture: run: --nemesis-interval must be positive, got 0s$`, nil},
		{"--restart-delay 0s", []string{"--nemesis", "kill", "--restart-delay", "0s"}, exitError,
			`^torture: run: --restart-delay must be positive, got 0s \(for restarts at once: --restart immediate\)$`, nil},
		{"--check-timeout 0s", []string{"--check-timeout", "0s"}, exitError, `^torture: run: --check-timeout must be positive, got 0s$`, nil},
		{"redlock --nodes 1000", []string{"--lock", "redlock", "--nodes", "1000"}, exitError,
			`^torture: harness: 1000 nodes: a run starts at most 100 \(on a 2-core machine, of 1000 redis-server processes some did not answer within the 10 s start-up time; 100 start in about 2 s\)$`, nil},
		{"--clients 100001", []string{"--clients", "100001"}, exitError,
			`^torture: harness: 100001 clients: a run drives at most 100000 `, nil},
		{"a fault test without a fault", []string{"--nemesis", "kill", "--duration", "3s"}, exitError,
			`^torture: harness: nemesis kill: no fault fits in the 3s run \(each comes after 2s of quiet and stays at least as long, some kinds longer\); a run without a fault is not a fault test: lengthen the duration or shorten the nemesis interval$`, nil},
		{"a replay of node 99", []string{"--lock", "redlock", "--replay", sched}, exitError,
			`^torture: nemesis: .*schedule.json: step 0 \(kill\) refused: kill: no node n100: the run has 5$`, nil},

		// Run, and tested nothing.
		{"the hold is longer than the TTL", []string{"--hold", "1s", "--ttl", "100ms", "--keys", "1", "--clients", "3"}, exitUnknown, "", []string{
			"  lease safety:    valid\n",
			"  resource safety: unknown — no section completed: the hold of 1s is longer than the TTL of 100ms; ",
			` sections, none ok (`, ` fail; most often "harness: lease expired" (`,
		}},
		{"no acquire succeeded", []string{"--lock", "test-never", "--clients", "3"}, exitUnknown, "", []string{
			"  lease safety:    unknown — no acquire succeeded: ",
			` acquires, none ok (`, ` fail; most often "never: locks: not acquired" (`,
			"  resource safety: unknown — no section completed: no acquire succeeded, so no section ran\n",
		}},

		// A lock that breaks its contract stops the run at once.
		{"an empty token", []string{"--lock", "test-no-token", "--clients", "1", "--duration", "10m"}, exitError,
			`^torture: run \S+: harness: bad lease: lock test-no-token, client 0: acquire "k0" returned ok with an empty token; a lease must carry a non-empty token unique to it \(see locks.Lock\)$`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "--duration", "2s", "--out", out}, tc.args...)
			stdout, stderr, code := torture(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if tc.stderr != "" && !regexp.MustCompile(tc.stderr).MatchString(lines[len(lines)-1]) {
				t.Errorf("last stderr line %q, want /%s/", lines[len(lines)-1], tc.stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout:\n%s\nwant it to hold %q", stdout, want)
				}
			}
			runs, err := os.ReadDir(out)
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.stdout == nil && tc.name != "an empty token" && len(runs) > 0:
				t.Errorf("refused, yet %d run directories were made", len(runs))
			case tc.stdout != nil:
				if len(runs) != 1 {
					t.Fatalf("%d run directories, want 1", len(runs))
				}
				b, err := os.ReadFile(filepath.Join(out, runs[0].Name(), "results.json"))
				if err != nil || !bytes.Contains(b, []byte(`"lease_reason"`)) && !bytes.Contains(b, []byte(`"resource_reason"`)) {
					t.Errorf("results.json has no reason (%v):\n%s", err, b)
				}
			}
		})
	}
}

// TestMatrixInterrupted: a matrix whose context is cancelled (SIGINT)
// after its first run says which cells never ran, on stdout and in its
// summaries, and exits 2, never "every cell matches".
func TestMatrixInterrupted(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		// Cancel once the first run has written its results (one run at a
		// time: the others never start).
		deadline := time.Now().Add(5 * time.Minute)
		for ctx.Err() == nil && time.Now().Before(deadline) {
			if m, _ := filepath.Glob(filepath.Join(out, "*", "runs", "*", "results.json")); len(m) > 0 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"matrix", "--cells", "^(setnx/none|setnx-get-set/none|redlock/none)$", "--duration", "2s", "--jobs", "1", "--out", out}, &stdout, &stderr)
	code := exitCode(err, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^torture: matrix: interrupted: [12] of 3 cells never ran, [01] more did not run every seed to its end \(see \S+summary.md\): context canceled$`).MatchString(last) {
		t.Errorf("last stderr line %q", last)
	}
	if !strings.Contains(stdout.String(), "NEVER RAN") || !strings.Contains(stdout.String(), "never ran (the matrix was interrupted): ") {
		t.Errorf("stdout does not say which cells never ran:\n%s", stdout.String())
	}
	mds, _ := filepath.Glob(filepath.Join(out, "*", "summary.md"))
	if len(mds) != 1 {
		t.Fatalf("summaries: %v", mds)
	}
	md, _ := os.ReadFile(mds[0])
	if !strings.Contains(string(md), "## Never ran") || strings.Contains(string(md), "every cell matches") {
		t.Errorf("summary.md:\n%s", md)
	}
}

// TestPrintMatrixSaysWhyUndecided: the one-screen summary of a matrix
// names why a run of a cell that did not match decided nothing, so that
// a CI log says it without the run's directory; a matching cell's runs
// print nothing more.
func TestPrintMatrixSaysWhyUndecided(t *testing.T) {
	why := "no strike left a window: of the 2 targeted step(s), 2 missed"
	m := report.Matrix{Cells: []report.Cell{
		{Name: "redlock/clock-minority", Expect: report.ExpectSafe, Outcome: checker.OutcomeUnknown,
			Runs: []report.CellRun{{Seed: 1, Lease: checker.Unknown, LeaseReason: why, Resource: checker.Unknown}}},
		{Name: "redlock/none", Expect: report.ExpectSafe, Outcome: checker.OutcomeSafe, Matches: true,
			Runs: []report.CellRun{{Seed: 1, Lease: checker.Valid, Resource: checker.Unknown, ResourceReason: "not tested"}}},
	}}
	var b strings.Builder
	printMatrix(&b, m, "out")
	out := b.String()
	if !strings.Contains(out, "    seed 1: decided nothing: "+why+"\n") {
		t.Errorf("no reason for the undecided run:\n%s", out)
	}
	if strings.Contains(out, "not tested") {
		t.Errorf("a matching cell's run printed a reason:\n%s", out)
	}
}
