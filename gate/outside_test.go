package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/gate"
)

// modulePath is this module's, which the example requires.
const modulePath = "github.com/locktorture/locktorture"

// checkoutPlaceholder stands for the checkout in the line docs/gate.md
// gives.
const checkoutPlaceholder = "/path/to/a/checkout"

// TestExampleOutsideRepository: examples/gate, copied into a folder
// outside this repository and pointed at this checkout with the line
// docs/gate.md gives (go mod edit -replace), builds and compiles nothing
// of the docker backend: what a lock author
// who copies it gets before the version it requires is published. The go
// commands run offline and outside any workspace (GOPROXY=off, GOWORK=off,
// GOTOOLCHAIN=local): every module comes from the module cache that
// building this repository filled, and examples/go.work, which serves the
// example inside the repository, plays no part.
func TestExampleOutsideRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if mod, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !bytes.HasPrefix(mod, []byte("module "+modulePath+"\n")) {
		t.Fatalf("%s is not the root of %s: %v", root, modulePath, err)
	}
	edit := documentedReplace(t, filepath.Join(root, "docs", "gate.md"))

	dir := filepath.Join(t.TempDir(), "mylock-gate")
	if rel, err := filepath.Rel(root, dir); err != nil || !strings.HasPrefix(rel, "..") {
		t.Fatalf("the copy %s is not outside the repository %s", dir, root)
	}
	copyFiles(t, filepath.Join(root, "examples", "gate"), dir)

	env := append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	goCmd := func(timeout time.Duration, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s (in the copy): %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// As committed, the example requires a published version and
	// replaces nothing, and docs/gate.md's go get names that version.
	version := requiredVersion(t, goCmd(time.Minute, "go", "mod", "edit", "-json"), "")
	if doc, err := os.ReadFile(filepath.Join(root, "docs", "gate.md")); err != nil || !bytes.Contains(doc, []byte("go get "+modulePath+"@"+version+"\n")) {
		t.Errorf("docs/gate.md has no line go get %s@%s (%v)", modulePath, version, err)
	}
	for i, a := range edit {
		edit[i] = strings.Replace(a, checkoutPlaceholder, root, 1)
	}
	goCmd(time.Minute, edit...)
	requiredVersion(t, goCmd(time.Minute, "go", "mod", "edit", "-json"), root)
	var flags []string
	if race {
		flags = []string{"-race"} // as this test runs: its compiled packages serve the copy
	}
	goCmd(5*time.Minute, append(append([]string{"go", "build"}, flags...), "./...")...)
	for _, d := range strings.Fields(goCmd(time.Minute, "go", "list", "-deps", ".")) {
		if regexp.MustCompile(`testcontainers|/moby/|opentelemetry|containerd|` + modulePath + `/cluster/docker$`).MatchString(d) {
			t.Errorf("the example compiles %s: a gate must not compile the docker backend", d)
		}
	}
	// The example's own tests (two short gates) run inside the
	// repository (make test), and TestCIJobOutsideRepository gates a copy
	// as the documented CI job does.
}

// requiredVersion returns the version of this module that the go.mod
// printed by go mod edit -json requires, failing the test unless it is a
// release (vX.Y.Z, not v0.0.0) and the module is replaced by dir ("":
// not replaced).
func requiredVersion(tb testing.TB, modJSON, dir string) string {
	tb.Helper()
	var mod struct {
		Require []struct{ Path, Version string }
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal([]byte(modJSON), &mod); err != nil {
		tb.Fatalf("go mod edit -json: %v", err)
	}
	var version, replaced string
	for _, r := range mod.Require {
		if r.Path == modulePath {
			version = r.Version
		}
	}
	for _, r := range mod.Replace {
		if r.Old.Path == modulePath {
			replaced = r.New.Path
		}
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(version) || version == "v0.0.0" {
		tb.Errorf("the example requires %s %q: want a release it can be built with elsewhere", modulePath, version)
	}
	if replaced != dir {
		tb.Fatalf("the example's go.mod replaces %s with %q, want %q", modulePath, replaced, dir)
	}
	return version
}

// documentedReplace returns the words of the line docs/gate.md gives to
// point a module at a checkout: go mod edit -replace
// github.com/locktorture/locktorture=/path/to/a/checkout.
func documentedReplace(tb testing.TB, doc string) []string {
	tb.Helper()
	f, err := os.Open(doc)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	want := "go mod edit -replace " + modulePath + "=" + checkoutPlaceholder
	for s := bufio.NewScanner(f); s.Scan(); {
		if strings.TrimSpace(s.Text()) == want {
			return strings.Fields(want)
		}
	}
	tb.Fatalf("%s gives no line %q", doc, want)
	return nil
}

// copyFiles copies the regular files of folder src (not its folders) into
// dst, which it creates.
func copyFiles(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestUnknownLockSaysHowToGateYourOwn: torture gate --lock NAME for a
// lock the registry does not know exits 2 with one line that says how a
// lock of one's own is gated, and every file it points at exists.
func TestUnknownLockSaysHowToGateYourOwn(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := gate.ExitCode(gate.Command(t.Context(), []string{"--lock", "mylock", "--out", t.TempDir()}, &stdout, &stderr), &stderr)
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if code != gate.ExitError || stdout.Len() > 0 || msg == "" || strings.Contains(msg, "\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit %d and one line", code, stdout.String(), stderr.String(), gate.ExitError)
	}
	for _, want := range []string{`unknown lock "mylock"`, "locks.Register", "gate.Main", "exec:COMMAND"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the line does not say %q: %s", want, msg)
		}
	}
	for _, path := range regexp.MustCompile(`\b(?:docs|examples|locks)/[\w./-]*\w`).FindAllString(msg, -1) {
		if _, err := os.Stat(filepath.Join("..", path)); err != nil {
			t.Errorf("the line points at %s: %v", path, err)
		}
	}
}
