package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWithoutDockerBackend: a program built without package
// cluster/docker that is asked for the docker backend says so in one
// line naming the import that adds it: before anything starts
// (CheckPrograms, which the harness calls first), and from Open,
// StartDocker, StartDockerFailover and BuildImage. Nothing else of the
// cluster needs the engine.
func TestWithoutDockerBackend(t *testing.T) {
	engine.mu.Lock()
	registered := engine.e
	engine.e = nil
	engine.mu.Unlock()
	t.Cleanup(func() {
		engine.mu.Lock()
		engine.e = registered
		engine.mu.Unlock()
	})
	ctx := context.Background()
	spec := Spec{Backend: BackendDocker}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"CheckPrograms", spec.CheckPrograms(true)},
		{"Open", func() error { _, err := Open(ctx, spec, WithDir(t.TempDir())); return err }()},
		{"StartDocker", func() error { _, err := StartDocker(ctx, 1, ""); return err }()},
		{"StartDockerFailover", func() error { _, err := StartDockerFailover(ctx, ""); return err }()},
		{"BuildImage", BuildImage(ctx, "locktorture/redis:never-built")},
	} {
		if !errors.Is(tc.err, ErrNoDockerBackend) || strings.Contains(tc.err.Error(), "\n") ||
			!strings.Contains(tc.err.Error(), `import _ "github.com/locktorture/locktorture/cluster/docker"`) {
			t.Errorf("%s without the docker backend: %v; want ErrNoDockerBackend, one line naming the import", tc.name, tc.err)
		}
	}
	if err := (Spec{Backend: BackendExternal, External: []string{"127.0.0.1:1"}}).CheckPrograms(false); err != nil {
		t.Errorf("the external backend without the docker backend: %v", err)
	}
}
