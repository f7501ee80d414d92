package cluster

import (
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
	// TopologyMasters: independent nodes.
	TopologyMasters = "masters"
	// TopologyFailover: a primary, its asynchronous replica and three
	// sentinels (see Failover).
	TopologyFailover = "failover"
	// TopologyCluster: Redis Cluster, masters each with one replica, the
	// slots spread over the masters (see RedisCluster); process backend.
	TopologyCluster = "cluster"
)

// The fsync policies of persistent nodes, as Spec.Appendfsync names them.
const (
	AppendfsyncAlways   = "always"
	AppendfsyncEverysec = "everysec"
)

// Spec says which cluster Open opens: on which backend its nodes run, in
// which topology, how many, and the few settings a user chooses. How Open
// runs it (the folder, the proxy groups, the clock shim, where a docker
// image build is logged) is given as Options. A run's configuration
// embeds it (harness.Config), so its JSON names are those of results.json.
type Spec struct {
	// Nodes is the number of data nodes: of independent masters (default
	// 1), 2 in the failover topology (a primary and its replica), or the
	// number of External addresses (its default).
	Nodes int `json:"nodes"`
	// Backend runs the nodes: BackendProcess (redis-server processes on
	// this host; the default), BackendDocker (one container per node, from
	// Image) or BackendExternal (nodes someone else runs, at External).
	Backend string `json:"backend"`
	// Image is the docker backend's image. Default DefaultImage, which Open
	// builds when the engine lacks it (make redis-image does the same);
	// any other image must be there.
	Image string `json:"image,omitempty"`
	// External lists the external backend's nodes, host:port each, in node
	// order. Only these addresses and Toxiproxy are ever contacted.
	External []string `json:"external,omitempty"`
	// Toxiproxy is the URL of the HTTP API of a toxiproxy server through
	// which the external backend's clients reach the nodes (e.g.
	// http://10.0.0.5:8474; see WithToxiproxy); none by default, and then
	// no network fault can act on them.
	Toxiproxy string `json:"toxiproxy,omitempty"`
	// Topology is TopologyMasters (the default), TopologyFailover
	// (process or docker backend) or TopologyCluster (process backend;
	// Nodes counts masters and replicas, default 6).
	Topology string `json:"topology,omitempty"`
	// Persistence runs the nodes with the append-only file, so a killed
	// node keeps its data (WithPersistence); not for external nodes.
	Persistence bool `json:"persistence,omitempty"`
	// Appendfsync is when a persistent node fsyncs its append-only file:
	// AppendfsyncAlways (before each reply; the default with
	// Persistence) or AppendfsyncEverysec (once a second, Redis's own
	// default: a kill may lose the writes of the last second). Setting it
	// sets Persistence.
	Appendfsync string `json:"appendfsync,omitempty"`
	// Server is what the nodes run: ServerRedis (the default) or
	// ServerEtcd, etcd members on the process backend in the masters
	// topology, one Raft group (see StartEtcd).
	Server string `json:"server,omitempty"`
	// Password is the nodes' password (requirepass): the external nodes'
	// own, or the one the other backends give their nodes instead of a
	// random one (see WithPassword). It is never on a command line, and
	// never in JSON.
	Password string `json:"-"`
}

// WithDefaults returns s with its zero fields set to their defaults, or an
// error naming the first field that does not fit s's backend or topology.
func (s Spec) WithDefaults() (Spec, error) {
	if s.Backend == "" {
		s.Backend = BackendProcess
	}
	if s.Topology == "" {
		s.Topology = TopologyMasters
	}
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
		if s.Nodes == 0 {
			s.Nodes = 2 * DefaultMasters
		}
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
		if s.Image == "" {
			s.Image = DefaultImage
		}
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
	if s.Nodes == 0 {
		s.Nodes = 1
	}
	if s.Nodes < 1 {
		return s, fmt.Errorf("cluster: nodes must be at least 1, got %d", s.Nodes)
	}
	return s, nil
}

// Abilities are what a cluster can do to its nodes besides serving them:
// what fault kinds act through (nemesis.Needs).
type Abilities struct {
	// Process: kill, restart, pause and resume nodes (Node.Kill, Restart,
	// Pause, Resume): the cluster runs them.
	Process bool
	// Clock: shift a node's wall clock (Node.SetClockOffset): the nodes run
	// with the clock shim (WithClockShim).
	Clock bool
	// Network: cut and slow the clients' links to the nodes (Node.GroupLink):
	// every node is behind proxies.
	Network bool
	// PowerLoss: drop what a node wrote but did not fsync
	// (Node.DropUnsynced): its data folder is on lazyfs (WithLazyFS).
	PowerLoss bool
	// Links: cut and slow the links between nodes: the replication link
	// of the failover topology on the process backend
	// (Failover.ReplicationLink).
	Links bool
	// Redis: the nodes are Redis servers, which a kind sends Redis
	// commands to (DEBUG SLEEP, CONFIG SET, ...). Needed by such kinds;
	// missing only from a cluster of etcd members.
	Redis bool

	backend string // for Missing's reasons; "" for Abilities made by hand
	etcd    bool   // the nodes are etcd members, for Missing's reasons
}

// RunsNodes reports whether a cluster of s starts and runs its nodes, each
// behind proxies in this process (the process and docker backends), rather
// than reaching nodes someone else runs (the external backend).
func (s Spec) RunsNodes() bool { return s.backend() != BackendExternal }

// NodesFixed reports whether s's topology or backend fixes its number of
// nodes (the failover topology's two, the cluster topology's six by
// default, the external backend's addresses),
// so that a zero Nodes takes that number rather than a caller's default.
func (s Spec) NodesFixed() bool {
	return s.Topology == TopologyFailover || s.Topology == TopologyCluster || len(s.External) > 0
}

// Abilities returns what a cluster of s can be opened to do: Clock when it
// is opened WithClockShim (on the docker backend, the image must also carry
// the shim, which Open checks), Network unless its nodes are external ones
// reached without a toxiproxy server, Process unless they are external.
// External nodes that are all containers of this machine's Docker engine
// (the compose cluster's) are adopted: Process, and Clock when every
// container runs the clock shim with its offset file bind-mounted from
// this machine; finding that out asks the engine.
//
// PowerLoss on the process backend, opened WithLazyFS; whether this
// machine mounts FUSE is found out only when a kind needs it (Missing
// mounts one lazyfs, once per process).
func (s Spec) Abilities() Abilities {
	runs := s.RunsNodes()
	links := s.backend() == BackendProcess && s.Topology == TopologyFailover
	process, clock := runs, runs
	if !runs {
		process, clock = adoptedAbilities(s)
	}
	if s.Server == ServerEtcd {
		return Abilities{Process: true, Network: true, backend: BackendProcess, etcd: true}
	}
	return Abilities{Process: process, Clock: clock, Network: runs || s.Toxiproxy != "", PowerLoss: s.backend() == BackendProcess, Links: links, Redis: true, backend: s.backend()}
}

// Abilities returns what the cluster can do: see Spec.Abilities; Clock only
// when it was started WithClockShim.
func (c *Cluster) Abilities() Abilities {
	ext := c.backend == BackendExternal && c.adopted == nil
	c.mu.Lock()
	links := c.failover != nil && len(c.failover.repl) > 0
	c.mu.Unlock()
	if c.server == ServerEtcd {
		return Abilities{Process: true, Network: true, backend: BackendProcess, etcd: true}
	}
	return Abilities{Process: !ext, Clock: c.opts.clockShim && !ext, Network: c.backend != BackendExternal || c.remote != nil, PowerLoss: c.opts.lazyFS && c.backend == BackendProcess, Links: links, Redis: true, backend: c.backend}
}

func (s Spec) backend() string {
	if s.Backend == "" {
		return BackendProcess
	}
	return s.Backend
}

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

// Open opens the cluster s describes, its defaults set (see WithDefaults),
// with opts as for Start (WithDir, WithProxyGroups, WithClockShim,
// WithLog, ...; s's Password and Persistence are options too): it starts
// independent masters (Start, StartDocker) or the failover topology
// (StartFailover, StartDockerFailover, whose Cluster.Failover it returns
// the data nodes of), or connects to external nodes (Connect). For the
// docker backend it first makes sure the engine has the image, building
// DefaultImage when it lacks it (see WithLog). Close stops everything it
// started, sentinels included.
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

// Failover returns the failover topology whose data nodes the cluster
// holds, when it was opened in it; nil otherwise.
func (c *Cluster) Failover() *Failover { return c.failover }

// WithLog has Open write to w, one line each, what it does besides
// starting the nodes that takes long enough to be worth saying (building
// the docker backend's default image). The default is nothing.
func WithLog(w io.Writer) Option {
	return func(o *options) { o.log = w }
}

// StaleRemover is the optional ability of a ContainerEngine to remove,
// before a cluster opens, the containers and networks that a process of
// this host left when it died without closing its cluster (its owner
// mark names a process that has ended), and to name them.
type StaleRemover interface {
	RemoveStale(ctx context.Context) ([]string, error)
}

// removeLeftovers removes what an earlier process, killed before it could
// clean up, left of the kind of cluster s is (the FUSE mounts of its
// nodes' disks, WithLazyFS; the containers of the docker backend), each
// known by the owner mark that names the dead process, and says what it
// removed, one line, on the cluster's log (WithLog). A process that dies
// kills its nodes' processes itself (they die with it); a mount or a
// container outlives it.
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
