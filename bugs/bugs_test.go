package bugs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modules returns the folders of the bug modules, each with a go.mod and
// a go.fixed.mod.
func modules(t *testing.T) []string {
	t.Helper()
	mods, err := filepath.Glob(filepath.Join("*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range mods {
		dirs = append(dirs, filepath.Dir(m))
	}
	if len(dirs) == 0 {
		t.Fatal("no bug module under bugs/")
	}
	return dirs
}

// pinned is the version go.mod or go.fixed.mod gives the library: the
// last version on a line naming it (a replace's target, or a require).
func pinned(t *testing.T, path, lib string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := ""
	re := regexp.MustCompile(regexp.QuoteMeta(lib) + ` (v[0-9][^ \s]*)\s*$`)
	for _, l := range strings.Split(string(b), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			v = m[1]
		}
	}
	return v
}

// TestBugModules builds and vets every bug module with the version that
// had the bug (go.mod) and the one that fixed it (go.fixed.mod), checks
// that the two pin different versions of the library the module names,
// and that docs/bugs.md lists the module. The versions must be in the
// module cache (make bugs-deps downloads them; make test runs it first).
func TestBugModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every bug module twice")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "bugs.md"))
	if err != nil {
		t.Fatal(err)
	}
	libs := map[string]string{
		"gozero-reacquire":            "github.com/zeromicro/go-zero",
		"redsync-extend-cleanup":      "github.com/go-redsync/redsync/v4",
		"redsync-extend-status":       "github.com/go-redsync/redsync/v4",
		"rueidislock-extend-deadline": "github.com/redis/rueidis",
	}
	for _, dir := range modules(t) {
		t.Run(dir, func(t *testing.T) {
			lib, ok := libs[dir]
			if !ok {
				t.Fatalf("bugs/%s: which library it pins is not in this test's table", dir)
			}
			buggy, fixed := pinned(t, filepath.Join(dir, "go.mod"), lib), pinned(t, filepath.Join(dir, "go.fixed.mod"), lib)
			if buggy == "" || fixed == "" || buggy == fixed {
				t.Fatalf("bugs/%s pins %s %q (go.mod) and %q (go.fixed.mod): want two versions", dir, lib, buggy, fixed)
			}
			if !strings.Contains(string(doc), "bugs/"+dir) {
				t.Errorf("docs/bugs.md does not list bugs/%s", dir)
			}
			for _, modfile := range []string{"go.mod", "go.fixed.mod"} {
				for _, args := range [][]string{
					{"build", "-modfile=" + modfile, "-o", filepath.Join(t.TempDir(), dir), "."},
					{"vet", "-modfile=" + modfile, "."},
				} {
					cmd := exec.Command(goBin, args...)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("bugs/%s: go %s: %v\n%s", dir, strings.Join(args, " "), err, out)
					}
				}
			}
		})
	}
}
