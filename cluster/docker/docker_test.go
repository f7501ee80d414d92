package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

var (
	imageOnce sync.Once
	imageErr  error
)

// dockerImage returns cluster.DefaultImage, built from this host's files
// once per test binary. It skips the test, saying why, only when no
// Docker engine answers; a failed build fails it.
func dockerImage(tb testing.TB) string {
	tb.Helper()
	if err := Ping(tb.Context()); err != nil {
		if errors.Is(err, cluster.ErrNoDocker) {
			tb.Skipf("docker backend not tested: %v", err)
		}
		tb.Fatal(err)
	}
	imageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		imageErr = cluster.BuildImage(ctx, cluster.DefaultImage)
	})
	if imageErr != nil {
		tb.Fatalf("make redis-image: %v", imageErr)
	}
	return cluster.DefaultImage
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
