package compose

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ToxiproxyImage is the image BuildToxiproxyImage builds by default and
// the compose file runs.
const ToxiproxyImage = "locktorture/toxiproxy:local"

// toxiproxyModule is the module whose server the image runs, at go.mod's
// version.
const toxiproxyModule = "github.com/Shopify/toxiproxy/v2"

// BuildToxiproxyImage builds the image tag (ToxiproxyImage if ""), FROM
// scratch, of toxiproxy's server at go.mod's version, built static with
// its version stamped. It needs go and docker in PATH, in a module that
// requires toxiproxy.
func BuildToxiproxyImage(ctx context.Context, tag string) error {
	tag = cmp.Or(tag, ToxiproxyImage)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("compose: toxiproxy image: the go command builds toxiproxy's server: %w", err)
	}
	version, err := exec.CommandContext(ctx, goCmd, "list", "-m", "-f", "{{.Version}}", toxiproxyModule).Output()
	if err != nil {
		return fmt.Errorf("compose: toxiproxy image: go list -m %s: %w%s", toxiproxyModule, err, stderrOf(err))
	}
	dir, err := os.MkdirTemp("", "locktorture-toxiproxy-image-")
	if err != nil {
		return fmt.Errorf("compose: toxiproxy image: %w", err)
	}
	defer os.RemoveAll(dir)
	v := strings.TrimSpace(string(version))
	build := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags", "-s -w -X "+toxiproxyModule+".Version="+v,
		"-o", filepath.Join(dir, "toxiproxy-server"), toxiproxyModule+"/cmd/server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("compose: toxiproxy image: go build %s/cmd/server: %w\n%s", toxiproxyModule, err, out)
	}
	dockerfile := strings.Join([]string{
		"# Written by locktorture's compose.BuildToxiproxyImage: toxiproxy's server " + v + ", static.",
		"FROM scratch",
		"COPY toxiproxy-server /toxiproxy-server",
		"EXPOSE 8474",
		`ENTRYPOINT ["/toxiproxy-server"]`,
		`CMD ["-host", "0.0.0.0", "-port", "8474"]`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return fmt.Errorf("compose: toxiproxy image: %w", err)
	}
	cmd := exec.CommandContext(ctx, "docker", "build", "--label", "io.locktorture.toxiproxy-version="+v, "-t", tag, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("compose: docker build %s: %w", tag, ctx.Err())
		}
		return fmt.Errorf("compose: docker build %s: %w\n%s", tag, err, out)
	}
	return nil
}

// stderrOf is ": " and the standard error of a failed command, if any.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
