package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// TestFit: the budget shortens the runs first, then drops seeds, says so,
// and refuses a budget that one seed at MinDuration does not fit.
func TestFit(t *testing.T) {
	specs := []matrix.Spec{{Name: "a"}, {Name: "b"}}
	run := func(d time.Duration) time.Duration { return matrix.ExpectedRun(matrix.Spec{}, d) }
	seeds := []int64{1, 2, 3}
	for _, tc := range []struct {
		budget time.Duration
		n      int
		d      time.Duration
		scaled bool
	}{
		{6 * run(8*time.Second), 3, 8 * time.Second, false},
		{6 * run(6*time.Second), 3, 6 * time.Second, true},
		{4 * run(8*time.Second), 2, 8 * time.Second, true},
		{2 * run(MinDuration), 1, MinDuration, true},
	} {
		got, d, scaled, err := fit(specs, seeds, 8*time.Second, tc.budget, 1)
		if err != nil || len(got) != tc.n || d != tc.d || (scaled != "") != tc.scaled {
			t.Errorf("budget %s: %v seeds, %s, %q, %v; want %d seeds of %s", tc.budget, got, d, scaled, err, tc.n, tc.d)
		}
	}
	if _, _, _, err := fit(specs, seeds, 8*time.Second, run(MinDuration), 1); !errors.Is(err, ErrBudget) {
		t.Errorf("a budget too small: %v, want ErrBudget", err)
	}
}

// TestJudge: a violation of a property a cell expects safe breaks the
// cell's promise, and the gate names the property: lost updates where
// they are expected break nothing, an overlap of leases there breaks the
// lease; an expected violation not seen is inconclusive, never a pass.
func TestJudge(t *testing.T) {
	specs := []matrix.Spec{
		{Name: "l/none", Expect: report.ExpectAll(report.ExpectSafe), Promise: "mutual exclusion"},
		{Name: "l/client-pause", Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectViolation}, Promise: "leases never overlap"},
		{Name: "l/truthful", Expect: report.Expect{Lease: report.ExpectSafe, Resource: report.ExpectSafe, Answers: report.ExpectSafe}, Promise: "mutual exclusion"},
	}
	run := func(lease, resource checker.Verdict) report.CellRun {
		return report.CellRun{Seed: 1, Dir: "runs/x", Lease: lease, Resource: resource}
	}
	lied := func(r report.CellRun) report.CellRun { r.Answers = checker.Invalid; return r }
	cell := func(name string, e report.Expect, outcome checker.Outcome, matches bool, runs ...report.CellRun) report.Cell {
		return report.Cell{Name: name, Expect: e.Overall(), Props: e, Outcome: outcome, Matches: matches, Runs: runs}
	}
	for _, tc := range []struct {
		name            string
		cells           []report.Cell
		status          Status
		broken, promise string
	}{
		{"pass", []report.Cell{
			cell("l/none", specs[0].Expect, checker.OutcomeSafe, true, run(checker.Valid, checker.Valid)),
			cell("l/client-pause", specs[1].Expect, checker.OutcomeViolation, true, run(checker.Valid, checker.Invalid)),
		}, StatusPass, "", ""},
		{"safe cell violated", []report.Cell{
			cell("l/none", specs[0].Expect, checker.OutcomeViolation, false, run(checker.Invalid, checker.Invalid)),
		}, StatusBroken, "lease", "mutual exclusion"},
		{"lease overlap where lost updates are expected", []report.Cell{
			cell("l/client-pause", specs[1].Expect, checker.OutcomeViolation, true, run(checker.Invalid, checker.Invalid)),
		}, StatusBroken, "lease", "leases never overlap"},
		{"expected violation not seen", []report.Cell{
			cell("l/client-pause", specs[1].Expect, checker.OutcomeSafe, false, run(checker.Valid, checker.Valid)),
		}, StatusInconclusive, "", ""},
		{"unknown", []report.Cell{
			cell("l/none", specs[0].Expect, checker.OutcomeUnknown, false, run(checker.Unknown, checker.Valid)),
		}, StatusInconclusive, "", ""},
		{"a reply the nodes contradict where answers are promised", []report.Cell{
			cell("l/truthful", specs[2].Expect, checker.OutcomeSafe, false, lied(run(checker.Valid, checker.Valid))),
		}, StatusBroken, "answers", "mutual exclusion"},
		{"a contradicted reply where nothing is promised of answers", []report.Cell{
			cell("l/none", specs[0].Expect, checker.OutcomeSafe, true, lied(run(checker.Valid, checker.Valid))),
		}, StatusPass, "", ""},
	} {
		res := Result{Matrix: report.Matrix{Cells: tc.cells}}
		judge(&res, specs, t.TempDir())
		if res.Status != tc.status {
			t.Errorf("%s: status %s, want %s", tc.name, res.Status, tc.status)
		}
		c := res.Cells[0]
		if c.Broken != tc.broken || (tc.broken != "" && (c.Promise != tc.promise || res.Matrix.Cells[0].Broken != tc.broken+": "+tc.promise)) {
			t.Errorf("%s: broken %q (%q, matrix %q), want %q (%q)", tc.name, c.Broken, c.Promise, res.Matrix.Cells[0].Broken, tc.broken, tc.promise)
		}
		if tc.broken != "" && (res.Matrix.Cells[0].Matches || !strings.Contains(c.First, "seed 1")) {
			t.Errorf("%s: a broken promise must not match and must explain its first run: %+v", tc.name, c)
		}
		if tc.status == StatusInconclusive && (c.Why == "" || strings.Contains(c.Why, "harness")) {
			t.Errorf("%s: why %q: say what the lock did not show, never blame the harness", tc.name, c.Why)
		}
	}
}

// TestJudgePower: a promise cell that held is a pass only with the trials
// the power target needs; with fewer it is named and the gate is
// inconclusive; a cell that expects only a violation needs none.
func TestJudgePower(t *testing.T) {
	specs := []matrix.Spec{
		{Name: "l/none", Expect: report.ExpectAll(report.ExpectSafe), Promise: "mutual exclusion"},
		{Name: "l/clock", Expect: report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}},
	}
	need := report.TrialsFor(DefaultRate)
	for _, tc := range []struct {
		trials int
		want   Status
	}{{need, StatusPass}, {need - 1, StatusInconclusive}, {0, StatusInconclusive}} {
		cells := []report.Cell{
			{Name: "l/none", Props: specs[0].Expect, Expect: specs[0].Expect.Overall(), Outcome: checker.OutcomeSafe, Matches: true, Trials: tc.trials,
				Runs: []report.CellRun{{Seed: 1, Lease: checker.Valid, Resource: checker.Valid}}},
			{Name: "l/clock", Props: specs[1].Expect, Expect: specs[1].Expect.Overall(), Outcome: checker.OutcomeViolation, Matches: true, Trials: 1, ToFirst: 1,
				Runs: []report.CellRun{{Seed: 1, Lease: checker.Invalid, Resource: checker.Valid}}},
		}
		res := Result{Rate: DefaultRate, Need: need, Matrix: report.Matrix{Cells: cells}}
		judge(&res, specs, t.TempDir())
		if res.Status != tc.want {
			t.Errorf("%d trials: status %s, want %s", tc.trials, res.Status, tc.want)
		}
		line := res.PowerLine()
		switch tc.want {
		case StatusPass:
			if !strings.Contains(line, "each would have been caught at a per-trial rate of 25 % with 95 % probability") || res.Cells[0].Excluded > DefaultRate {
				t.Errorf("%d trials: %q, excluded %g", tc.trials, line, res.Cells[0].Excluded)
			}
		default:
			if !strings.Contains(line, "l/none") || strings.Contains(line, "l/clock") || !strings.Contains(res.Cells[0].Why, "fewer than the 11") {
				t.Errorf("%d trials: %q, why %q: name the cell short of trials, only it", tc.trials, line, res.Cells[0].Why)
			}
		}
	}
}

// TestQuorumLockRows: the gate of a quorum lock, built in or registered
// by a user, takes the contested clock case (a violation), its control
// (safe) and the crashed holder (liveness ok), as the list shows.
func TestQuorumLockRows(t *testing.T) {
	base, err := locks.Lookup("redsync")
	if err != nil {
		t.Fatal(err)
	}
	user := locks.Spec{Name: "gate-test-quorum", MultiNode: true, Promises: &locks.Promises{Quorum: 5, ElapsedFromRequest: true, Extends: true, ReportsNodes: true}, New: base.New}
	if err := locks.Register(user); err != nil {
		t.Fatal(err)
	}
	for _, lock := range []string{"redsync", "gate-test-quorum"} {
		var stdout, stderr bytes.Buffer
		if err := Command(t.Context(), []string{"--lock", lock, "--list"}, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v\n%s", lock, err, stderr.String())
		}
		for _, want := range []string{
			lock + "/clock-partition", "expect lease violation, resource possible",
			lock + "/clock-minority", lock + "/client-crash", "expect safe, liveness ok",
		} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s --list lacks %q:\n%s", lock, want, stdout.String())
			}
		}
	}
}

// TestPlanRefuses: a lock that declares nothing, an unknown lock and a
// bad cell filter are refused before anything runs.
func TestPlanRefuses(t *testing.T) {
	if err := locks.Register(locks.Spec{Name: "gate-test-undeclared", New: func(locks.Config) (locks.Lock, error) { return nil, errors.New("unused") }}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{},
		{Lock: "no-such-lock"},
		{Lock: "gate-test-undeclared"},
		{Lock: "setnx", Cells: "("},
		{Lock: "setnx", Cells: "nothing-matches"},
	} {
		if _, err := NewPlan(o); err == nil {
			t.Errorf("NewPlan(%+v) accepted", o)
		}
	}
}

// TestLiarFailsItsGate: a lock that declares it survives client pauses
// without fencing — setnx under another name, claiming more — breaks that
// promise in its gate: exit status 1, the promise named in the summary
// with its first violation.
func TestLiarFailsItsGate(t *testing.T) {
	setnx, err := locks.Lookup("setnx")
	if err != nil {
		t.Fatal(err)
	}
	liar := setnx
	liar.Name, liar.Summary = "gate-test-liar", "setnx, claiming to survive client pauses without fencing"
	liar.Promises = &locks.Promises{ElapsedFromRequest: true, SafeUnder: []string{"client-pause"}}
	if err := locks.Register(liar); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err = Command(t.Context(), []string{"--lock", "gate-test-liar", "--cells", "/client-pause$", "--seeds", "1", "--duration", "6s", "--out", out}, &stdout, &stderr)
	if code := ExitCode(err, &stderr); code != ExitBroken {
		t.Fatalf("exit %d (%v), want %d\n%s\n%s", code, err, ExitBroken, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "**gate-test-liar/client-pause: resource broken** (promised: safe under client-pause (declared))") ||
		!strings.Contains(stdout.String(), "First violation: seed 1") {
		t.Fatalf("the summary does not name the broken promise and its first violation:\n%s", stdout.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "gate-test-liar-*"))
	if len(dirs) != 1 {
		t.Fatalf("gate directories %v", dirs)
	}
	for _, name := range []string{"summary.md", "summary.json", "junit.xml", "index.html", "gate.json"} {
		if _, err := os.Stat(filepath.Join(dirs[0], name)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], "gate.json"))
	var res Result
	if err := json.Unmarshal(b, &res); err != nil || res.Status != StatusBroken {
		t.Fatalf("gate.json: %v, status %q", err, res.Status)
	}
	page, _ := os.ReadFile(filepath.Join(dirs[0], "index.html"))
	if !strings.Contains(string(page), "<strong>gate-test-liar/client-pause: resource broken (promised: safe under client-pause (declared))</strong>") {
		t.Fatalf("index.html does not show the broken promise")
	}
	if !strings.Contains(string(page), `<h1 class="gate-verdict gate-broken" id="gate-verdict">BROKEN`) {
		t.Errorf("index.html does not shout BROKEN at its top")
	}
	// stdout is no terminal here: the verdict line carries no colour.
	if !strings.Contains(stdout.String(), " GATE BROKEN  gate-test-liar: 1 of 1 cells broke a promise") || strings.Contains(stdout.String(), "\x1b[") {
		t.Errorf("the last line is not the plain verdict:\n%s", stdout.String())
	}
	junit, _ := os.ReadFile(filepath.Join(dirs[0], "junit.xml"))
	if !strings.Contains(string(junit), "broke its declared promise (resource: safe under client-pause (declared))") {
		t.Fatalf("junit.xml does not name the broken promise:\n%s", junit)
	}
}

// TestMutantFailsItsGate: a mutant declares what the lock it mutates
// claims, so its bug breaks a promise in its gate: setnx-get-set, whose
// acquire is GET then SET, breaks mutual exclusion without any fault.
func TestMutantFailsItsGate(t *testing.T) {
	res, err := Run(t.Context(), Options{Lock: "setnx-get-set", Cells: "/none$", Seeds: []int64{1}, Duration: 3 * time.Second, Dir: t.TempDir()})
	if !errors.Is(err, ErrBroken) || res.Status != StatusBroken {
		t.Fatalf("status %s, error %v; want a broken promise", res.Status, err)
	}
	if c := res.Cells[0]; c.Broken != "lease" || c.Promise != "mutual exclusion without faults" || !strings.Contains(c.First, "first overlap: k") {
		t.Fatalf("cell %+v", c)
	}
}

// TestExecLockGate: a lock in another language, served by client
// processes, is gated by the promises its hello declares; its cells are
// named exec/… (the command is no directory name). The plan only: the
// process adapter's runs are tested in locks/clients.
func TestExecLockGate(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the example client needs python3: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "locks", "clients", "example", "example_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Options{Lock: "exec:'" + py + "' '" + script + "'", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Result().Traits, " "); got != "single elapsed extends" {
		t.Fatalf("traits %q, want the hello's", got)
	}
	var names, want []string
	for _, sp := range p.Cells() {
		names = append(names, sp.Name)
	}
	for _, sp := range matrix.Derive(locks.Spec{Name: "exec", Process: true}, p.Result().Promises) {
		want = append(want, sp.Name)
	}
	if len(want) == 0 || strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("cells %v, want %v", names, want)
	}
}

// TestFloorFitsEveryCell: whatever the budget shortens the runs to, no
// cell of a registered lock runs shorter than its faults need: at the
// shortest duration fit may choose (MinDuration, raised to the cell's
// floor), every seed draws a fault schedule that fits. (rueidislock's
// client-stop, its pause and a TTL after 2 s of quiet, needs more than
// the 5 s floor: unfloored, a gate scaled to 6.7 s refused to start.)
func TestFloorFitsEveryCell(t *testing.T) {
	seeds := []int64{1, 2, 3, 4, 5}
	for _, name := range locks.Names() {
		specs, _, err := matrix.CellsFor(name)
		if errors.Is(err, locks.ErrNoPromises) {
			continue // no cells (this package's tests register such locks)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range floor(specs, seeds, matrix.DefaultDuration) {
			d := max(MinDuration, sp.MinDuration)
			if d >= matrix.DefaultDuration {
				continue // runs as the matrix runs it
			}
			for _, seed := range seeds {
				if err := sp.FitsSchedule(seed, d); err != nil {
					t.Errorf("%s, seed %d, at %s: %v", sp.Name, seed, d, err)
				}
			}
		}
	}
}

// TestListBeyondTheBudget: --list of a lock whose cells the budget cannot
// hold still lists them, and its last line says the run would stop and
// why (docs/gate.md shows `torture gate --lock setnx --list`).
func TestListBeyondTheBudget(t *testing.T) {
	var out, errOut bytes.Buffer
	err := Command(t.Context(), []string{"--lock", "setnx", "--list", "--budget", "1m"}, &out, &errOut)
	if err != nil {
		t.Fatalf("--list: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.Contains(out.String(), "setnx/cluster-migrate") {
		t.Errorf("--list does not list the cells:\n%s", out.String())
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "budget too small") {
		t.Errorf("last line %q; want it to say the budget is too small", last)
	}
	// Without --list the same budget is an error.
	if err := Command(t.Context(), []string{"--lock", "setnx", "--budget", "1m", "--out", t.TempDir()}, &out, &errOut); !errors.Is(err, ErrBudget) {
		t.Errorf("the gate itself: %v, want ErrBudget", err)
	}
}

// TestRefusedGateMakesNoFolder: a gate whose plan is refused (a budget
// too small, an unknown lock, a cell filter that matches nothing or does
// not parse) says so before it creates anything: neither its folder nor
// --out itself (results/gate by default) is left behind.
func TestRefusedGateMakesNoFolder(t *testing.T) {
	for _, args := range [][]string{
		{"--lock", "setnx", "--budget", "1m"},
		{"--lock", "no-such-lock"},
		{"--lock", "setnx", "--cells", "nothing-matches"},
		{"--lock", "setnx", "--cells", "("},
		{"--lock", "setnx", "--rate", "2"},
	} {
		root := t.TempDir()
		out := filepath.Join(root, "results", "gate")
		var stdout, stderr bytes.Buffer
		err := Command(t.Context(), append(args, "--out", out), &stdout, &stderr)
		if err == nil {
			t.Errorf("%v: accepted", args)
			continue
		}
		if ents, rerr := os.ReadDir(root); rerr != nil || len(ents) != 0 {
			t.Errorf("%v: refused (%v) but left %v behind (%v)", args, err, ents, rerr)
		}
	}
}

// TestVerdictAtAGlance: the broken promises come first, then the cells
// that did not match; the verdict line is coloured only when asked (a
// terminal without NO_COLOR), red for BROKEN.
func TestVerdictAtAGlance(t *testing.T) {
	res := Result{Lock: "l", Status: StatusBroken, Cells: []Cell{
		{Name: "ok", Matches: true}, {Name: "off"}, {Name: "broke", Broken: "lease"},
	}}
	var names []string
	for _, c := range res.Ordered() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "broke,off,ok" {
		t.Errorf("order %v, want the broken promise, the mismatch, the rest", names)
	}
	if got := VerdictLine(res, false); got != " GATE BROKEN  l: 1 of 3 cells broke a promise the lock declared" {
		t.Errorf("plain line %q", got)
	}
	if got := VerdictLine(res, true); !strings.HasPrefix(got, "\x1b[1;41;97m GATE BROKEN \x1b[0m") {
		t.Errorf("coloured line %q", got)
	}
	md := Markdown(res)
	if i, j := strings.Index(md, "broke"), strings.Index(md, "- ok"); i < 0 || j < 0 || i > j {
		t.Errorf("Markdown does not list the broken promise first:\n%s", md)
	}
	t.Setenv("NO_COLOR", "1")
	if colour(os.Stdout) {
		t.Error("colour with NO_COLOR set")
	}
}

// TestVerdictBothWays: a pass says the lock kept its promises and, on a
// second line, where its lease broke as the literature expects of its
// class; a cell that expected a violation and showed none, or a promise
// cell, is not named there.
func TestVerdictBothWays(t *testing.T) {
	viol := report.Expect{Lease: report.ExpectViolation, Resource: report.ExpectPossible}
	res := Result{Lock: "redsync", Status: StatusPass, Cells: []Cell{
		{Name: "redsync/none", Matches: true, Expect: report.ExpectAll(report.ExpectSafe), Lease: report.Rate{Runs: 3}},
		{Name: "redsync/clock-majority", Matches: true, Expect: viol, Lease: report.Rate{Violations: 3, Runs: 3}},
		{Name: "redsync+extend/kill-immediate", Matches: true, Expect: viol, Lease: report.Rate{Violations: 2, Runs: 3}},
		{Name: "redsync/clock", Expect: viol, Lease: report.Rate{Runs: 3}},
	}}
	want := " GATE PASS  redsync: keeps its promises, every one of 4 cells matches\n" +
		"known unsafe, as the literature expects: the lease broke under clock-majority (3/3 runs), extend/kill-immediate (2/3 runs)"
	if got := VerdictLine(res, false); got != want {
		t.Errorf("verdict\n%s\nwant\n%s", got, want)
	}
	if md := Markdown(res); !strings.Contains(md, "Known unsafe, as the literature expects: the lease broke under clock-majority") {
		t.Errorf("Markdown does not say where the lease broke as expected:\n%s", md)
	}
	res.Cells = res.Cells[:1]
	if got := VerdictLine(res, false); strings.Contains(got, "\n") {
		t.Errorf("a lock that broke nowhere gets a second line: %q", got)
	}
}
