package gate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// ciJob is the part of a GitHub Actions workflow the test reads.
type ciJob struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Dir  string            `yaml:"working-directory"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// documentedJob returns the first ```yaml block under "## In CI" in
// docs/gate.md, parsed.
func documentedJob(tb testing.TB, doc string) ciJob {
	tb.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## In CI")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	body, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		tb.Fatalf("%s has no ```yaml block under ## In CI", doc)
	}
	var job ciJob
	if err := yaml.Unmarshal([]byte(body), &job); err != nil {
		tb.Fatalf("the job in %s is no YAML: %v", doc, err)
	}
	if len(job.Jobs) != 1 {
		tb.Fatalf("the job in %s has %d jobs, want one", doc, len(job.Jobs))
	}
	return job
}

// TestCIJobOutsideRepository: the CI job docs/gate.md gives a lock author
// runs as written from a clean runner. Its checkouts are played by a copy
// of examples/gate (the lock's repository, its gate in gate/) in a
// workspace outside the repository, and by this checkout (locktorture at
// the pinned commit: $LOCKTORTURE); its run steps run in order under
// bash -e, in their working directories, with GITHUB_WORKSPACE and
// RUNNER_TEMP set as a runner sets them, offline (GOPROXY=off: every
// module comes from the cache that building this repository filled; the
// system packages step is skipped, redis-server and gcc being here
// already). The gate's --budget 5m is narrowed to one cell, one seed of
// 6 s and a 50 % rate (5 trials), as the example's own test asks. The
// example exits 0; the same job on the example with its release made a
// plain DEL exits 1.
func TestCIJobOutsideRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example and runs two short gates")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	job := documentedJob(t, filepath.Join(root, "docs", "gate.md"))
	var steps []string
	var dirs []string
	checkouts := map[string]string{}
	for _, j := range job.Jobs {
		if j.Env["LOCKTORTURE"] != "${{ github.workspace }}/locktorture" {
			t.Errorf("the job's LOCKTORTURE is %q, want its checkout ${{ github.workspace }}/locktorture", j.Env["LOCKTORTURE"])
		}
		for _, st := range j.Steps {
			switch {
			case strings.HasPrefix(st.Uses, "actions/checkout@"):
				checkouts[st.With["path"]] = st.With["repository"]
				if st.With["repository"] != "" && len(st.With["ref"]) != 40 {
					t.Errorf("the job checks out %s at %q: pin a commit", st.With["repository"], st.With["ref"])
				}
			case st.Run != "" && strings.Contains(st.Run, "apt-get"):
				// The runner's system packages: here already.
			case st.Run != "":
				steps, dirs = append(steps, st.Run), append(dirs, st.Dir)
			}
		}
	}
	if repo, ok := checkouts["locktorture"]; !ok || repo != "locktorture/locktorture" {
		t.Fatalf("the job does not check out locktorture/locktorture at locktorture/ beside the lock: %v", checkouts)
	}
	if _, ok := checkouts["mylock"]; !ok || len(steps) < 2 {
		t.Fatalf("the job checks out %v and runs %d steps: want the lock at mylock/ and a build and a gate step", checkouts, len(steps))
	}

	ws := filepath.Join(t.TempDir(), "workspace")
	if rel, err := filepath.Rel(root, ws); err != nil || !strings.HasPrefix(rel, "..") {
		t.Fatalf("the workspace %s is not outside the repository %s", ws, root)
	}
	copyFiles(t, filepath.Join(root, "examples", "gate"), filepath.Join(ws, "mylock", "gate"))
	runner := filepath.Join(t.TempDir(), "runner-temp")
	if err := os.MkdirAll(runner, 0o755); err != nil {
		t.Fatal(err)
	}
	// This checkout stands for the pinned one (as a path of its own, it
	// would compile every package of the module again); under the race
	// detector, so does the build (GOFLAGS), which then reuses the
	// packages this test was compiled from.
	env := append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GITHUB_WORKSPACE="+ws, "RUNNER_TEMP="+runner, "LOCKTORTURE="+root)
	if race {
		env = append(env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -race"))
	}
	// runJob runs the steps and returns the exit status of the last (the
	// gate) and what it printed; any other step must succeed.
	runJob := func() (int, string) {
		t.Helper()
		for i, script := range steps {
			last := i == len(steps)-1
			if last {
				if !strings.Contains(script, "--budget 5m") {
					t.Fatalf("the gate step %q has no --budget 5m to narrow", script)
				}
				script = strings.Replace(script, "--budget 5m", "--cells '^[^+]*/client-pause$' --seeds 1 --duration 6s --rate 0.5", 1)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
			cmd.Dir, cmd.Env = filepath.Join(ws, dirs[i]), env
			began := time.Now()
			out, err := cmd.CombinedOutput()
			cancel()
			t.Logf("step %d took %s", i+1, time.Since(began).Round(time.Millisecond))
			var ee *exec.ExitError
			switch {
			case last && (err == nil || errors.As(err, &ee)):
				return cmd.ProcessState.ExitCode(), string(out)
			case err != nil:
				t.Fatalf("step %d (%s, in %s): %v\n%s", i+1, script, dirs[i], err, out)
			}
		}
		return -1, ""
	}
	if code, out := runJob(); code != 0 {
		t.Fatalf("the job on examples/gate: exit %d, want 0:\n%s", code, out)
	}
	// The same job on the lock whose release is a plain DEL.
	main := filepath.Join(ws, "mylock", "gate", "main.go")
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	del := strings.Replace(string(b), `Register("mylock", CompareAndDelete)`, `Register("mylock", PlainDel)`, 1)
	if del == string(b) {
		t.Fatalf("%s registers mylock without CompareAndDelete: the plain-DEL variant cannot be made", main)
	}
	if err := os.WriteFile(main, []byte(del), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runJob()
	if code != 1 || !strings.Contains(out, "mylock/client-pause: lease broken") {
		t.Fatalf("the job on the plain-DEL variant: exit %d, want 1 and the broken lease named:\n%s", code, out)
	}
}
