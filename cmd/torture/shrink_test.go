package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/nemesis"
	"github.com/locktorture/locktorture/report"
)

// TestShrinkRefuses: shrink wants a run with a violation and a fault
// schedule, and says in one line what is missing.
func TestShrinkRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]any{"lock": "setnx", "seed": 1, "duration": int64(time.Second), "ttl": int64(time.Second)}
	safe := report.Results{RunID: "x", Config: cfg, Check: checker.Result{Lease: checker.Valid, Resource: checker.Valid}}
	if err := report.WriteResults(dir, safe); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "no fault step") {
		t.Errorf("no step: exit %d, %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[{"kind":"kill","at":"1s","for":"1s","desc":"kill n1","params":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The verdict is the history's, whatever results.json says: one
	// hold, released, and a fault.
	hist := `{"process":0,"type":"invoke","f":"acquire","key":"k","time":0}
{"process":0,"type":"ok","f":"acquire","key":"k","token":"a","valid_until":1000000000,"time":1000}
{"process":-1,"type":"info","f":"fault-start","value":"kill n1","time":2000}
{"process":-1,"type":"info","f":"fault-stop","value":"kill n1","time":3000}
{"process":0,"type":"invoke","f":"release","key":"k","token":"a","time":200000000}
{"process":0,"type":"ok","f":"release","key":"k","token":"a","time":200001000}
`
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "found no violation") {
		t.Errorf("no violation: exit %d, %s", code, stderr)
	}
}

// TestShrinkHostileRun: a run folder from elsewhere names what shrink
// would run; shrink runs a client process only when the user names it
// again, and replays no longer than the stored history spans.
func TestShrinkHostileRun(t *testing.T) {
	dir := t.TempDir()
	exec := "exec:sh -c 'touch " + filepath.Join(dir, "ran") + "'"
	write := func(cfg map[string]any) {
		t.Helper()
		r := report.Results{RunID: "x", Config: cfg, Check: checker.Result{Lease: checker.Invalid, Resource: checker.Valid}}
		if err := report.WriteResults(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[{"kind":"kill","at":"1s","for":"1s","desc":"kill n1","params":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A history of an overlap, 300 ms long.
	hist := `{"process":0,"type":"invoke","f":"acquire","key":"k","time":0}
{"process":0,"type":"ok","f":"acquire","key":"k","token":"a","valid_until":1000000000,"time":1000}
{"process":1,"type":"invoke","f":"acquire","key":"k","time":2000}
{"process":1,"type":"ok","f":"acquire","key":"k","token":"b","valid_until":1000000000,"time":3000}
{"process":0,"type":"invoke","f":"release","key":"k","token":"a","time":200000000}
{"process":0,"type":"ok","f":"release","key":"k","token":"a","time":200001000}
{"process":1,"type":"invoke","f":"release","key":"k","token":"b","time":300000000}
{"process":1,"type":"ok","f":"release","key":"k","token":"b","time":300001000}
`
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	write(map[string]any{"lock": exec, "seed": 1, "clients": 2, "duration": int64(time.Second / 4), "ttl": int64(time.Second)})
	_, stderr, code := torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "only when you name it again: --lock") {
		t.Errorf("exec lock not named again: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("shrink ran the stored client process")
	}
	write(map[string]any{"lock": "setnx", "seed": 1, "clients": 2, "duration": int64(1000 * time.Hour), "ttl": int64(time.Second)})
	_, stderr, code = torture(t, "shrink", dir)
	if code != exitError || !strings.Contains(stderr, "shrink replays no longer than the run took") {
		t.Errorf("a 1000-hour replay: exit %d, %s", code, stderr)
	}
}

// TestShrinkSideBySide: two shrinks of one run started together each
// write a result of their own (minimal.json and minimal-1.json), whole,
// and a link someone left at minimal.json is neither replaced nor written
// through.
func TestShrinkSideBySide(t *testing.T) {
	dir := t.TempDir()
	r := report.Results{RunID: "x", Check: checker.Result{Lease: checker.Invalid, Resource: checker.Valid},
		Config: map[string]any{"lock": "setnx", "seed": 1, "clients": 2, "duration": int64(time.Second / 4), "ttl": int64(time.Second)}}
	if err := report.WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
	// One step (nothing to replay: what the run showed is its minimum)
	// and a history of an overlap.
	if err := os.WriteFile(filepath.Join(dir, "schedule.json"), []byte(`{"seed":1,"kinds":["kill"],"interval":"1s","steps":[{"kind":"kill","at":"1s","for":"1s","desc":"kill n1","params":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hist := `{"process":0,"type":"invoke","f":"acquire","key":"k","time":0}
{"process":0,"type":"ok","f":"acquire","key":"k","token":"a","valid_until":1000000000,"time":1000}
{"process":1,"type":"invoke","f":"acquire","key":"k","time":2000}
{"process":1,"type":"ok","f":"acquire","key":"k","token":"b","valid_until":1000000000,"time":3000}
{"process":0,"type":"invoke","f":"release","key":"k","token":"a","time":200000000}
{"process":0,"type":"ok","f":"release","key":"k","token":"a","time":200001000}
{"process":1,"type":"invoke","f":"release","key":"k","token":"b","time":300000000}
{"process":1,"type":"ok","f":"release","key":"k","token":"b","time":300001000}
`
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(t.TempDir(), "private")
	if err := os.WriteFile(private, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, filepath.Join(dir, "minimal.json")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 2)
	for range 2 {
		go func() {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"shrink", dir}, &out, &errb)
			code := exitCode(err, &errb)
			done <- result{out.String(), errb.String(), code}
		}()
	}
	written := map[string]bool{}
	for range 2 {
		r := <-done
		if r.code != exitValid {
			t.Fatalf("shrink: exit %d\n%s", r.code, r.stderr)
		}
		_, rest, _ := strings.Cut(r.stdout, "written to ")
		path, _, _ := strings.Cut(rest, ";")
		written[path] = true
		if _, err := nemesis.ReadSchedule(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if !written[filepath.Join(dir, "minimal-1.json")] || !written[filepath.Join(dir, "minimal-2.json")] {
		t.Errorf("wrote %v; want minimal-1.json and minimal-2.json beside the link", written)
	}
	if b, _ := os.ReadFile(private); string(b) != "secret" {
		t.Errorf("written through the link at minimal.json: %q", b)
	}
}
