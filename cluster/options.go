package cluster

import "io"

// Option configures Open and the constructors of each backend (Start,
// StartDocker, Connect, StartFailover, StartDockerFailover).
type Option func(*options)

type options struct {
	redisServer string
	persistence bool
	fsyncAlways bool
	dir         string
	keepLogs    bool
	extraArgs   []string
	proxyGroups int  // see WithProxyGroups
	clockShim   bool // see WithClockShim
	lazyFS      bool // see WithLazyFS
	password    string
	passwordSet bool
	toxiproxy   string    // see WithToxiproxy
	log         io.Writer // see WithLog
	// clusterNode gives node i's own settings before it first starts
	// (the cluster topology's; see StartRedisCluster).
	clusterNode func(i int) ([][2]string, error)
}

// WithPassword sets the nodes' password: the requirepass that Start and
// StartDocker give the nodes, the one Connect authenticates with. The
// default is a random 32-hex-character password for the nodes the cluster
// runs, and none for external nodes.
func WithPassword(p string) Option {
	return func(o *options) { o.password, o.passwordSet = p, true }
}

// WithRedisServer sets the redis-server binary, a path or a name looked up in
// PATH. The default is "redis-server" looked up in PATH.
func WithRedisServer(path string) Option {
	return func(o *options) { o.redisServer = path }
}

// WithPersistence turns on the append-only file, kept in each node's
// directory, so data survives Kill and Restart: appendfsync is "always" if
// appendfsyncAlways, else "everysec" (a kill may lose the last second). RDB
// snapshots stay off. The default is no persistence at all (save "",
// appendonly no): a restarted node comes back empty.
func WithPersistence(appendfsyncAlways bool) Option {
	return func(o *options) { o.persistence, o.fsyncAlways = true, appendfsyncAlways }
}

// WithDir sets the directory holding one sub-directory per node ("n1", ...)
// with its log (redis.log, or etcd.log for an etcd member) and data. It is created if missing (mode 0700) and
// never removed;
// data left there by an earlier run with persistence is loaded. The default
// is a fresh os.MkdirTemp directory, removed on Close unless WithKeepLogs.
func WithDir(dir string) Option {
	return func(o *options) { o.dir = dir }
}

// WithKeepLogs keeps the default temporary directory, logs included, after
// Close. The default is false. A directory given by WithDir is always kept.
func WithKeepLogs(keep bool) Option {
	return func(o *options) { o.keepLogs = keep }
}

// WithExtraArgs appends arguments to every node's redis-server command line,
// after its configuration file, so they win (e.g. "--maxmemory", "10mb").
// Every local user can read a command line: put no secret there. The
// default is none.
func WithExtraArgs(args ...string) Option {
	return func(o *options) { o.extraArgs = append(o.extraArgs, args...) }
}
