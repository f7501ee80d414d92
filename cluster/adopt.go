package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Nodes someone else runs that are containers of this machine's Docker
// engine (the compose cluster of deploy/compose) are adopted by Connect:
// found by their address (an address of the container on one of its
// networks), they can be killed (docker kill) and restarted (docker start
// of the same container), paused (docker pause) and resumed, and, when
// the container runs the clock shim with its offset file bind-mounted
// from this machine, have their clocks shifted. Close leaves them as it
// found them: running, unpaused, their clocks right; their containers
// are never removed. Either every node is adopted or none: faults that
// could reach some nodes and not others would test something else than
// they say.

// adoptTimeout bounds the look for the containers.
const adoptTimeout = 5 * time.Second

// The environment of a container that runs the clock shim.
const (
	envPreload   = "LD_PRELOAD="
	envClockFile = clockFileEnv + "="
)

// adoption is what Connect learned of external nodes that are containers.
type adoption struct {
	b          *dockerBackend // the engine's client; it runs nothing of its own
	containers []adopted      // by node index
}

// adopted is one node's container.
type adopted struct {
	id, name string
	// clockFile is the host's path of the container's clock offset file
	// (its LOCKTORTURE_CLOCK_FILE, bind-mounted), "" when it runs without
	// the shim or the file is not this machine's to map.
	clockFile string
}

// clock reports whether every container runs the clock shim with an
// offset file this process can map.
func (a *adoption) clock() bool {
	for _, c := range a.containers {
		if c.clockFile == "" {
			return false
		}
	}
	return len(a.containers) > 0
}

// adopt finds, for every address, the container of this machine's Docker
// engine it is an address of. It returns nil, and no error, when no engine
// answers or some address is no container's (nodes on other machines).
func adopt(ctx context.Context, addrs []string) (*adoption, error) {
	ctx, cancel := context.WithTimeout(ctx, adoptTimeout)
	defer cancel()
	var ips []netip.Addr
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return nil, nil
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || ip.IsLoopback() {
			return nil, nil // a name, or a port published on this host: not found by address
		}
		ips = append(ips, ip)
	}
	b, err := newDockerBackend(ctx, "")
	if err != nil {
		return nil, nil
	}
	found, err := b.findByAddress(ctx, ips)
	if err != nil || found == nil {
		b.cli.Close()
		return nil, err
	}
	return &adoption{b: b, containers: found}, nil
}

// findByAddress returns, for each ip, the container with that address on
// one of its networks, or nil when some ip has none.
func (b *dockerBackend) findByAddress(ctx context.Context, ips []netip.Addr) ([]adopted, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return nil, fmt.Errorf("cluster: docker: list containers: %w", err)
	}
	out := make([]adopted, len(ips))
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
		out[i] = adopted{id: match.ID, name: name, clockFile: hostClockFile(in.Container)}
	}
	return out, nil
}

// hostClockFile is the host's path of a container's clock offset file:
// the container preloads the clock shim, names its file
// (LOCKTORTURE_CLOCK_FILE), and that file is in a bind mount of a folder
// of this machine, at least 8 bytes long. "" otherwise.
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

// adoptedRunner runs nothing: it drives the container of a node someone
// else runs.
type adoptedRunner struct {
	n       *Node
	b       *dockerBackend
	address string
	c       adopted
}

var _ runner = (*adoptedRunner)(nil)

func (r *adoptedRunner) addr() string { return r.address }

// start attaches to the container (fresh: the node's first run, when it
// is running already) or starts it again.
func (r *adoptedRunner) start(ctx context.Context, fresh bool) (run, error) {
	if fresh {
		in, err := r.b.cli.ContainerInspect(ctx, r.c.id, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("cluster: docker inspect %s: %w", r.c.name, err)
		}
		if st := in.Container.State; st != nil && st.Running {
			if st.Paused {
				// Left paused by a run that died: thaw it.
				if _, err := r.b.cli.ContainerUnpause(ctx, r.c.id, client.ContainerUnpauseOptions{}); err != nil {
					return nil, fmt.Errorf("cluster: docker unpause %s: %w", r.c.name, err)
				}
			}
			return &adoptedRun{r.b.watch(r.c.id)}, nil
		}
	}
	if _, err := r.b.cli.ContainerStart(ctx, r.c.id, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("cluster: docker start %s: %w", r.c.name, err)
	}
	return &adoptedRun{r.b.watch(r.c.id)}, nil
}

// release starts the container again if a fault left it down: the
// cluster leaves the nodes as it found them.
func (r *adoptedRunner) release(ctx context.Context) error {
	in, err := r.b.cli.ContainerInspect(ctx, r.c.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("cluster: docker inspect %s: %w", r.c.name, err)
	}
	if st := in.Container.State; st != nil && !st.Running {
		if _, err := r.b.cli.ContainerStart(ctx, r.c.id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("cluster: docker start %s: %w", r.c.name, err)
		}
	}
	return nil
}

// adoptedRun is one run of an adopted container: a container run that
// Close leaves running.
type adoptedRun struct{ *containerRun }

// stop thaws the container if paused and stops watching it; it leaves it
// running.
func (a *adoptedRun) stop(ctx context.Context, _ time.Duration, paused bool) error {
	defer a.cancel()
	if paused {
		return a.resume(ctx)
	}
	return nil
}

// openAdoptedClock maps the node's clock offset file, the container's,
// without truncating it (the running shim maps it too) and sets it to 0.
func (n *Node) openAdoptedClock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cluster: %s: clock offset file: %w", n.name, err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("cluster: %s: map %s: %w", n.name, path, err)
	}
	n.clock = &clockFile{path: path, mem: mem}
	n.clock.store(0)
	return nil
}

// adoptedAbilities is what a cluster of s can do to external nodes that
// are containers of this machine: kill, restart and pause them, and
// shift their clocks when every container runs the shim. It looks for
// them (adopt), and says nothing of nodes that are not.
func adoptedAbilities(s Spec) (process, clock bool) {
	if s.backend() != BackendExternal {
		return false, false
	}
	a, err := adopt(context.Background(), s.External)
	if err != nil || a == nil {
		return false, false
	}
	defer a.b.cli.Close()
	return true, a.clock()
}

// errNotAdopted explains a refused clock shim on external nodes.
var errNotAdopted = errors.New("cluster: external nodes: the clock shim needs nodes that are containers of this machine's Docker engine, each running the shim with its offset file bind-mounted from this machine (deploy/compose does)")
