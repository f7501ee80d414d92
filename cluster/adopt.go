package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Connect adopts external nodes that are containers of this machine's
// engine, found by address (the package doc says what that allows); Close
// leaves them as found. Every node is adopted or none: faults reaching
// only some would test something else than they say.

// adoptTimeout bounds the look for the containers.
const adoptTimeout = 5 * time.Second

// adoption is what Connect learned of external nodes that are containers.
type adoption struct {
	b          Adopted            // the engine's; it runs nothing of its own
	containers []AdoptedContainer // by node index
}

// clock reports whether every container has a ClockFile.
func (a *adoption) clock() bool {
	for _, c := range a.containers {
		if c.ClockFile == "" {
			return false
		}
	}
	return len(a.containers) > 0
}

// adopt finds each address's container; nil and no error when no engine
// answers or some address is no container's.
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
	e, err := containerEngine()
	if err != nil {
		return nil, nil // built without the docker backend: no container is ours to drive
	}
	b, err := e.Adopt(ctx, ips)
	if err != nil || b == nil {
		return nil, err
	}
	return &adoption{b: b, containers: b.Containers()}, nil
}

// adoptedRunner runs nothing: it drives the container of a node someone
// else runs.
type adoptedRunner struct {
	n       *Node
	b       Adopted
	address string
	c       AdoptedContainer
}

var _ runner = (*adoptedRunner)(nil)

func (r *adoptedRunner) addr() string { return r.address }

// start attaches to the container (fresh, when it runs) or starts it.
func (r *adoptedRunner) start(ctx context.Context, fresh bool) (run, error) {
	if fresh {
		running, paused, err := r.b.State(ctx, r.c.ID)
		if err != nil {
			return nil, fmt.Errorf("cluster: docker inspect %s: %w", r.c.Name, err)
		}
		if running {
			if paused {
				// Left paused by a run that died: thaw it.
				if err := r.b.Unpause(ctx, r.c.ID); err != nil {
					return nil, fmt.Errorf("cluster: docker unpause %s: %w", r.c.Name, err)
				}
			}
			return r.b.Watch(r.c.ID), nil
		}
	}
	if err := r.b.Start(ctx, r.c.ID); err != nil {
		return nil, fmt.Errorf("cluster: docker start %s: %w", r.c.Name, err)
	}
	return r.b.Watch(r.c.ID), nil
}

// release starts the container again if a fault left it down.
func (r *adoptedRunner) release(ctx context.Context) error {
	running, _, err := r.b.State(ctx, r.c.ID)
	if err != nil {
		return fmt.Errorf("cluster: docker inspect %s: %w", r.c.Name, err)
	}
	if !running {
		if err := r.b.Start(ctx, r.c.ID); err != nil {
			return fmt.Errorf("cluster: docker start %s: %w", r.c.Name, err)
		}
	}
	return nil
}

// openAdoptedClock maps the container's offset file and sets it to 0.
func (n *Node) openAdoptedClock(path string) error {
	f, err := mapClock(path, false)
	if err != nil {
		return fmt.Errorf("cluster: %s: clock offset file: %w", n.name, err)
	}
	n.clock = f
	n.clock.store(0)
	return nil
}

// adoptedAbilities is Spec.Abilities' Process and Clock for external
// nodes: found by adopt.
func adoptedAbilities(s Spec) (process, clock bool) {
	if s.backend() != BackendExternal {
		return false, false
	}
	a, err := adopt(context.Background(), s.External)
	if err != nil || a == nil {
		return false, false
	}
	defer a.b.Close()
	return true, a.clock()
}

// errNotAdopted explains a refused clock shim on external nodes.
var errNotAdopted = errors.New("cluster: external nodes: the clock shim needs nodes that are containers of this machine's Docker engine, each running the shim with its offset file bind-mounted from this machine (deploy/compose does)")
