package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

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
	if err := DockerPing(tb.Context()); err != nil {
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

// runContainers returns the names of the containers of the cluster with
// id run.
func runContainers(tb testing.TB, run string) []string {
	tb.Helper()
	cs, err := Containers(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		if c.Run == run {
			names = append(names, c.Name+" ("+c.State+")")
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
	cs, err := Containers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, ct := range cs {
		if ct.Run == c.docker.run {
			mine++
			if !ct.Mine || ct.State != "running" || !strings.HasPrefix(ct.Name, "locktorture-"+c.docker.run+"-n") {
				t.Errorf("container %+v", ct)
			}
		}
	}
	if mine != 3 {
		t.Errorf("%d containers of the run, want 3", mine)
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
	if left := runContainers(t, c.docker.run); len(left) > 0 {
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
	if n := len(runContainers(t, c.docker.run)); n != 2 {
		t.Fatalf("%d containers, want 2", n)
	}
	cancel()
	deadline := time.Now().Add(20 * time.Second)
	for left := runContainers(t, c.docker.run); len(left) > 0; left = runContainers(t, c.docker.run) {
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

// mine returns the names of the containers this process made.
func mine(tb testing.TB) []string {
	tb.Helper()
	cs, err := Containers(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		if c.Mine {
			names = append(names, c.Name)
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

func TestRemoveStaleContainers(t *testing.T) {
	image := dockerImage(t)
	ctx := t.Context()
	cli, err := newDockerClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := strings.Fields(ownerLabel())
	if len(me) != 4 {
		t.Fatalf("ownerLabel() = %q", ownerLabel())
	}
	owner := func(host, pid, start string) string { return strings.Join([]string{host, me[1], pid, start}, " ") }
	run := fmt.Sprintf("stale%d", os.Getpid())
	for _, tc := range []struct {
		name, owner string
		stale       bool
	}{
		{"dead", owner(me[0], fmt.Sprint(dead.Process.Pid), "1"), true},
		{"reused", owner(me[0], me[2], "1"), true}, // this PID, another start time
		{"alive", ownerLabel(), false},
		{"elsewhere", owner("another-host", fmt.Sprint(dead.Process.Pid), "1"), false},
		{"garbled", "who knows", false},
	} {
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name:   "locktorture-" + run + "-" + tc.name,
			Config: &container.Config{Image: image, Labels: map[string]string{LabelRun: run, LabelOwner: tc.owner}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
		})
	}
	for _, nw := range []struct{ name, owner string }{
		{"locktorture-" + run + "-net-dead", owner(me[0], fmt.Sprint(dead.Process.Pid), "1")},
		{"locktorture-" + run + "-net-alive", ownerLabel()},
	} {
		if _, err := cli.NetworkCreate(ctx, nw.name, client.NetworkCreateOptions{Driver: "bridge",
			Labels: map[string]string{LabelRun: run, LabelOwner: nw.owner}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.NetworkRemove(context.Background(), nw.name, client.NetworkRemoveOptions{}) })
	}
	removed, err := RemoveStaleContainers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range removed {
		if strings.Contains(r, run) {
			got = append(got, r)
		}
	}
	slices.Sort(got)
	want := []string{"locktorture-" + run + "-dead", "locktorture-" + run + "-net-dead", "locktorture-" + run + "-reused"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("removed %v, want %v", got, want)
	}
	if left := runContainers(t, run); len(left) != 3 {
		t.Errorf("left %v, want alive, elsewhere and garbled", left)
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
	if b == nil || b.network == "" || b.gateway == "" {
		t.Fatalf("no private network: %+v", b)
	}
	if n := len(runContainers(t, b.run)); n != 5 {
		t.Errorf("%d containers, want 2 nodes and 3 sentinels", n)
	}
	n1, n2 := f.Nodes()[0], f.Nodes()[1]
	for _, n := range f.Nodes() {
		if host, _, _ := strings.Cut(f.InternalAddr(n), ":"); host != b.gateway {
			t.Errorf("%s: internal address %s, want one on the network's gateway %s", n.Name(), f.InternalAddr(n), b.gateway)
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
	out, err := exec.Command("docker", "ps", "-q", "--filter", "label="+LabelRun+"="+b.run).Output()
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(out))
	out, err = exec.Command("docker", append([]string{"inspect", "--format", "{{json .Path}} {{json .Args}} {{json .Config.Cmd}} {{json .Config.Env}}"}, ids...)...).Output()
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
	if left := runContainers(t, b.run); len(left) > 0 {
		t.Errorf("containers left after Close: %v", left)
	}
	if out, err := exec.Command("docker", "network", "ls", "-q", "--filter", "name="+b.network).Output(); err != nil || len(out) > 0 {
		t.Errorf("network %s after Close: %q, %v", b.network, out, err)
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
		cli, err := newDockerClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if _, err := cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Fatal(err)
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
