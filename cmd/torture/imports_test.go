package main

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestImportedWhereNeeded: the heavy backends are imported only by the
// programs that run them. The packages a lock's gate is built from (and
// the modules under bugs/ built on them) depend on neither the Docker
// backend (the Docker client, testcontainers-go, OpenTelemetry) nor the
// etcd lock (the etcd client, gRPC): a user's gate compiles none of them.
func TestImportedWhereNeeded(t *testing.T) {
	const mod = "github.com/locktorture/locktorture/"
	gate := []string{"gate", "matrix", "harness", "trial", "cluster", "nemesis", "locks", "checker", "report", "explain"}
	for _, tc := range []struct {
		pkg, what string
		with      []string
		forbid    *regexp.Regexp
	}{
		{"cluster/docker", "the docker backend", []string{"cmd/torture", "cmd/redis-image"},
			regexp.MustCompile(`^` + regexp.QuoteMeta(mod) + `cluster/docker$|testcontainers|/moby/|opentelemetry|containerd`)},
		{"locks/etcdlock", "the etcd client", []string{"cmd/torture"},
			regexp.MustCompile(`^` + regexp.QuoteMeta(mod) + `locks/etcdlock$|^go\.etcd\.io/|^google\.golang\.org/grpc`)},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			var pkgs []string
			for _, p := range append(slices.Clone(tc.with), gate...) {
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
			for _, p := range tc.with {
				if !slices.Contains(deps[p], mod+tc.pkg) {
					t.Errorf("%s does not import %s%s: it cannot run %s", p, mod, tc.pkg, tc.what)
				}
			}
			for _, p := range gate {
				if len(deps[p]) == 0 {
					t.Errorf("go list printed nothing of %s", p)
				}
				for _, d := range deps[p] {
					if tc.forbid.MatchString(d) {
						t.Errorf("%s depends on %s: a gate would compile %s", p, d, tc.what)
						break
					}
				}
			}
		})
	}
}
