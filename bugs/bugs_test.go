package bugs

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modules returns the folders of the bug modules, each with a go.mod and
// a go.fixed.mod (lineproto, the Go clients' protocol, has no
// go.fixed.mod: it is no bug).
func modules(t *testing.T) []string {
	t.Helper()
	mods, err := filepath.Glob(filepath.Join("*", "go.fixed.mod"))
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

// TestLineproto: the Go clients' protocol package, a module of its own,
// requires nothing, and its tests pass.
func TestLineproto(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	mod, err := os.ReadFile(filepath.Join("lineproto", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mod), "require") {
		t.Errorf("bugs/lineproto/go.mod requires something:\n%s", mod)
	}
	cmd := exec.Command(goBin, "test", "-count=1", ".")
	cmd.Dir = "lineproto"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("bugs/lineproto: go test: %v\n%s", err, out)
	}
}

// TestPatchBugs checks every bug kept as source (a folder with a
// fix.patch, for a library this machine's registries do not serve):
// third_party/ is, file for file, the version that had the bug and
// third_party/ with fix.patch applied the version that fixed it, by the
// git blob ids VERSIONS records for the two tags (the first tag listed is
// the buggy one); its client, started through python.sh, names that
// version in its hello on each; docs/bugs.md lists the folder.
func TestPatchBugs(t *testing.T) {
	patches, err := filepath.Glob(filepath.Join("*", "fix.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) == 0 {
		t.Skip("no bug kept as source")
	}
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no patch command (scripts/deps installs it)")
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "bugs.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		dir := filepath.Dir(p)
		t.Run(dir, func(t *testing.T) {
			if !strings.Contains(string(doc), "bugs/"+dir) {
				t.Errorf("docs/bugs.md does not list bugs/%s", dir)
			}
			tags, blobs := versions(t, filepath.Join(dir, "VERSIONS"))
			if len(tags) != 2 {
				t.Fatalf("bugs/%s/VERSIONS names %d tags, want the buggy one and the fixed one", dir, len(tags))
			}
			buggy, fixed := copyDir(t, filepath.Join(dir, "third_party")), copyDir(t, filepath.Join(dir, "third_party"))
			cmd := exec.Command("patch", "-s", "-p1", "-d", fixed, "-i", filepath.Join(mustAbs(t, dir), "fix.patch"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("patch: %v\n%s", err, out)
			}
			for i, lib := range []string{buggy, fixed} {
				tag := tags[i]
				for file, want := range blobs[tag] {
					if got := blobID(t, filepath.Join(lib, file)); got != want {
						t.Errorf("%s (%s): blob %s, want %s's %s", file, []string{"third_party", "third_party + fix.patch"}[i], got, tag, want)
					}
				}
				if got := helloVersion(t, filepath.Join(dir, "client.py"), lib); got != "" && got != tag {
					t.Errorf("the client on %s: the hello says version %q, want %q", []string{"third_party", "third_party + fix.patch"}[i], got, tag)
				}
			}
		})
	}
}

// versions reads a VERSIONS file: lines of tag, commit, file and git blob
// id; it returns the tags in their order and each tag's file → blob.
func versions(t *testing.T, path string) ([]string, map[string]map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	blobs := map[string]map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 4 {
			t.Fatalf("%s: %q: want tag, commit, file and blob", path, l)
		}
		if blobs[f[0]] == nil {
			tags = append(tags, f[0])
			blobs[f[0]] = map[string]string{}
		}
		blobs[f[0]][f[2]] = f[3]
	}
	return tags, blobs
}

// blobID is git's id of the file's content (git hash-object).
func blobID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// copyDir copies the files under src into a new temporary folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// helloVersion starts client on lib through python.sh, sends it a hello
// (nodes it never reaches: a client connects at its first request) and
// returns the version its reply gives the library; "" when no python3
// here can import redis (python.sh says so and exits 1).
func helloVersion(t *testing.T, client, lib string) string {
	t.Helper()
	run := "./python.sh"
	cmd := exec.Command(run, client, lib)
	cmd.Stdin = strings.NewReader(`{"id":1,"op":"hello","protocol":2,"client":0,"addrs":["127.0.0.1:1"],"ttl_ms":1000,"node_timeout_ms":100,"tries":3,"retry_delay_ms":50,"seed":1}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "no python3") {
			t.Log(strings.TrimSpace(stderr.String()))
			return ""
		}
		t.Fatalf("%s %s %s: %v\n%s", run, client, lib, err, stderr.String())
	}
	var reply struct {
		Result   string            `json:"result"`
		Versions map[string]string `json:"versions"`
	}
	if err := json.Unmarshal(out, &reply); err != nil || reply.Result != "ok" {
		t.Fatalf("%s %s %s: hello reply %q (%v)", run, client, lib, out, err)
	}
	for lib, v := range reply.Versions {
		if lib != "redis-py" {
			return v
		}
	}
	t.Fatalf("%s: the hello reply names no library version: %s", run, out)
	return ""
}
