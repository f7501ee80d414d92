package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/locktorture/locktorture/internal/lazyfs"
)

// The topologies, as Spec.Topology names them.
const (
	TopologyMasters  = "masters"  // independent nodes
	TopologyFailover = "failover" // see Failover
	TopologyCluster  = "cluster"  // see RedisCluster
)

// The fsync policies of persistent nodes, as Spec.Appendfsync names them.
const (
	AppendfsyncAlways   = "always"
	AppendfsyncEverysec = "everysec"
)

// Spec says which cluster Open opens: backend, topology, how many nodes
// and the few settings a user chooses; how Open runs it is given as
// Options. harness.Config embeds it: its JSON names are results.json's.
type Spec struct {
	// Nodes is the number of data nodes: default 1, 2 in the failover
	// topology, 6 in the cluster one, the number of External addresses.
	Nodes int `json:"nodes"`
	// Backend is BackendProcess (the default), BackendDocker (from
	// Image) or BackendExternal (at External).
	Backend string `json:"backend"`
	// Image is the docker backend's: DefaultImage, which Open builds when
	// the engine lacks it; any other must be there.
	Image    string   `json:"image,omitempty"`
	External []string `json:"external,omitempty"` // host:port, in node order
	// Toxiproxy is the API URL of the toxiproxy server the external
	// nodes are reached through (WithToxiproxy); without one no network
	// fault can act on them.
	Toxiproxy string `json:"toxiproxy,omitempty"`
	// Topology is TopologyMasters (the default), TopologyFailover
	// (process or docker) or TopologyCluster (process).
	Topology    string `json:"topology,omitempty"`
	Persistence bool   `json:"persistence,omitempty"` // WithPersistence; not external
	// Appendfsync is AppendfsyncAlways (before each reply; the default
	// with Persistence) or AppendfsyncEverysec (Redis's default: a kill
	// may lose the last second). Setting it sets Persistence.
	Appendfsync string `json:"appendfsync,omitempty"`
	Server      string `json:"server,omitempty"` // ServerRedis (the default) or ServerEtcd
	// Password is the nodes' requirepass: the external nodes' own, or the
	// one given the nodes instead of a random one (WithPassword). Never
	// on a command line, never in JSON.
	Password string `json:"-"`
}

// WithDefaults returns s with its zero fields set to their defaults, or an
// error naming the first field that does not fit s's backend or topology.
func (s Spec) WithDefaults() (Spec, error) {
	s.Backend = cmp.Or(s.Backend, BackendProcess)
	s.Topology = cmp.Or(s.Topology, TopologyMasters)
	switch s.Server {
	case "", ServerRedis:
		s.Server = ""
	case ServerEtcd:
		switch {
		case s.Backend != BackendProcess:
			return s, fmt.Errorf("cluster: etcd members run on the process backend only, not %s", s.Backend)
		case s.Topology != TopologyMasters:
			return s, fmt.Errorf("cluster: etcd members are one Raft group; topology %s is Redis's", s.Topology)
		case s.Persistence || s.Appendfsync != "":
			return s, errors.New("cluster: etcd members always write their log to disk; persistence and appendfsync are Redis's")
		}
	default:
		return s, fmt.Errorf("cluster: unknown server %q (want %s or %s)", s.Server, ServerRedis, ServerEtcd)
	}
	switch s.Backend {
	case BackendProcess, BackendDocker, BackendExternal:
	default:
		return s, fmt.Errorf("cluster: unknown backend %q (want process, docker or external)", s.Backend)
	}
	switch {
	case s.Image != "" && s.Backend != BackendDocker:
		return s, errors.New("cluster: an image is for the docker backend")
	case (len(s.External) > 0 || s.Toxiproxy != "") && s.Backend != BackendExternal:
		return s, errors.New("cluster: external nodes and a toxiproxy server are for the external backend")
	}
	switch s.Topology {
	case TopologyMasters:
	case TopologyFailover:
		if s.Backend == BackendExternal {
			return s, errors.New("cluster: topology failover needs nodes and sentinels the cluster starts, not the external backend's")
		}
		if s.Nodes != 0 && s.Nodes != 2 {
			return s, fmt.Errorf("cluster: topology failover has 2 data nodes (a primary and a replica), not %d", s.Nodes)
		}
		s.Nodes = 2
	case TopologyCluster:
		if s.Backend != BackendProcess {
			return s, fmt.Errorf("cluster: topology cluster runs on the process backend only, not %s (its nodes' fronts tell the nodes apart by their loopback source addresses)", s.Backend)
		}
		s.Nodes = cmp.Or(s.Nodes, 2*DefaultMasters)
		if s.Nodes < 2 || s.Nodes%2 != 0 {
			return s, fmt.Errorf("cluster: topology cluster has a replica per master, so an even number of nodes (at least 2), not %d", s.Nodes)
		}
	default:
		return s, fmt.Errorf("cluster: unknown topology %q (want %s, %s or %s)", s.Topology, TopologyMasters, TopologyFailover, TopologyCluster)
	}
	switch s.Appendfsync {
	case "":
		if s.Persistence {
			s.Appendfsync = AppendfsyncAlways
		}
	case AppendfsyncAlways, AppendfsyncEverysec:
		s.Persistence = true
	default:
		return s, fmt.Errorf("cluster: unknown appendfsync %q (want %s or %s)", s.Appendfsync, AppendfsyncAlways, AppendfsyncEverysec)
	}
	switch s.Backend {
	case BackendDocker:
		s.Image = cmp.Or(s.Image, DefaultImage)
	case BackendExternal:
		switch {
		case len(s.External) == 0:
			return s, errors.New("cluster: the external backend needs its nodes, host:port each")
		case s.Persistence:
			return s, errors.New("cluster: persistence is set by whoever runs the external nodes")
		case s.Nodes == 0:
			s.Nodes = len(s.External)
		case s.Nodes != len(s.External):
			return s, fmt.Errorf("cluster: %d nodes, but %d external addresses", s.Nodes, len(s.External))
		}
		for _, a := range s.External {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return s, fmt.Errorf("cluster: external node %q: want host:port: %w", a, err)
			}
		}
	}
	s.Nodes = cmp.Or(s.Nodes, 1)
	if s.Nodes < 1 {
		return s, fmt.Errorf("cluster: nodes must be at least 1, got %d", s.Nodes)
	}
	return s, nil
}

// Abilities are what a cluster can do to its nodes besides serving them,
// which fault kinds need (nemesis.Needs).
type Abilities struct {
	Process   bool // Node.Kill, Restart, Pause, Resume: the cluster runs them
	Clock     bool // Node.SetClockOffset: WithClockShim
	Network   bool // Node.GroupLink: every node is behind proxies
	PowerLoss bool // Node.DropUnsynced: WithLazyFS
	Links     bool // Failover.ReplicationLink: the failover topology, process backend
	Redis     bool // the nodes take Redis commands (DEBUG SLEEP, ...): not etcd members

	backend string // for Missing's reasons; "" for Abilities made by hand
	etcd    bool   // the nodes are etcd members, for Missing's reasons
}

// RunsNodes reports whether a cluster of s runs its nodes, behind proxies
// in this process (not the external backend).
func (s Spec) RunsNodes() bool { return s.backend() != BackendExternal }

// NodesFixed reports whether s's topology or backend fixes its number of
// nodes, so that a zero Nodes takes it rather than a caller's default.
func (s Spec) NodesFixed() bool {
	return s.Topology == TopologyFailover || s.Topology == TopologyCluster || len(s.External) > 0
}

// Abilities returns what a cluster of s can be opened to do (Clock
// WithClockShim, PowerLoss WithLazyFS). External nodes that are adopted
// containers (adopt.go; this asks the engine) have Process, and Clock when
// they all run the shim. Whether this machine mounts FUSE is found out
// only when a kind needs it (Missing).
func (s Spec) Abilities() Abilities {
	runs := s.RunsNodes()
	links := s.backend() == BackendProcess && s.Topology == TopologyFailover
	process, clock := runs, runs
	if !runs {
		process, clock = adoptedAbilities(s)
	}
	if s.Server == ServerEtcd {
		return etcdAbilities
	}
	return Abilities{Process: process, Clock: clock, Network: runs || s.Toxiproxy != "", PowerLoss: s.backend() == BackendProcess, Links: links, Redis: true, backend: s.backend()}
}

// Abilities returns what the cluster can do (see Spec.Abilities).
func (c *Cluster) Abilities() Abilities {
	ext := c.backend == BackendExternal && c.adopted == nil
	c.mu.Lock()
	links := c.failover != nil && len(c.failover.repl) > 0
	c.mu.Unlock()
	if c.server == ServerEtcd {
		return etcdAbilities
	}
	return Abilities{Process: !ext, Clock: c.opts.clockShim && !ext, Network: c.backend != BackendExternal || c.remote != nil, PowerLoss: c.opts.lazyFS && c.backend == BackendProcess, Links: links, Redis: true, backend: c.backend}
}

// etcdAbilities are a cluster of etcd members': no Clock (a Go program
// reads its clock through the vDSO, out of the shim's reach), no
// PowerLoss, no Redis.
var etcdAbilities = Abilities{Process: true, Network: true, backend: BackendProcess, etcd: true}

func (s Spec) backend() string { return cmp.Or(s.Backend, BackendProcess) }

// Missing returns, in one line, why a cluster with a cannot do everything
// need asks (the first ability missing), or "" when it can.
func (a Abilities) Missing(need Abilities) string {
	ext := a.backend == BackendExternal
	switch {
	case a.etcd && need.Clock:
		return "the nodes are etcd members, Go programs that read their clocks through the vDSO, not libc, so the LD_PRELOAD clock shim cannot reach them; and etcd times leases and elections on the monotonic clock, which a wall-clock fault does not move"
	case a.etcd && need.PowerLoss:
		return "the nodes are etcd members, which fsync their log before they answer: the power-loss kinds drop what a Redis node did not fsync"
	case a.etcd && need.Links:
		return "the nodes are etcd members: their links are cut by partition (CutPeers), not by the failover topology's replication link"
	case a.etcd && need.Redis:
		return "the nodes are etcd members: the kind sends Redis commands"
	case need.Process && !a.Process && ext:
		return "the external backend does not run the nodes, so it cannot kill, restart or pause them (the process and docker backends do, and so does the external backend when its nodes are containers of this machine's Docker engine, as the compose cluster's)"
	case need.Process && !a.Process:
		return "the cluster cannot kill, restart or pause its nodes"
	case need.Clock && !a.Clock && ext:
		return "the external backend does not run the nodes, so it cannot shift their clocks (the process and docker backends do, and so does the external backend when its nodes are containers of this machine running the clock shim with their offset files bind-mounted, as the compose cluster's)"
	case need.Clock && !a.Clock:
		return "the nodes run without the clock shim, so their clocks cannot be shifted"
	case need.Network && !a.Network && ext:
		return "the external backend reaches the nodes through no proxy; give it a toxiproxy server to fault the network"
	case need.Network && !a.Network:
		return "the nodes are reached through no proxy, so their network cannot be faulted"
	case need.PowerLoss && !a.PowerLoss && a.backend != "" && a.backend != BackendProcess:
		return lazyFSWhy(a.backend)
	case need.PowerLoss && !a.PowerLoss:
		return "the nodes' data folders are not on lazyfs, so their unsynced writes cannot be dropped"
	case need.PowerLoss && a.backend == BackendProcess && lazyFSWhy(a.backend) != "":
		return lazyFSWhy(a.backend)
	case need.Links && !a.Links:
		return "the links between nodes have proxies of their own only in the failover topology on the process backend (the replication link)"
	}
	return ""
}

// Open opens the cluster s describes (WithDefaults) with opts, s's
// Password and Persistence among them, by its backend and topology's
// constructor, building DefaultImage first if the engine lacks it.
func Open(ctx context.Context, s Spec, opts ...Option) (*Cluster, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	if s.Password != "" {
		opts = append(opts, WithPassword(s.Password))
	}
	if s.Persistence {
		opts = append(opts, WithPersistence(s.Appendfsync != AppendfsyncEverysec))
	}
	if s.Backend == BackendDocker {
		o, err := newOptions(s.Nodes, opts)
		if err != nil {
			return nil, err
		}
		if err := ensureImage(ctx, s.Image, DefaultImage, o.log, opts); err != nil {
			return nil, err
		}
	}
	if err := removeLeftovers(ctx, s, opts); err != nil {
		return nil, err
	}
	switch {
	case s.Topology == TopologyFailover && s.Backend == BackendDocker:
		f, err := StartDockerFailover(ctx, s.Image, opts...)
		return failoverCluster(f, err)
	case s.Topology == TopologyFailover:
		f, err := StartFailover(ctx, opts...)
		return failoverCluster(f, err)
	case s.Topology == TopologyCluster:
		rc, err := StartRedisCluster(ctx, s.Nodes/2, opts...)
		if err != nil {
			return nil, err
		}
		return rc.Cluster(), nil
	case s.Server == ServerEtcd:
		return StartEtcd(ctx, s.Nodes, opts...)
	case s.Backend == BackendDocker:
		return StartDocker(ctx, s.Nodes, s.Image, opts...)
	case s.Backend == BackendExternal:
		if s.Toxiproxy != "" {
			opts = append(opts, WithToxiproxy(s.Toxiproxy))
		}
		return Connect(ctx, s.External, opts...)
	}
	return Start(ctx, s.Nodes, opts...)
}

func failoverCluster(f *Failover, err error) (*Cluster, error) {
	if err != nil {
		return nil, err
	}
	return f.Cluster(), nil
}

// Failover returns the cluster's failover topology, or nil.
func (c *Cluster) Failover() *Failover { return c.failover }

// WithLog has Open write to w, one line each, what takes long besides
// starting the nodes (building the default image). Default: nothing.
func WithLog(w io.Writer) Option {
	return func(o *options) { o.log = w }
}

// StaleRemover is the optional ability of a ContainerEngine to remove, and
// name, the containers and networks a dead process of this host left.
type StaleRemover interface {
	RemoveStale(ctx context.Context) ([]string, error)
}

// removeLeftovers removes, and logs, the lazyfs mounts and containers a
// killed process left (its nodes' processes die with it), known by owner
// marks naming it.
func removeLeftovers(ctx context.Context, s Spec, opts []Option) error {
	o, err := newOptions(s.Nodes, opts)
	if err != nil {
		return err
	}
	var gone []string
	if o.lazyFS {
		mounts, err := lazyfs.RemoveStale()
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		for _, m := range mounts {
			gone = append(gone, "the FUSE mount "+m)
		}
	}
	if s.Backend == BackendDocker {
		e, err := containerEngine()
		if err != nil {
			return err
		}
		if r, ok := e.(StaleRemover); ok {
			names, err := r.RemoveStale(ctx)
			if err != nil {
				return err
			}
			for _, n := range names {
				gone = append(gone, "the container or network "+n)
			}
		}
	}
	if len(gone) > 0 && o.log != nil {
		fmt.Fprintf(o.log, "removed what an earlier run, killed before it could clean up, left behind: %s\n", strings.Join(gone, ", "))
	}
	return nil
}
