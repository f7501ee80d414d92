package docker

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/locktorture/locktorture/cluster"
)

// The environment of a container that runs the clock shim.
const (
	envPreload   = "LD_PRELOAD="
	envClockFile = "LOCKTORTURE_CLOCK_FILE="
)

// Adopt finds the containers with the addresses ips (cluster.Adopted).
func (engine) Adopt(ctx context.Context, ips []netip.Addr) (cluster.Adopted, error) {
	b, err := newDockerBackend(ctx, "")
	if err != nil {
		return nil, nil // no engine answers: nothing to adopt
	}
	found, err := b.findByAddress(ctx, ips)
	if err != nil || found == nil {
		b.cli.Close()
		return nil, err
	}
	return &adopted{b: b, found: found}, nil
}

// adopted is the containers Adopt found.
type adopted struct {
	b     *dockerBackend
	found []cluster.AdoptedContainer
}

var _ cluster.Adopted = (*adopted)(nil)

func (a *adopted) Containers() []cluster.AdoptedContainer { return a.found }

func (a *adopted) State(ctx context.Context, id string) (running, paused bool, err error) {
	in, err := a.b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, false, err
	}
	st := in.Container.State
	return st != nil && st.Running, st != nil && st.Paused, nil
}

func (a *adopted) Start(ctx context.Context, id string) error {
	_, err := a.b.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return err
}

func (a *adopted) Unpause(ctx context.Context, id string) error {
	_, err := a.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	return err
}

func (a *adopted) Watch(id string) cluster.ContainerRun { return adoptedRun{a.b.watch(id)} }

func (a *adopted) Close() error { return a.b.cli.Close() }

// adoptedRun is an adopted container's run: Stop leaves it running,
// thawed.
type adoptedRun struct{ *containerRun }

func (r adoptedRun) Stop(ctx context.Context, _ time.Duration, paused bool) error {
	defer r.cancel()
	if paused {
		return r.Resume(ctx)
	}
	return nil
}

// findByAddress returns each ip's container, or nil when some has none.
func (b *dockerBackend) findByAddress(ctx context.Context, ips []netip.Addr) ([]cluster.AdoptedContainer, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return nil, fmt.Errorf("cluster: docker: list containers: %w", err)
	}
	out := make([]cluster.AdoptedContainer, len(ips))
	for i, ip := range ips {
		var match *container.Summary
		for j := range res.Items {
			s := &res.Items[j]
			if s.NetworkSettings == nil {
				continue
			}
			for _, ep := range s.NetworkSettings.Networks {
				if ep != nil && ep.IPAddress == ip {
					match = s
				}
			}
		}
		if match == nil {
			return nil, nil
		}
		name := strings.TrimPrefix(strings.Join(match.Names, ","), "/")
		in, err := b.cli.ContainerInspect(ctx, match.ID, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("cluster: docker inspect %s: %w", name, err)
		}
		out[i] = cluster.AdoptedContainer{ID: match.ID, Name: name, ClockFile: hostClockFile(in.Container)}
	}
	return out, nil
}

// hostClockFile is the host's path of a container's clock offset file
// when it preloads the shim and its LOCKTORTURE_CLOCK_FILE, at least 8
// bytes, is in a writable bind mount; "" otherwise.
func hostClockFile(c container.InspectResponse) string {
	if c.Config == nil {
		return ""
	}
	var preload, file string
	for _, kv := range c.Config.Env {
		if v, ok := strings.CutPrefix(kv, envPreload); ok {
			preload = v
		}
		if v, ok := strings.CutPrefix(kv, envClockFile); ok {
			file = v
		}
	}
	if !strings.Contains(preload, "clockshim") || file == "" {
		return ""
	}
	for _, m := range c.Mounts {
		if m.Type != "bind" || !m.RW {
			continue
		}
		rel, err := filepath.Rel(m.Destination, file)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		host := filepath.Join(m.Source, rel)
		if fi, err := os.Lstat(host); err == nil && fi.Mode().IsRegular() && fi.Size() >= 8 {
			return host
		}
	}
	return ""
}
