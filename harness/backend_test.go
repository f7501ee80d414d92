package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/internal/testutil"
)

func TestBackendConfigErrors(t *testing.T) {
	ext := []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}
	for _, tc := range []struct {
		name string
		cfg  harness.Config
		want string
	}{
		{"unknown", harness.Config{Workload: harness.Workload{Lock: "setnx"}, Cluster: harness.Cluster{Backend: "vm"}}, "unknown backend"},
		{"image elsewhere", harness.Config{Workload: harness.Workload{Lock: "setnx"}, Cluster: harness.Cluster{Image: "redis:7"}}, "for the docker backend"},
		{"external elsewhere", harness.Config{Workload: harness.Workload{Lock: "setnx"}, Cluster: harness.Cluster{Backend: "docker", External: ext[:1]}}, "for the external backend"},
		{"no external nodes", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external"}}, "needs its nodes"},
		{"count mismatch", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext, Nodes: 5}}, "3 external addresses"},
		{"external persistence", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext, Persistence: true}}, "persistence is set by whoever"},
		{"external failover", harness.Config{Workload: harness.Workload{Lock: "setnx"}, Cluster: harness.Cluster{Backend: "external", External: ext[:2], Topology: "failover"}}, "not the external backend's"},
		{"external kill", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext}, Faults: harness.Faults{Nemesis: []string{"kill"}}}, "kill refused: the external backend does not run the nodes"},
		{"external pause", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext}, Faults: harness.Faults{Nemesis: []string{"pause"}}}, "pause refused"},
		{"external clock", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext}, Faults: harness.Faults{Nemesis: []string{"clock"}}}, "cannot shift their clocks"},
		{"external partition, no toxiproxy", harness.Config{Workload: harness.Workload{Lock: "redlock"}, Cluster: harness.Cluster{Backend: "external", External: ext}, Faults: harness.Faults{Nemesis: []string{"partition"}}}, "give it a toxiproxy server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dir = "x"
			_, err := tc.cfg.WithDefaults()
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
	cfg, err := harness.Config{
		Workload: harness.Workload{Lock: "redlock"},
		Cluster:  harness.Cluster{Backend: "external", External: ext, Toxiproxy: "http://10.0.0.9:8474"},
		Faults:   harness.Faults{Nemesis: []string{"partition", "latency", "client-pause"}},
		Output:   harness.Output{Dir: "x"},
	}.WithDefaults()
	if err != nil || cfg.Nodes != 3 {
		t.Errorf("external with toxiproxy: nodes %d, %v; want 3 nodes and network faults accepted", cfg.Nodes, err)
	}
	if cfg, err := (harness.Config{Workload: harness.Workload{Lock: "setnx"}, Output: harness.Output{Dir: "x"}}).WithDefaults(); err != nil || cfg.Backend != "process" {
		t.Errorf("default backend %q, %v; want process", cfg.Backend, err)
	}
}

// TestExternalRun drives Redis nodes and a toxiproxy server that the test
// starts as if they ran on another machine: the run reaches the nodes
// only through proxies it creates on that server, cuts and slows them
// there, records the nodes' versions, and deletes its proxies at the end.
func TestExternalRun(t *testing.T) {
	r := testutil.External(t, 3)
	remote, addrs := r.Cluster, r.Addrs

	sum, evs, _, err := run(t, context.Background(), harness.Config{
		Workload: harness.Workload{Lock: "redlock", Clients: 4, Duration: 4 * time.Second, TTL: 500 * time.Millisecond, Seed: 7},
		Cluster:  harness.Cluster{Backend: "external", External: addrs, Toxiproxy: r.URL, Password: remote.Password()},
		Faults:   harness.Faults{Nemesis: []string{"partition", "latency"}, NemesisInterval: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Config.Backend != "external" || !slices.Equal(sum.NodeVersions, remote.Versions()) {
		t.Errorf("summary: backend %q, node versions %q; want external and %q", sum.Config.Backend, sum.NodeVersions, remote.Versions())
	}
	starts, stops := faultEvents(evs)
	// A step scheduled at the very end may not begin when the heals
	// before it ran late (remote toxiproxy calls on a loaded machine);
	// every step that began was healed.
	if starts == 0 || starts != stops || starts > sum.Faults || starts < sum.Faults-1 {
		t.Errorf("%d fault starts, %d stops, %d scheduled", starts, stops, sum.Faults)
	}
	var acquired int
	for _, e := range evs {
		if e.F == history.Acquire && e.Type == history.Ok {
			acquired++
		}
	}
	if acquired == 0 {
		t.Error("no lock acquired through the remote proxies")
	}
	if n := len(r.Toxiproxy.Collection.Proxies()); n != 0 {
		t.Errorf("%d proxies left on the toxiproxy server", n)
	}
	for _, n := range remote.Nodes() {
		if err := n.Ping(t.Context()); err != nil {
			t.Errorf("external %s after the run: %v", n.Name(), err)
		}
	}
}

// TestDockerRun: the run of the issue, torture run --backend docker --lock
// redlock --nodes 5 --nemesis kill,pause, shortened; it leaves no
// container behind.
func TestDockerRun(t *testing.T) {
	image := testutil.DockerImage(t)
	sum, evs, _, err := run(t, context.Background(), harness.Config{
		Workload: harness.Workload{Lock: "redlock", Clients: 5, Duration: 5 * time.Second, TTL: 500 * time.Millisecond, Seed: 2},
		Cluster:  harness.Cluster{Backend: "docker", Image: image, Nodes: 5},
		Faults:   harness.Faults{Nemesis: []string{"kill", "pause"}, NemesisInterval: 600 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Config.Backend != "docker" || len(sum.NodeVersions) != 5 || sum.NodeVersions[0] == "" {
		t.Errorf("summary: backend %q, node versions %q", sum.Config.Backend, sum.NodeVersions)
	}
	starts, stops := faultEvents(evs)
	if starts == 0 || starts != stops {
		t.Errorf("%d fault starts and %d stops", starts, stops)
	}
	if left := testutil.MyContainers(t); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

// TestDockerRunInterrupted: Ctrl-C (a cancelled context, as main's
// signal.NotifyContext gives) in the middle of a docker run with faults
// leaves no container behind once Run returns.
func TestDockerRunInterrupted(t *testing.T) {
	image := testutil.DockerImage(t)
	cfg := harness.Config{
		Workload: harness.Workload{Lock: "redlock", Duration: time.Minute, TTL: 500 * time.Millisecond, Seed: 3},
		Cluster:  harness.Cluster{Backend: "docker", Image: image, Nodes: 5},
		Faults:   harness.Faults{Nemesis: []string{"kill", "pause"}, NemesisInterval: 300 * time.Millisecond},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	}
	// Interrupt once a fault has started, so one is active or healing.
	sum, err := interruptWhen(t, cfg, func(evs []history.Event) bool {
		starts, _ := faultEvents(evs)
		return starts > 0
	})
	if !errors.Is(err, context.Canceled) || !sum.Interrupted {
		t.Errorf("err = %v, interrupted = %v; want context.Canceled and true", err, sum.Interrupted)
	}
	if left := testutil.MyContainers(t); len(left) > 0 {
		t.Errorf("containers left after an interrupted run: %v", left)
	}
}

// TestDockerFailoverRun: the failover scenario on the docker backend
// (primary, replica and sentinels in containers on a private network):
// the fault promotes the replica and heals, and no container is left.
func TestDockerFailoverRun(t *testing.T) {
	image := testutil.DockerImage(t)
	sum, evs, _, err := run(t, context.Background(), harness.Config{
		Workload: harness.Workload{Lock: "setnx", Clients: 4, Duration: 12 * time.Second, TTL: 2 * time.Second, Seed: 1},
		Cluster:  harness.Cluster{Backend: "docker", Image: image, Topology: "failover"},
		Faults:   harness.Faults{Nemesis: []string{"failover"}, NemesisInterval: 3 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Config.Backend != "docker" || len(sum.NodeVersions) != 2 {
		t.Errorf("summary: backend %q, node versions %q", sum.Config.Backend, sum.NodeVersions)
	}
	if starts, stops := faultEvents(evs); starts == 0 || starts != stops {
		t.Errorf("%d fault starts and %d stops", starts, stops)
	}
	if left := testutil.MyContainers(t); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

// TestDockerClockRefusedWithoutShim: the clock kind needs the shim in the
// image; an image without it is refused in one line before any container
// starts (cluster.Open reads the image's label first).
func TestDockerClockRefusedWithoutShim(t *testing.T) {
	image := testutil.DockerImage(t)
	tag := "locktorture/redis:harness-noshim"
	dir := t.TempDir()
	df := fmt.Sprintf("FROM %s\nLABEL %s=\n", image, cluster.LabelClockShim)
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), "docker", "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", tag).Run() })
	_, err := harness.Run(t.Context(), harness.Config{
		Workload: harness.Workload{Lock: "redlock"},
		Cluster:  harness.Cluster{Backend: "docker", Image: tag, Nodes: 3},
		Faults:   harness.Faults{Nemesis: []string{"clock"}},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	})
	if !errors.Is(err, cluster.ErrNoClockShim) || !strings.Contains(err.Error(), "image "+tag+" carries none") || strings.Contains(err.Error(), "\n") {
		t.Errorf("clock on an image without the shim: %v; want a one-line refusal", err)
	}
	if left := testutil.MyContainers(t); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
	_, err = harness.Run(t.Context(), harness.Config{
		Workload: harness.Workload{Lock: "redlock"},
		Cluster:  harness.Cluster{Backend: "docker", Image: "locktorture/no-such-image:never", Nodes: 3},
		Output:   harness.Output{Dir: filepath.Join(t.TempDir(), "run")},
	})
	if err == nil || !strings.Contains(err.Error(), "not found in the Docker engine") {
		t.Errorf("a missing image: %v", err)
	}
}
