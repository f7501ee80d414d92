package docker

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestImportedWhereNeeded: the programs that run the docker backend
// import this package, and the packages a lock's gate is built from do
// not, nor anything of the Docker client, testcontainers-go or
// OpenTelemetry: a user's gate compiles none of them.
func TestImportedWhereNeeded(t *testing.T) {
	const mod = "github.com/locktorture/locktorture/"
	with := []string{"cmd/torture", "cmd/redis-image"}
	without := []string{"gate", "matrix", "harness", "trial", "cluster", "nemesis", "locks", "checker", "report"}
	var pkgs []string
	for _, p := range append(with, without...) {
		pkgs = append(pkgs, mod+p)
	}
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		deps[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	docker := regexp.MustCompile(`^` + regexp.QuoteMeta(mod) + `cluster/docker$|testcontainers|/moby/|opentelemetry|containerd`)
	for _, p := range with {
		if !slices.Contains(deps[p], mod+"cluster/docker") {
			t.Errorf("%s does not import %scluster/docker: it cannot run the docker backend", p, mod)
		}
	}
	for _, p := range without {
		if len(deps[p]) == 0 {
			t.Errorf("go list printed nothing of %s", p)
		}
		for _, d := range deps[p] {
			if docker.MatchString(d) {
				t.Errorf("%s depends on %s: a gate would compile the docker backend", p, d)
				break
			}
		}
	}
}
