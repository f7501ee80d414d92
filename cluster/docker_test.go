package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run the docker backend with the engine that engine_test.go
// registers (package cluster/docker, which this package may not import),
// and look at the containers with the docker CLI, which BuildImage needs
// anyway.

var (
	imageOnce sync.Once
	imageErr  error
	imageTook time.Duration
)

// dockerImage returns DefaultImage, built from this host's files once per
// test binary (docker build's cache makes a rebuild cheap). It skips the
// test, saying why, only when no Docker engine answers; a failed build
// fails it.
func dockerImage(tb testing.TB) string {
	tb.Helper()
	e, err := containerEngine()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := e.Host(tb.Context()); err != nil {
		if errors.Is(err, ErrNoDocker) {
			tb.Skipf("docker backend not tested: %v", err)
		}
		tb.Fatal(err)
	}
	imageOnce.Do(func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		imageErr = BuildImage(ctx, DefaultImage)
		imageTook = time.Since(start)
	})
	if imageErr != nil {
		tb.Fatalf("make redis-image: %v", imageErr)
	}
	tb.Logf("image %s built in %v", DefaultImage, imageTook.Round(time.Millisecond))
	return DefaultImage
}

// startDockerTB starts n containers and closes them when the test ends.
func startDockerTB(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	return openTB(tb, Spec{Backend: BackendDocker, Nodes: n, Image: dockerImage(tb)}, opts...)
}

// The labels of package cluster/docker's containers (LabelRun and
// LabelOwner there).
const (
	labelRun   = "io.locktorture.run"
	labelOwner = "io.locktorture.owner"
)

// dockerPS returns the lines docker ps -a prints, in format, for every
// container of the docker backend (labelled labelRun).
func dockerPS(tb testing.TB, format string) []string {
	tb.Helper()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label="+labelRun, "--format", format).Output()
	if err != nil {
		tb.Fatalf("docker ps: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// runContainers returns "name (state)" of each container of the cluster
// whose containers are b.
func runContainers(tb testing.TB, b ContainerSet) []string {
	tb.Helper()
	var names []string
	for _, l := range dockerPS(tb, "{{.Names}} ({{.State}})") {
		if strings.HasPrefix(l, b.Name("")) {
			names = append(names, l)
		}
	}
	return names
}

func TestDockerKillRestartPause(t *testing.T) {
	c := startDockerTB(t, 3)
	ctx := t.Context()
	if c.Backend() != BackendDocker || c.Version() == "" || len(c.Versions()) != 3 {
		t.Errorf("Backend %q, Version %q, Versions %q", c.Backend(), c.Version(), c.Versions())
	}
	own := strings.Join(mine(t), " ")
	cs := runContainers(t, c.docker)
	for _, ct := range cs {
		name, _, _ := strings.Cut(ct, " ")
		if !strings.HasSuffix(ct, " (running)") || !strings.HasPrefix(name, c.docker.Name("n")) || !strings.Contains(own, name) {
			t.Errorf("container %s: want one of this process's, running, named after its node", ct)
		}
	}
	if len(cs) != 3 {
		t.Errorf("containers of the cluster: %v, want 3", cs)
	}

	n := c.Node(1)
	rc := proxyClient(t, c, 1)
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	direct := n.DirectAddr()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() {
		t.Error("Running() after Kill")
	}
	if err := n.Ping(ctx); err == nil {
		t.Error("PING answered after Kill")
	}
	if err := n.Pause(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Pause of a killed node: %v, want ErrNotRunning", err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n.DirectAddr() != direct || !n.Running() {
		t.Errorf("after Restart: %s (was %s), running %v", n.DirectAddr(), direct, n.Running())
	}
	if err := rc.Get(ctx, "k").Err(); err == nil {
		t.Error("the key survived a restart without persistence")
	}

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if !n.Paused() {
		t.Error("Paused() false after Pause")
	}
	late := make(chan error, 1)
	go func() { late <- rc.Set(context.Background(), "k", "late", 0).Err() }()
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if err := ping(pctx, n.Addr(), c.Password()); err == nil {
		t.Error("PING answered during the pause")
	}
	cancel()
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Errorf("SET sent during the pause: %v", err)
	}
	if v, err := rc.Get(ctx, "k").Result(); err != nil || v != "late" {
		t.Errorf("GET after Resume: %q, %v; want the late write", v, err)
	}

	if err := c.Node(2).Pause(); err != nil { // Close removes a paused container too
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if left := runContainers(t, c.docker); len(left) > 0 {
		t.Errorf("containers left after Close: %v", left)
	}
	if _, err := os.Stat(c.Node(0).LogPath()); err != nil {
		t.Errorf("log of n1 after Close (WithDir keeps it): %v", err)
	}
}

func TestDockerCancelRemoves(t *testing.T) {
	image := dockerImage(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := StartDocker(ctx, 2, image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if n := len(runContainers(t, c.docker)); n != 2 {
		t.Fatalf("%d containers, want 2", n)
	}
	cancel()
	deadline := time.Now().Add(20 * time.Second)
	for left := runContainers(t, c.docker); len(left) > 0; left = runContainers(t, c.docker) {
		if time.Now().After(deadline) {
			t.Fatalf("containers left 20 s after cancel: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary dir after Close: %v", err)
	}
}

// mine returns the names of the containers this process made: those
// whose owner label ("host pidns pid start") names this host and PID.
func mine(tb testing.TB) []string {
	tb.Helper()
	host, err := os.Hostname()
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, l := range dockerPS(tb, "{{.Names}} {{.Label \""+labelOwner+"\"}}") {
		if f := strings.Fields(l); len(f) == 5 && f[1] == host && f[3] == strconv.Itoa(os.Getpid()) {
			names = append(names, f[0])
		}
	}
	return names
}

func TestDockerStartFailsCleanly(t *testing.T) {
	image := dockerImage(t)
	before := mine(t)
	_, err := StartDocker(t.Context(), 2, image, WithDir(t.TempDir()), WithExtraArgs("--no-such-directive", "1"))
	if err == nil || !strings.Contains(err.Error(), "Bad directive") {
		t.Errorf("StartDocker with a bad argument: %v; want it to quote redis-server", err)
	}
	if after := mine(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("containers before a failed start: %v; after: %v", before, after)
	}

	_, err = StartDocker(t.Context(), 1, "locktorture/no-such-image:never")
	if err == nil || !strings.Contains(err.Error(), "not found in the Docker engine") {
		t.Errorf("StartDocker of a missing image: %v", err)
	}
}

func TestDockerClockShim(t *testing.T) {
	c := startDockerTB(t, 1, WithClockShim())
	ctx := t.Context()
	n := c.Node(0)
	checkTime(t, n, 0)
	rc := proxyClient(t, c, 0)
	if err := rc.Set(ctx, "lease", "x", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.SetClockOffset(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	checkTime(t, n, 20*time.Second)
	if err := rc.Get(ctx, "lease").Err(); err == nil {
		t.Error("a PX 10000 key survived a +20 s clock jump")
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	checkTime(t, n, 20*time.Second) // the offset outlives a restart
}

func TestDockerImageWithoutShim(t *testing.T) {
	image := dockerImage(t)
	tag := "locktorture/redis:test-noshim"
	dir := t.TempDir()
	df := fmt.Sprintf("FROM %s\nLABEL %s=\n", image, LabelClockShim)
	if err := os.WriteFile(dir+"/Dockerfile", []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), "docker", "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", tag).Run() })
	if shim, err := imageShim(t.Context(), tag); err != nil || shim != "" {
		t.Errorf("imageShim(%s) = %q, %v; want none", tag, shim, err)
	}
	if shim, err := imageShim(t.Context(), image); err != nil || shim != imageClockShim {
		t.Errorf("imageShim(%s) = %q, %v; want %s", image, shim, err, imageClockShim)
	}
	_, err := StartDocker(t.Context(), 1, tag, WithClockShim())
	if !errors.Is(err, ErrNoClockShim) {
		t.Errorf("StartDocker WithClockShim of an image without it: %v, want ErrNoClockShim", err)
	}
}

// TestDockerFailover: the failover topology in containers on a private
// network, the sentinels in containers too: healthy, a write replicates,
// cutting the primary's internal path promotes the replica, the heal
// brings the old primary back as a replica; Close leaves no container
// and no network.
func TestDockerFailover(t *testing.T) {
	image := dockerImage(t)
	start := time.Now()
	f, err := StartDockerFailover(context.Background(), image, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	t.Logf("healthy after %v", time.Since(start))
	ctx := t.Context()
	b := f.Cluster().docker
	if b == nil || b.Gateway() == "" {
		t.Fatalf("no private network: %+v", b)
	}
	network := strings.TrimSuffix(b.Name(""), "-") // package cluster/docker names it after the run
	if n := len(runContainers(t, b)); n != 5 {
		t.Errorf("%d containers, want 2 nodes and 3 sentinels", n)
	}
	n1, n2 := f.Nodes()[0], f.Nodes()[1]
	for _, n := range f.Nodes() {
		if host, _, _ := strings.Cut(f.InternalAddr(n), ":"); host != b.Gateway() {
			t.Errorf("%s: internal address %s, want one on the network's gateway %s", n.Name(), f.InternalAddr(n), b.Gateway())
		}
	}
	rc := newClient(n1.Addr(), f.Password())
	t.Cleanup(func() { rc.Close() })
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the write to reach the replica", func() bool {
		v, err := n2.Client().Get(ctx, "k").Result()
		return err == nil && v == "v"
	})

	px := f.InternalProxy(n1)
	px.Stop()
	start = time.Now()
	eventually(t, 20*time.Second, "the sentinels to promote n2", func() bool {
		p, err := f.Primary(ctx)
		return err == nil && p == n2
	})
	t.Logf("n2 promoted %v after the cut", time.Since(start))
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	p, err := f.WaitHealthy(waitCtx(t, 25*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy %v after the heal", time.Since(start))
	if p != n2 {
		// Healthy is what the heal promises: one primary, its replica
		// linked. On a loaded machine the sentinels may fail over a
		// second time (n2 missing its down-after), back to n1.
		t.Logf("primary after the heal: %s (a second failover)", p.Name())
	}

	// The passwords are in no container's command, and what the
	// containers wrote under Docker's umask 022 (the sentinels'
	// rewritten sentinel.conf, the nodes' CONFIG REWRITE after the
	// failover, logs, RDB files) is made private by the keeper.
	var ids []string
	for _, l := range dockerPS(t, "{{.ID}} {{.Names}} {{.State}}") {
		if f := strings.Fields(l); len(f) == 3 && strings.HasPrefix(f[1], b.Name("")) && f[2] == "running" {
			ids = append(ids, f[0])
		}
	}
	out, err := exec.Command("docker", append([]string{"inspect", "--format", "{{json .Path}} {{json .Args}} {{json .Config.Cmd}} {{json .Config.Env}}"}, ids...)...).Output()
	if err != nil || len(ids) != 5 {
		t.Fatalf("docker inspect %v: %v", ids, err)
	}
	for _, pw := range []string{f.Password(), f.SentinelPassword()} {
		if strings.Contains(string(out), pw) {
			t.Errorf("a password in a container's command or environment:\n%s", out)
		}
		if found := cmdlinesWith(t, pw); len(found) > 0 {
			t.Errorf("a password on a command line: %q", found)
		}
	}
	eventually(t, 10*time.Second, "the keeper to make every file private", func() bool {
		ents, err := os.ReadDir(f.c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if len(notPrivate(t, filepath.Join(f.c.dir, e.Name()))) > 0 {
				return false
			}
		}
		return true
	})

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, f.c.dir, f.Password(), f.SentinelPassword())
	if left := runContainers(t, b); len(left) > 0 {
		t.Errorf("containers left after Close: %v", left)
	}
	if out, err := exec.Command("docker", "network", "ls", "-q", "--filter", "name="+network).Output(); err != nil || len(out) > 0 {
		t.Errorf("network %s after Close: %q, %v", network, out, err)
	}
}

// TestEnsureImage: a missing image that ensureImage may build is built,
// with a line before and after; one it may not build is an error naming
// it. A tag of the test's own stands for DefaultImage, so that the image
// other tests run is never removed under them.
func TestEnsureImage(t *testing.T) {
	dockerImage(t) // skips without an engine
	tag := fmt.Sprintf("locktorture/redis:ensure-test-%d", os.Getpid())
	rmi := func() {
		out, err := exec.Command("docker", "rmi", "-f", tag).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "No such image") {
			t.Fatalf("docker rmi %s: %v: %s", tag, err, out)
		}
	}
	rmi()
	t.Cleanup(rmi)
	var log strings.Builder
	if err := ensureImage(t.Context(), tag, tag, &log, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "building the docker image "+tag) || !strings.Contains(log.String(), "built "+tag) {
		t.Errorf("log %q: want a line before and after the build", log.String())
	}
	if _, err := imageShim(t.Context(), tag); err != nil {
		t.Fatalf("the built image: %v", err)
	}
	log.Reset()
	if err := ensureImage(t.Context(), tag, tag, &log, nil); err != nil || log.Len() > 0 {
		t.Errorf("image present: err %v, log %q; want nothing done", err, log.String())
	}
	// Open refuses a missing image of another name before it starts
	// anything.
	_, err := Open(t.Context(), Spec{Backend: BackendDocker, Image: "locktorture/no-such-image:x"})
	if err == nil || !strings.Contains(err.Error(), "locktorture/no-such-image:x") {
		t.Errorf("a missing image of another name: err %v", err)
	}
}
